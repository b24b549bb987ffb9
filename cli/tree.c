/* The process tree of a recording: the other multithreaded processes
 * recorded alone, and DIR/tree.json (docs/process-tree.md). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "tree.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "tracer/record.h"

#define MAX_PATH 16 /* forks from an exec'd ancestor (tracer_opts.fork_path) */

/* How process i is started again alone: the index of its nearest exec'd
 * ancestor (itself if it exec'd; 0, the recorded command, at the top) and
 * the fork numbers down from there.  -1 if the path is too long. */
static int start_of(const struct tracer_proc *p, size_t i, unsigned *path, size_t *npath)
{
	unsigned rev[MAX_PATH];
	size_t n = 0;
	size_t j = i;
	while (j != 0 && !p[j].execd) {
		if (n == MAX_PATH)
			return -1;
		rev[n++] = p[j].ordinal;
		j = (size_t)p[j].parent;
	}
	for (size_t k = 0; k < n; k++)
		path[k] = rev[n - 1 - k];
	*npath = n;
	return (int)j;
}

static const char *how_of(const struct tracer_proc *p)
{
	return p->parent < 0 ? "root" : p->execd ? "exec" : p->vfork ? "vfork" : "fork";
}

/* "./bank 2": a process's command for people, at most len bytes. */
static void say_argv(char *const *argv, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; argv && argv[i] && off + 1 < len; i++) {
		int k = snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
		if (k < 0)
			break;
		off += (size_t)k;
	}
	if (off >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* Records process i alone into dir; its exit status as record_run's. */
static int record_one(const struct record_opts *o, const struct tracer_proc *p, size_t i, const char *dir,
		      tree_recorder record)
{
	unsigned path[MAX_PATH];
	size_t npath;
	int base = start_of(p, i, path, &npath);
	if (base < 0) {
		avt_warn("process %zu: more than %d forks from its last exec: not recorded", i, MAX_PATH);
		return EXIT_USAGE;
	}
	struct record_opts c = *o;
	c.dir = dir;
	c.force = false;
	c.tree = false;
	c.keep_stdin = false; /* the program's stdin was its parent's */
	c.fork_path = npath ? path : NULL;
	c.nfork_path = npath;
	if (npath) /* its ancestors share its memory map, never its agent */
		c.agent_lib = NULL;
	char *argv0 = NULL;
	if (base) {
		const struct tracer_proc *b = &p[base];
		c.argv = b->argv;
		c.envp = b->env;
		c.cwd = b->cwd;
		/* a bare name was found by its parent's PATH: name the file */
		if (b->argv && b->argv[0] && !strchr(b->argv[0], '/') && b->exe) {
			argv0 = b->argv[0];
			b->argv[0] = b->exe;
		}
	}
	json_t *origin = json_pack("{s:i, s:i, s:s, s:i}", "id", (int)i, "pid", (int)p[i].pid, "how",
				   how_of(&p[i]), "parent", p[i].parent);
	char *text = json_dumps(origin, JSON_COMPACT);
	json_decref(origin);
	c.origin = text;
	char cmd[512];
	say_argv(c.argv, cmd, sizeof cmd);
	if (npath)
		avt_info("avtrace: process %zu (pid %d, forked by %d): recording it alone: %s, fork %u%s", i,
			 (int)p[i].pid, (int)p[p[i].parent].pid, cmd, path[npath - 1], npath > 1 ? " of a fork" : "");
	else
		avt_info("avtrace: process %zu (pid %d, exec'd): recording it alone: %s", i, (int)p[i].pid, cmd);
	int rc = record(&c, NULL);
	if (argv0)
		p[base].argv[0] = argv0;
	free(text);
	return rc;
}

/* A forked process's argv is its exec'd ancestor's (a copy of its
 * memory); the recorded command's at the top. */
static char *const *argv_of(const struct record_opts *o, const struct tracer_proc *p, size_t i)
{
	unsigned path[MAX_PATH];
	size_t npath;
	int base = start_of(p, i, path, &npath);
	if (base < 0)
		return NULL;
	return base ? p[base].argv : o->argv;
}

static json_t *proc_json(const struct record_opts *o, const struct tracer_proc *ps, size_t i,
			 const char *recording)
{
	const struct tracer_proc *p = &ps[i];
	char *const *argv = argv_of(o, ps, i);
	json_t *j = json_object();
	json_object_set_new(j, "id", json_integer((json_int_t)i));
	json_object_set_new(j, "pid", json_integer(p->pid));
	json_object_set_new(j, "parent", p->parent < 0 ? json_null() : json_integer(p->parent));
	json_object_set_new(j, "how", json_string(how_of(p)));
	json_object_set_new(j, "fork", json_integer(p->ordinal));
	json_object_set_new(j, "argv", argv ? strv_json(argv) : json_null());
	json_object_set_new(j, "cwd", p->cwd ? json_string(p->cwd) : json_null());
	json_object_set_new(j, "threads", json_integer(p->max_threads));
	json_object_set_new(j, "exit_status", p->alive ? json_null() : json_integer(p->exit_status));
	json_object_set_new(j, "recording", recording ? json_string(recording) : json_null());
	return j;
}

static int write_tree(const char *dir, json_t *procs)
{
	char path[4200], tmp[4300];
	snprintf(path, sizeof path, "%s/tree.json", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	json_t *doc = json_pack("{s:o}", "processes", procs);
	errno = 0;
	int rc = json_dump_file(doc, tmp, JSON_INDENT(1)) < 0 || rename(tmp, path) < 0 ? -1 : 0;
	json_decref(doc);
	if (rc < 0) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
		remove(tmp);
	}
	return rc;
}

int tree_record_rest(const struct record_opts *o, const struct record_result *res, tree_recorder record)
{
	const struct tracer_proc *p = res->procs;
	if (res->nprocs <= 1)
		return 0; /* one process: no tree to speak of */
	json_t *procs = json_array();
	int made = 0;
	unsigned single = 0;
	for (size_t i = 0; i < res->nprocs; i++) {
		char rel[32] = ".", dir[4200];
		bool rec = i == res->focus;
		if (!rec && p[i].max_threads >= 2) {
			snprintf(rel, sizeof rel, "procs/%04zu", i);
			snprintf(dir, sizeof dir, "%s/procs", o->dir);
			mkdir(dir, 0777);
			snprintf(dir, sizeof dir, "%s/%s", o->dir, rel);
			int rc = record_one(o, p, i, dir, record);
			rec = rc != EXIT_USAGE;
			made += rec;
		}
		single += p[i].max_threads < 2;
		json_array_append_new(procs, proc_json(o, p, i, rec ? rel : NULL));
	}
	avt_info("avtrace: %zu processes: %zu multithreaded, recorded (tree.json); %u single-threaded", res->nprocs,
		 res->nprocs - single, single);
	return write_tree(o->dir, procs) < 0 ? -1 : made;
}

size_t tree_recordings(const char *dir, struct tree_rec **out)
{
	*out = NULL;
	char path[4200], err[512];
	snprintf(path, sizeof path, "%s/tree.json", dir);
	json_t *doc = avt_json_read(path, err, sizeof err);
	json_t *procs = doc ? json_object_get(doc, "processes") : NULL;
	size_t n = 0;
	for (size_t i = 0; json_is_array(procs) && i < json_array_size(procs); i++) {
		json_t *pr = json_array_get(procs, i);
		const char *rec = json_string_value(json_object_get(pr, "recording"));
		if (!rec || !strcmp(rec, ".") || strncmp(rec, "procs/", 6) || strstr(rec, ".."))
			continue;
		struct tree_rec *g = realloc(*out, (n + 1) * sizeof *g);
		if (!g)
			break;
		*out = g;
		snprintf(g[n].dir, sizeof g[n].dir, "%s/%s", dir, rec);
		char cmd[400] = "";
		json_t *argv = json_object_get(pr, "argv");
		size_t k = 0;
		json_t *a;
		json_array_foreach(argv, k, a)
		{
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof cmd - l, "%s%s", k ? " " : "", json_string_value(a) ?: "");
		}
		snprintf(g[n].name, sizeof g[n].name, "process %d (%s, pid %d, %s)",
			 (int)json_integer_value(json_object_get(pr, "id")), cmd[0] ? cmd : "forked",
			 (int)json_integer_value(json_object_get(pr, "pid")),
			 json_string_value(json_object_get(pr, "how")) ?: "?");
		n++;
	}
	json_decref(doc);
	return n;
}

/* Of two processes' statuses, the one the tree ends with: a bug first,
 * then an error, then inconclusive. */
int tree_status(int a, int b)
{
	static const int rank[] = { [0] = 0, [1] = 3, [EXIT_USAGE] = 2, [EXIT_INCONCLUSIVE] = 1 };
	if (a < 0 || a > EXIT_INCONCLUSIVE || b < 0 || b > EXIT_INCONCLUSIVE)
		return a > b ? a : b;
	return rank[a] >= rank[b] ? a : b;
}

int tree_root_threads(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/meta.json", dir);
	json_t *m = json_load_file(path, 0, NULL);
	int n = (int)json_integer_value(json_object_get(m, "threads"));
	json_decref(m);
	return n;
}
