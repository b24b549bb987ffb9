/* avtrace verify: does the interleaving of each reported bug still fail
 * on the rebuilt program?  (docs/verify.md)
 *
 * Here: the files and the symbolizing.  Each bug's old events are read
 * in source terms from DIR/reports/X.events.json (written by 'avtrace
 * test' while the old binary was there, or now from the recording if the
 * binary is unchanged); the new program is recorded once into
 * DIR/verify/rec and described the same way; verify/ matches the two and
 * enacts the plan as a replay of that recording. */
#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "facts.h"
#include "names.h"
#include "replay/replay.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "tracer/elfmod.h"
#include "tracer/record.h"
#include "verify/verify.h"

/* At most this many events of a recording are described. */
#define VERIFY_MAX_DESCRIBED 1000000u
/* A recording of more events describes, beside a report, only those its
 * schedules cover and the pattern's. */
#define VERIFY_DESCRIBE_ALL 50000u

/* VERIFY_DESCRIBE_ALL, or AVTRACE_VERIFY_DESCRIBE_ALL (for the tests of
 * the partial description) */
static size_t describe_all_max(void)
{
	const char *e = getenv("AVTRACE_VERIFY_DESCRIBE_ALL");
	char *end;
	unsigned long v = e && *e ? strtoul(e, &end, 10) : 0;
	return e && *e && !*end ? (size_t)v : VERIFY_DESCRIBE_ALL;
}

/* Which events of a recording a report needs described: per thread, the
 * first cover[k] (NULL: all), and the pattern's. */
struct coverage {
	uint32_t *cover;
	size_t ncover;
};

/* Extends c to thread th's first n events.  -1 if out of memory. */
static int cover_to(struct coverage *c, uint32_t th, uint32_t n)
{
	if (th >= c->ncover) {
		uint32_t *nc = realloc(c->cover, (th + 1) * sizeof *nc);
		if (!nc)
			return -1;
		memset(nc + c->ncover, 0, (th + 1 - c->ncover) * sizeof *nc);
		c->cover = nc;
		c->ncover = th + 1;
	}
	if (n > c->cover[th])
		c->cover[th] = n;
	return 0;
}

/* What schedule path covers, added to c. */
static int cover_schedule(struct coverage *c, const char *path)
{
	char err[512];
	struct schedule *s = access(path, R_OK) == 0 ? schedule_read(path, err, sizeof err) : NULL;
	uint32_t *sum = NULL;
	size_t nsum = 0;
	int rc = 0;
	for (size_t i = 0; s && i < s->nsteps && rc == 0; i++) {
		const struct sched_step *st = &s->steps[i];
		if (st->kind != SCHED_RUN)
			continue;
		if (st->thread >= nsum) {
			uint32_t *n = realloc(sum, (st->thread + 1) * sizeof *n);
			if (!n) {
				rc = -1;
				break;
			}
			memset(n + nsum, 0, (st->thread + 1 - nsum) * sizeof *n);
			sum = n;
			nsum = st->thread + 1;
		}
		sum[st->thread] += st->count;
		rc = cover_to(c, st->thread, sum[st->thread]);
	}
	free(sum);
	schedule_free(s);
	return rc;
}

static bool covered(const struct coverage *c, const struct avt_event *e)
{
	return !c || !c->cover || (e->thread < c->ncover && e->tindex < c->cover[e->thread]);
}

enum { VERIFY_FIXED = 0, VERIFY_FAILS = 1, VERIFY_IMPOSSIBLE = 3 };

static const char verify_help[] =
	"usage: avtrace verify [-d DIR] [options] [-- PROG [ARGS...]]\n"
	"\n"
	"Re-enacts the interleaving of every bug reported in DIR/reports/ (its\n"
	"minimal schedule X.min.sched when there is one) on the rebuilt program\n"
	"(PROG ARGS, default the recorded command), whose addresses and lines may\n"
	"have moved: events are matched in source terms (thread by creation order,\n"
	"kind, function, object, occurrence count).  The new program is recorded\n"
	"once into DIR/verify/rec; each bug's run is DIR/verify/X.sched (replay it\n"
	"with 'avtrace replay -d DIR/verify/rec --file DIR/verify/X.sched').\n"
	"Answers per bug:\n"
	"  still fails          the same interleaving fails the same way\n"
	"  fixed                the same interleaving runs to the end and passes\n"
	"  no longer possible   the fix changed the events: where the new program\n"
	"                       parted from the old schedule is shown\n"
	"Exit status: 1 if any bug still fails, else 3 if any is no longer\n"
	"possible, else 0 (every bug fixed, or none reported); 2 error.\n"
	"\n"
	"options:\n"
	"  -d, --dir DIR        directory of 'avtrace test' (default ./avtrace-out)\n"
	"  -t, --timeout S      a thread stuck S seconds (default 2)\n"
	"      --no-agent       record and run on ptrace alone\n"
	"      --cpu N          CPU to pin to\n"
	"  -v, --verbose        debug messages\n";

/* ---- describing events in source terms ---- */

static void split_site(const char *site, char *file, size_t flen, unsigned *line)
{
	const char *c = strrchr(site, ':');
	*line = 0;
	if (c && c[1] >= '0' && c[1] <= '9' && strspn(c + 1, "0123456789") == strlen(c + 1)) {
		*line = (unsigned)strtoul(c + 1, NULL, 10);
		snprintf(file, flen, "%.*s", (int)(c - site), site);
	} else {
		snprintf(file, flen, "%s", site);
	}
}

static void object_name(struct names *n, const struct avt_event *e, char *buf, size_t len)
{
	if (avt_kind_obj_is_thread(e->kind))
		snprintf(buf, len, e->kind == AVT_EV_START ? "" : "T%llu", (unsigned long long)e->obj);
	else if (e->kind == AVT_EV_EXIT || e->kind == AVT_EV_BEGIN || e->kind == AVT_EV_END ||
		 e->kind == AVT_EV_FATAL_SIGNAL)
		buf[0] = 0;
	else
		names_obj_or_addr(n, e->obj, buf, len);
}

/* Every event of t (up to VERIFY_MAX_DESCRIBED) that cov asks for (NULL:
 * all) into d, numbered.  Occurrences are counted over the described
 * events: a partial description counts within each thread's prefix, the
 * same as a whole one there. */
static int describe_trace(const struct trace *t, const struct coverage *cov, struct vf_desc *d)
{
	struct names n;
	if (names_open(&n, t) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < t->nev && i < VERIFY_MAX_DESCRIBED && rc == 0; i++) {
		const struct avt_event *e = &t->ev[i];
		if (e->kind == AVT_EV_FATAL_SIGNAL || !covered(cov, e))
			continue;
		char site[512], file[512], obj[512];
		const char *func = NULL;
		names_at(&n, e->seq);
		names_site(&n, e, site, sizeof site, &func);
		struct vf_event v = { .thread = e->thread, .tindex = e->tindex, .kind = e->kind,
				      .func = (char *)(func ? func : ""), .file = file, .obj = obj };
		split_site(site, file, sizeof file, &v.line);
		object_name(&n, e, obj, sizeof obj);
		rc = vf_desc_add(d, &v);
	}
	names_close(&n);
	vf_desc_number(d);
	return rc;
}

static const char *basename_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "T2 write balance in deposit at verify_bank.c:73" */
static void event_text(const struct vf_event *e, char *buf, size_t len)
{
	char at[1100] = "";
	if (*e->file && e->line)
		snprintf(at, sizeof at, " at %s:%u", basename_of(e->file), e->line);
	else if (*e->file)
		snprintf(at, sizeof at, " at %s", e->file);
	snprintf(buf, len, "T%u %s%s%s%s%s%s", e->thread, avt_kind_name(e->kind) ?: "?", *e->obj ? " " : "",
		 e->obj, *e->func ? " in " : "", e->func, at);
}

/* The prediction's pattern events, (thread, tindex) pairs, from
 * DIR/predictions.json; none for an explored bug. */
static size_t pattern_refs(const char *dir, unsigned id, struct vf_ref *out, size_t max)
{
	char path[4200], err[512];
	snprintf(path, sizeof path, "%s/predictions.json", dir);
	json_t *j = avt_json_read(path, err, sizeof err), *p;
	size_t i, n = 0;
	json_array_foreach(json_object_get(j, "predictions"), i, p) {
		if (json_integer_value(json_object_get(p, "id")) != (json_int_t)id)
			continue;
		size_t k;
		json_t *e;
		json_array_foreach(json_object_get(p, "events"), k, e) {
			if (n < max && json_is_integer(json_object_get(e, "thread")) &&
			    json_is_integer(json_object_get(e, "tindex")))
				out[n++] = (struct vf_ref){ (uint32_t)json_integer_value(json_object_get(e, "thread")),
							    (uint32_t)json_integer_value(json_object_get(e, "tindex")) };
		}
	}
	json_decref(j);
	return n;
}

/* X is "NNNN": its prediction number; -1 for an explored bug. */
static long report_prediction(const char *x)
{
	char *end;
	long id = strtol(x, &end, 10);
	return *x && *end == 0 && id >= 0 ? id : -1;
}

/* The recording report X's events are indices of: DIR itself for a
 * prediction, the explored run's own recording DIR/explore/runs/NNNN
 * for explore-NNNN.  False if X is neither. */
static bool report_recording(const char *dir, const char *x, char *rec, size_t len)
{
	if (report_prediction(x) >= 0) {
		snprintf(rec, len, "%s", dir);
		return true;
	}
	if (!strncmp(x, "explore-", 8) && report_prediction(x + 8) >= 0) {
		snprintf(rec, len, "%s/explore/runs/%s", dir, x + 8);
		return true;
	}
	return false;
}

static int write_events_json(const char *path, const struct vf_desc *d, const struct vf_ref *pat,
			     size_t npat, const char *build_id)
{
	json_t *o = json_object(), *ev = json_array(), *pa = json_array();
	for (size_t i = 0; i < d->nev; i++) {
		const struct vf_event *e = &d->ev[i];
		json_t *x = json_pack("{s:I,s:I,s:s,s:s,s:s,s:I,s:s,s:I}", "thread", (json_int_t)e->thread,
				      "tindex", (json_int_t)e->tindex, "kind", avt_kind_name(e->kind) ?: "?",
				      "function", e->func, "file", e->file, "line", (json_int_t)e->line,
				      "object", e->obj, "occurrence", (json_int_t)e->occ);
		if (x && e->kind == AVT_EV_RMW)
			json_object_set_new(x, "occurrence_as_write", json_integer(e->occ_w));
		json_array_append_new(ev, x);
	}
	for (size_t i = 0; i < npat; i++)
		json_array_append_new(pa, json_pack("{s:I,s:I}", "thread", (json_int_t)pat[i].thread, "tindex",
						    (json_int_t)pat[i].tindex));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "build_id", json_string(build_id ? build_id : ""));
	json_object_set_new(o, "pattern", pa);
	json_object_set_new(o, "events", ev);
	char tmp[4500];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	errno = 0;
	int rc = json_dump_file(o, tmp, JSON_COMPACT) == 0 && rename(tmp, path) == 0 ? 0 : -1;
	json_decref(o);
	if (rc < 0) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
		remove(tmp);
	}
	return rc;
}

static int read_events_json(const char *path, struct vf_desc *d, struct vf_ref *pat, size_t max, size_t *npat)
{
	char err[512];
	json_t *j = avt_json_read(path, err, sizeof err), *e;
	if (!j)
		return -1;
	size_t i;
	int rc = 0;
	*npat = 0;
	json_array_foreach(json_object_get(j, "events"), i, e) {
		const char *kind = json_string_value(json_object_get(e, "kind"));
		struct vf_event v = {
			.thread = (uint32_t)json_integer_value(json_object_get(e, "thread")),
			.tindex = (uint32_t)json_integer_value(json_object_get(e, "tindex")),
			.kind = kind ? avt_kind_from_name(kind) : 0,
			.func = (char *)json_string_value(json_object_get(e, "function")),
			.file = (char *)json_string_value(json_object_get(e, "file")),
			.line = (unsigned)json_integer_value(json_object_get(e, "line")),
			.obj = (char *)json_string_value(json_object_get(e, "object")),
		};
		if (!v.kind || vf_desc_add(d, &v) < 0)
			rc = -1;
	}
	json_array_foreach(json_object_get(j, "pattern"), i, e) {
		if (*npat < max)
			pat[(*npat)++] = (struct vf_ref){ (uint32_t)json_integer_value(json_object_get(e, "thread")),
							  (uint32_t)json_integer_value(json_object_get(e, "tindex")) };
	}
	json_decref(j);
	vf_desc_number(d);
	return rc;
}

static bool report_schedule(const char *dir, const char *x, char *sched, size_t slen, char *json, size_t jlen);

/* The recorded executable unchanged?  (Its events can be described.) */
static bool recording_current(const char *dir, char *bid, size_t len)
{
	char path[4300], err[4600];
	snprintf(path, sizeof path, "%s/meta.json", dir);
	struct avt_meta *m = meta_read(path, err, sizeof err, NULL);
	if (!m)
		return false;
	snprintf(bid, len, "%s", m->build_id ? m->build_id : "");
	uint8_t id[20];
	char hex[41] = "";
	int n = elf_build_id(m->executable, id, sizeof id);
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	bool same = n >= 0 && !strcmp(hex, m->build_id ? m->build_id : "");
	meta_free(m);
	return same;
}

struct report {
	char name[256];
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct report *)a)->name, ((const struct report *)b)->name);
}

/* The reports of DIR (X of reports/X.txt), sorted. */
static size_t list_reports(const char *dir, struct report **out)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/reports", dir);
	DIR *d = opendir(path);
	struct report *v = NULL;
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || l >= sizeof v->name + 4 || strcmp(de->d_name + l - 4, ".txt"))
			continue;
		struct report *nv = realloc(v, (n + 1) * sizeof *nv);
		if (!nv)
			break;
		v = nv;
		snprintf(v[n++].name, sizeof v->name, "%.*s", (int)(l - 4), de->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, n, sizeof *v, by_name);
	*out = v;
	return n;
}

#define MAX_PATTERN 64

/* Writes DIR/reports/X.events.json for every report that has none, while
 * the recorded binary is there (avtrace test calls this).  -1 if some
 * could not be written. */
int verify_describe_reports(const char *dir)
{
	struct report *r;
	size_t n = list_reports(dir, &r);
	char bid[64], loaded[4200] = "";
	int rc = 0;
	struct vf_desc whole = { 0 };
	bool have_whole = false;
	struct trace *t = NULL;
	for (size_t i = 0; i < n; i++) {
		char path[4400], rec[4200];
		snprintf(path, sizeof path, "%s/reports/%s.events.json", dir, r[i].name);
		if (access(path, F_OK) == 0 || !report_recording(dir, r[i].name, rec, sizeof rec))
			continue;
		if (strcmp(rec, loaded)) { /* another recording */
			if (t)
				trace_free(t);
			t = NULL;
			vf_desc_release(&whole);
			have_whole = false;
			loaded[0] = 0;
			if (!recording_current(rec, bid, sizeof bid) || !(t = load_trace(rec))) {
				rc = -1;
				continue;
			}
			snprintf(loaded, sizeof loaded, "%s", rec);
		}
		struct vf_ref pat[MAX_PATTERN];
		long id = report_prediction(r[i].name);
		size_t np = id >= 0 ? pattern_refs(dir, (unsigned)id, pat, MAX_PATTERN) : 0;
		if (t->nev <= describe_all_max()) { /* all of it, once */
			if (!have_whole && describe_trace(t, NULL, &whole) < 0) {
				rc = -1;
				continue;
			}
			have_whole = true;
			if (write_events_json(path, &whole, pat, np, bid) < 0)
				rc = -1;
			continue;
		}
		/* a long recording: the prefix of each thread its schedules and
		 * its pattern reach */
		struct coverage cov = { NULL, 0 };
		struct vf_desc d = { 0 };
		char sched[4400], json[4400], msched[4400];
		snprintf(msched, sizeof msched, "%s/reports/%s.min.sched", dir, r[i].name);
		int crc = cover_to(&cov, 0, 1);
		if (report_schedule(dir, r[i].name, sched, sizeof sched, json, sizeof json))
			crc |= cover_schedule(&cov, sched);
		crc |= cover_schedule(&cov, msched);
		for (size_t k = 0; k < np; k++)
			crc |= cover_to(&cov, pat[k].thread, pat[k].tindex + 1);
		if (crc < 0 || describe_trace(t, &cov, &d) < 0 || write_events_json(path, &d, pat, np, bid) < 0)
			rc = -1;
		vf_desc_release(&d);
		free(cov.cover);
	}
	if (t)
		trace_free(t);
	vf_desc_release(&whole);
	free(r);
	return rc;
}

/* ---- verifying one bug ---- */

struct old_failure {
	int signal, exit_status;
	char func[256], file[1024];
	unsigned line;
	bool known;
};

static void read_failure(const char *path, struct old_failure *f)
{
	char err[512];
	json_t *j = avt_json_read(path, err, sizeof err), *fa;
	memset(f, 0, sizeof *f);
	f->exit_status = -1;
	if (!j)
		return;
	f->known = true;
	f->signal = (int)json_integer_value(json_object_get(j, "signal"));
	if (json_is_integer(json_object_get(j, "exit_status")))
		f->exit_status = (int)json_integer_value(json_object_get(j, "exit_status"));
	if ((fa = json_object_get(j, "failure"))) {
		snprintf(f->func, sizeof f->func, "%s", json_string_value(json_object_get(fa, "function")) ?: "");
		snprintf(f->file, sizeof f->file, "%s", json_string_value(json_object_get(fa, "file")) ?: "");
		f->line = (unsigned)json_integer_value(json_object_get(fa, "line"));
	}
	/* a deadlock is a failure of its own kind */
	const char *oc = json_string_value(json_object_get(j, "outcome"));
	if (oc && !strcmp(oc, "DEADLOCK"))
		f->signal = -1;
	json_decref(j);
}

static void failure_text(const struct old_failure *f, char *buf, size_t len)
{
	char what[64];
	if (len < 1400) {
		snprintf(buf, len, "?");
		return;
	}
	if (f->signal == -1)
		snprintf(what, sizeof what, "deadlock");
	else if (f->signal)
		snprintf(what, sizeof what, "SIG%s", sigabbrev_np(f->signal) ?: "?");
	else
		snprintf(what, sizeof what, "exit status %d", f->exit_status);
	if (*f->func || *f->file)
		snprintf(buf, len, "%s in %s at %s:%u", what, *f->func ? f->func : "??", basename_of(f->file), f->line);
	else
		snprintf(buf, len, "%s", what);
}

/* The same way: the same signal (or exit status, or deadlock) at the same
 * function and file; lines may have moved. */
static bool same_failure(const struct old_failure *a, const struct old_failure *b)
{
	if (a->signal != b->signal || (!a->signal && a->exit_status != b->exit_status))
		return false;
	return !strcmp(a->func, b->func) && !strcmp(basename_of(a->file), basename_of(b->file));
}

struct verify_ctx {
	const char *dir;
	char recdir[4200];
	struct trace *rec;         /* the new recording */
	struct vf_desc nw;         /* its events described */
	double timeout_s;
	int cpu;
	bool no_agent;
};

/* The schedule of report X and the replay JSON of its failure: the
 * minimal ones (reports/X.min.sched, .min.json) when there are, else
 * those it was reproduced with. */
static bool report_schedule(const char *dir, const char *x, char *sched, size_t slen, char *json, size_t jlen)
{
	char rec[4200];
	if (!report_recording(dir, x, rec, sizeof rec))
		return false;
	long id = report_prediction(x);
	if (id >= 0) {
		snprintf(sched, slen, "%s/schedules/%04ld.sched", dir, id);
		snprintf(json, jlen, "%s/replays/%04ld.json", dir, id);
	} else {
		snprintf(sched, slen, "%s/schedules/0000.sched", rec);
		snprintf(json, jlen, "%s/replays/0000.json", rec);
	}
	char msched[4400], mjson[4400];
	snprintf(msched, sizeof msched, "%s/reports/%s.min.sched", dir, x);
	snprintf(mjson, sizeof mjson, "%s/reports/%s.min.json", dir, x);
	if (access(msched, R_OK) == 0)
		snprintf(sched, slen, "%s", msched);
	if (access(mjson, R_OK) == 0)
		snprintf(json, jlen, "%s", mjson);
	return access(sched, R_OK) == 0;
}

/* What verify_one works from: the report's schedule, its failure, the
 * old program's events. */
struct verify_input {
	char sched_path[4400], fjson[4400];
	struct old_failure was;
	struct schedule *s;
	struct vf_desc old;
	struct vf_ref pat[MAX_PATTERN];
	size_t npat;
};

/* Loads report x's input; 0, or EXIT_USAGE (in->s and in->old are
 * released by the caller either way). */
static int verify_load(struct verify_ctx *c, const char *x, struct verify_input *in)
{
	char epath[4400], err[4600];
	if (!report_schedule(c->dir, x, in->sched_path, sizeof in->sched_path, in->fjson, sizeof in->fjson)) {
		printf("%s: cannot verify: no schedule of it in '%s'\n", x, c->dir);
		return EXIT_USAGE;
	}
	read_failure(in->fjson, &in->was);
	in->s = schedule_read(in->sched_path, err, sizeof err);
	if (!in->s) {
		avt_error("%s", err);
		return EXIT_USAGE;
	}
	snprintf(epath, sizeof epath, "%s/reports/%s.events.json", c->dir, x);
	if (access(epath, F_OK) < 0 && verify_describe_reports(c->dir) < 0) {
		printf("%s: cannot verify: '%s' is missing and the recorded program changed since (run 'avtrace test' again on the old program, or keep the .events.json files 'avtrace test' writes)\n",
		       x, epath);
		return EXIT_USAGE;
	}
	if (read_events_json(epath, &in->old, in->pat, MAX_PATTERN, &in->npat) < 0) {
		avt_error("cannot read '%s'", epath);
		return EXIT_USAGE;
	}
	return 0;
}

/* The plan found the old schedule impossible on the new program. */
static int say_parted(const char *x, const struct vf_plan *plan)
{
	char a[6000], b[6000];
	event_text(&plan->parted, a, sizeof a);
	printf("%s: no longer possible: the new program parted from the old schedule at %s: %s\n", x, a,
	       plan->why);
	if (plan->has_instead) {
		event_text(&plan->instead, b, sizeof b);
		printf("  T%u does instead: %s\n", plan->parted.thread, b);
	} else {
		printf("  T%u does nothing more there\n", plan->parted.thread);
	}
	return VERIFY_IMPOSSIBLE;
}

/* Runs the new program along the plan (en picks); its results in
 * DIR/verify/x.{avt,json,sched}. */
static void verify_enact(struct verify_ctx *c, const char *x, const char *sched_path, struct vf_enact *en,
			 struct replay_result *res)
{
	struct replay_picker pk;
	char tpath[4400], jpath[4400], spath[4400], a[6000];
	vf_enact_picker(en, &pk);
	struct replay_opts ro = { .dir = c->recdir, .timeout_s = c->timeout_s, .cpu = c->cpu, .picker = &pk,
				  .no_agent = c->no_agent, .run_timeout_s = REPLAY_MAX_TIME_BASE_S };
	struct replay *rp = replay_open(&ro);
	if (rp && replay_launch(rp) == 0) {
		while (replay_step(rp))
			;
	}
	if (rp)
		replay_finish(rp, res);
	snprintf(tpath, sizeof tpath, "%s/verify/%s.avt", c->dir, x);
	snprintf(jpath, sizeof jpath, "%s/verify/%s.json", c->dir, x);
	snprintf(spath, sizeof spath, "%s/verify/%s.sched", c->dir, x);
	if (rp && replay_write(rp, res, tpath, jpath, NULL) == 0) {
		struct names n;
		if (names_open(&n, c->rec) == 0) {
			facts_add(jpath, &n, rp, res);
			names_close(&n);
		}
	}
	/* the order the plan made, then free: after it the program may take
	 * another path than its recording (it fails) */
	size_t upto = vf_enact_done(en) ? en->done_at : res->nev;
	struct schedule *ran = schedule_from_events(res->ev, upto < res->nev ? upto : res->nev);
	if (ran) {
		snprintf(a, sizeof a, "avtrace verify of report %s (%s) on the new program", x, sched_path);
		schedule_add_comment(ran, a);
		schedule_write(ran, spath);
		schedule_free(ran);
	}
	replay_free(rp);
}

/* The run did not follow the old interleaving to its end. */
static int say_impossible(struct verify_ctx *c, const char *x, const struct replay_result *res,
			  const struct vf_enact *en, const struct vf_plan *plan)
{
	if (en->deviated) {
		struct names n;
		char se[512], sa[512];
		const char *f1 = NULL, *f2 = NULL;
		names_open(&n, c->rec);
		names_site(&n, &en->dev_actual, sa, sizeof sa, &f1);
		if (en->dev_has_expected)
			names_site(&n, &en->dev_expected, se, sizeof se, &f2);
		printf("%s: no longer possible: re-enacted, the new program took another path: T%u %s at %s where its recording has %s at %s\n",
		       x, en->dev_actual.thread, avt_kind_name(en->dev_actual.kind) ?: "?", sa,
		       en->dev_has_expected ? avt_kind_name(en->dev_expected.kind) ?: "?" : "nothing",
		       en->dev_has_expected ? se : "-");
		names_close(&n);
	} else if (res->outcome == RO_PASS) {
		printf("%s: no longer possible: the program passed before the interleaving's step %zu of %zu\n",
		       x, en->step + 1, plan->nsteps);
	} else {
		printf("%s: no longer possible: %s: %s\n", x, replay_outcome_name(res->outcome), res->reason);
	}
	return VERIFY_IMPOSSIBLE;
}

/* The answer for report x from the run on the new program. */
static int verify_verdict(struct verify_ctx *c, const char *x, const struct verify_input *in,
			  const struct replay_result *res, const struct vf_enact *en,
			  const struct vf_plan *plan)
{
	char a[6000], b[6000], jpath[4400];
	struct old_failure now;
	snprintf(jpath, sizeof jpath, "%s/verify/%s.json", c->dir, x);
	read_failure(jpath, &now);
	bool followed = vf_enact_done(en) && !en->deviated;
	switch (res->outcome) {
	case RO_BUG:
	case RO_DEADLOCK:
		failure_text(&now, a, sizeof a);
		failure_text(&in->was, b, sizeof b);
		if (same_failure(&now, &in->was) && now.line != in->was.line && in->was.line)
			printf("%s: still fails: %s, as before (then at line %u)\n", x, a, in->was.line);
		else if (same_failure(&now, &in->was))
			printf("%s: still fails: %s, as before\n", x, a);
		else
			printf("%s: still fails, another way: %s (before: %s)\n", x, a, b);
		return VERIFY_FAILS;
	case RO_PASS:
		if (!followed) /* it passed, but not by that interleaving */
			return say_impossible(c, x, res, en, plan);
		printf("%s: fixed: the interleaving ran to the end and the program passed", x);
		if (en->held)
			printf(" (%u time%s the thread the old schedule ran next had to wait: the new program's synchronization forbids the old order there)",
			       en->held, en->held == 1 ? "" : "s");
		putchar('\n');
		return VERIFY_FIXED;
	case RO_INFEASIBLE:
		return say_impossible(c, x, res, en, plan);
	case RO_ERROR:
		break;
	}
	printf("%s: cannot verify: the run on the new program failed (%s)\n", x,
	       res->reason[0] ? res->reason : "it did not start");
	return EXIT_USAGE;
}

static int verify_one(struct verify_ctx *c, const char *x)
{
	struct verify_input *in = calloc(1, sizeof *in);
	int status = in ? verify_load(c, x, in) : EXIT_USAGE;
	struct vf_plan plan;
	if (status == 0 && vf_plan_make(&in->old, in->s, in->pat, in->npat, &c->nw, &plan) < 0) {
		avt_error("%s: cannot plan: %s", x, plan.why[0] ? plan.why : "out of memory");
		status = EXIT_USAGE;
	} else if (status == 0 && !plan.possible) {
		status = say_parted(x, &plan);
		vf_plan_release(&plan);
	} else if (status == 0) {
		struct vf_enact en;
		struct replay_result res = { .outcome = RO_ERROR };
		if (vf_enact_init(&en, &plan, c->rec) < 0) {
			avt_error("cannot verify: out of memory");
			status = EXIT_USAGE;
		} else {
			verify_enact(c, x, in->sched_path, &en, &res);
			status = verify_verdict(c, x, in, &res, &en, &plan);
			printf("  %zu of the old schedule's events matched, %zu vanished; the run: avtrace replay -d %s --file %s/verify/%s.sched\n",
			       plan.matched, plan.vanished, c->recdir, c->dir, x);
			replay_result_release(&res);
		}
		vf_enact_release(&en);
		vf_plan_release(&plan);
	}
	if (in) {
		vf_desc_release(&in->old);
		schedule_free(in->s);
	}
	free(in);
	return status;
}

/* Records the new program into c->recdir and describes it. */
static int record_new(struct verify_ctx *c, char **argv)
{
	char path[4200], err[4500], vdir[4100];
	snprintf(path, sizeof path, "%s/meta.json", c->dir);
	struct avt_meta *m = meta_read(path, err, sizeof err, NULL);
	if (!m) {
		avt_error("%s", err);
		return -1;
	}
	snprintf(vdir, sizeof vdir, "%s/verify", c->dir);
	mkdir(vdir, 0777);
	snprintf(c->recdir, sizeof c->recdir, "%s/rec", vdir);
	char *rec_argv0 = m->argv[0];
	if (!argv) { /* the recorded command, by the recorded executable's path */
		m->argv[0] = m->executable;
		argv = m->argv;
	}
	struct record_opts ro = {
		.dir = c->recdir, .force = true, .argv = argv, .cpu = c->cpu, .slice_ms = 10,
		.quiet_target = true, .no_heap = !m->heap, .watch = (const char *const *)m->watch,
		.nwatch = m->nwatch, .no_auto_watch = !m->access, .access_budget = m->access_budget,
		.access_scope = m->access_scope,
		/* the recording's sync spec, if any (checked when planted) */
		.sync_spec = json_string_value(json_object_get(m->json, "sync_spec")),
		.sync_spec_name = json_string_value(json_object_get(m->json, "sync_spec_file")),
		.futex = m->futex, /* the same events, the same filter */
	};
	int rc = 0;
	if (agent_choice(c->no_agent ? 0 : -1, &ro.agent_lib))
		rc = -1;
	int quiet = avt_quiet;
	avt_quiet = 1;
	int st = rc ? EXIT_USAGE : record_run(&ro, NULL);
	avt_quiet = quiet;
	m->argv[0] = rec_argv0;
	meta_free(m);
	if (st == EXIT_USAGE || tracer_interrupted())
		return -1;
	if (!(c->rec = load_trace(c->recdir)))
		return -1;
	return describe_trace(c->rec, NULL, &c->nw);
}

int cmd_verify(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, 0, 'd' }, { "timeout", required_argument, 0, 't' },
		{ "no-agent", no_argument, 0, 'n' }, { "cpu", required_argument, 0, 'c' },
		{ "verbose", no_argument, 0, 'v' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct verify_ctx c = { .dir = "avtrace-out", .timeout_s = 2.0, .cpu = default_cpu() };
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+d:t:vh", lo, NULL)) != -1) {
		switch (ch) {
		case 'd': c.dir = optarg; break;
		case 't':
			if (arg_seconds("verify", "--timeout", optarg, &c.timeout_s) < 0)
				return EXIT_USAGE;
			break;
		case 'n': c.no_agent = true; break;
		case 'c':
			if (arg_cpu("verify", "--cpu", optarg, &c.cpu) < 0)
				return EXIT_USAGE;
			break;
		case 'v': avt_verbose++; break;
		case 'h': fputs(verify_help, stdout); return 0;
		default: return usage_error("verify", "bad option");
		}
	}
	char **prog = optind < argc ? argv + optind : NULL;
	struct report *r;
	size_t n = list_reports(c.dir, &r);
	if (!n) {
		char meta[4200];
		snprintf(meta, sizeof meta, "%s/meta.json", c.dir);
		free(r);
		if (access(meta, F_OK) < 0) {
			avt_error("no recording in '%s' (run 'avtrace test -o %s -- PROG' first)", c.dir, c.dir);
			return EXIT_USAGE;
		}
		printf("no bug reported in '%s': nothing to verify\n", c.dir);
		return 0;
	}
	/* describe the old events now if the old binary is still there and
	 * the reports predate avtrace verify */
	verify_describe_reports(c.dir);
	if (record_new(&c, prog) < 0) {
		avt_error("cannot verify: the new program could not be recorded into '%s'", c.recdir);
		trace_free(c.rec);
		vf_desc_release(&c.nw);
		free(r);
		return EXIT_USAGE;
	}
	unsigned fails = 0, impossible = 0, fixed = 0, errors = 0;
	for (size_t i = 0; i < n; i++) {
		int st = verify_one(&c, r[i].name);
		fails += st == VERIFY_FAILS;
		impossible += st == VERIFY_IMPOSSIBLE;
		fixed += st == VERIFY_FIXED;
		errors += st == EXIT_USAGE;
		if (tracer_interrupted())
			break;
	}
	printf("%zu bug%s: %u still fail%s, %u fixed, %u no longer possible%s\n", n, n == 1 ? "" : "s", fails,
	       fails == 1 ? "s" : "", fixed, impossible, errors ? ", some not verified" : "");
	trace_free(c.rec);
	vf_desc_release(&c.nw);
	free(r);
	if (fails)
		return VERIFY_FAILS;
	if (impossible)
		return VERIFY_IMPOSSIBLE;
	return errors ? EXIT_USAGE : VERIFY_FIXED;
}
