#include "replay_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/sym.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "tracer/elfmod.h"

const char *replay_outcome_name(enum replay_outcome o)
{
	static const char *const n[] = { "PASS", "BUG", "INFEASIBLE", "DEADLOCK", "ERROR" };
	return (unsigned)o < sizeof n / sizeof n[0] ? n[o] : "?";
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/* The recording's sync spec (docs/sync-spec.md): the same hooks in every
 * run; checked as the recording checked it (meta.json may come from
 * anywhere). */
static int replay_sync_spec(struct replay *rp, const struct avt_meta *m)
{
	json_t *ss = json_object_get(m->json, "sync_spec");
	if (!ss)
		return 0;
	json_t *sn = json_object_get(m->json, "sync_spec_file");
	const char *name = json_is_string(sn) ? json_string_value(sn) : "";
	char err[600];
	if (!json_is_string(ss) ||
	    tracer_sync_spec_check(json_string_value(ss), *name ? name : "sync spec", err, sizeof err) < 0) {
		avt_error("cannot replay: the recording's sync spec is wrong: %s",
			  json_is_string(ss) ? err : "not a string");
		return -1;
	}
	rp->sync_spec = strdup(json_string_value(ss));
	rp->sync_spec_name = strdup(*name ? name : "sync spec");
	if (!rp->sync_spec || !rp->sync_spec_name) {
		avt_error("out of memory");
		return -1;
	}
	return 0;
}

static int load_meta(struct replay *rp)
{
	char path[4200], err[4500];
	int oserr;
	snprintf(path, sizeof path, "%s/meta.json", rp->opts.dir);
	/* checked by meta_read: replay may trust every field */
	struct avt_meta *m = meta_read(path, err, sizeof err, &oserr);
	if (!m) {
		if (oserr == ENOENT)
			avt_error("no recording in '%s' (no meta.json; run 'avtrace record -o %s -- PROG' first)",
				  rp->opts.dir, rp->opts.dir);
		else
			avt_error("%s", err);
		return -1;
	}
	/* the strings move to rp */
	rp->argv = m->argv;
	rp->envp = m->env;
	rp->exe = m->executable;
	rp->cwd = m->cwd;
	rp->watch = m->watch;
	rp->nwatch = m->nwatch;
	m->argv = m->env = m->watch = NULL;
	m->executable = m->cwd = NULL;
	const char *exe = rp->exe, *bid = m->build_id;
	rp->no_heap = !m->heap;
	rp->futex = m->futex;
	rp->agent = json_is_string(json_object_get(m->json, "agent"));
	json_t *sec = json_object_get(m->json, "seconds");
	rp->recorded_s = json_is_number(sec) ? json_number_value(sec) : 0;
	if (!(rp->recorded_s >= 0 && rp->recorded_s < 1e6))
		rp->recorded_s = 0;
	/* access breakpoints: the same sites; removed where the recording
	 * removed them (the trace's disarm records), nowhere else */
	rp->access = m->access;
	rp->access_budget = m->access_budget;
	rp->access_scope = m->access_scope;
	m->access_scope = NULL;
	int rc = replay_sync_spec(rp, m);
	if (meta_fork_path(m, rp->fork_path, 16, &rp->nfork_path) < 0) {
		avt_error("cannot replay: %s/meta.json: fork_path is not a list of at most 16 fork numbers", rp->opts.dir);
		rc = -1;
	}
	if (bid && *bid) {
		uint8_t id[20];
		char hex[41] = "";
		int n = elf_build_id(exe, id, sizeof id);
		for (int i = 0; i < n; i++)
			sprintf(hex + 2 * i, "%02x", id[i]);
		if (n < 0) {
			avt_error("cannot replay: the recorded executable '%s' is gone", exe);
			rc = -1;
		} else if (strcmp(hex, bid)) {
			avt_error("cannot replay: '%s' changed since it was recorded (build-id %s, recorded %s); record again",
				  exe, n ? hex : "none", bid);
			rc = -1;
		}
	}
	meta_free(m);
	return rc;
}

/* For the agent's accesses that the recording does not have
 * (docs/agent.md): per access site, the threads the recording saw there
 * (an open-addressing table by site while counting, then packed). */
static int site_lids(struct replay *rp)
{
	const struct trace *t = rp->trace;
	free(rp->site_lids);
	rp->site_lids = NULL;
	rp->nsite_lids = 0;
	size_t cap = 0, n = 0;
	struct tracer_site_lids *tab = NULL;
	for (size_t i = 0; t && i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if (!(e->flags & AVT_F_ACCESS_BPT))
			continue;
		if ((n + 1) * 2 > cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct tracer_site_lids *nt = calloc(ncap, sizeof *nt);
			if (!nt) {
				free(tab);
				return -1;
			}
			for (size_t j = 0; j < cap; j++) {
				if (!tab[j].lids)
					continue;
				size_t h = (size_t)((tab[j].site_off * 0x9e3779b97f4a7c15ull) >> 32) & (ncap - 1);
				while (nt[h].lids)
					h = (h + 1) & (ncap - 1);
				nt[h] = tab[j];
			}
			free(tab);
			tab = nt;
			cap = ncap;
		}
		size_t h = (size_t)((e->site_off * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
		while (tab[h].lids && (tab[h].site_off != e->site_off || tab[h].site_mod != e->site_mod))
			h = (h + 1) & (cap - 1);
		if (!tab[h].lids) {
			tab[h].site_mod = e->site_mod;
			tab[h].site_off = e->site_off;
			n++;
		}
		tab[h].lids |= 1ull << (e->thread < 63 ? e->thread : 63);
	}
	size_t k = 0;
	for (size_t j = 0; j < cap; j++)
		if (tab[j].lids)
			tab[k++] = tab[j];
	if (k)
		qsort(tab, k, sizeof *tab, tracer_site_lids_cmp);
	rp->site_lids = tab;
	rp->nsite_lids = k;
	return 0;
}

static int index_expected(struct replay *rp)
{
	const struct trace *t = rp->trace;
	rp->nthreads = trace_nthreads(t);
	rp->texp = calloc(rp->nthreads ? rp->nthreads : 1, sizeof *rp->texp);
	rp->ntexp = calloc(rp->nthreads ? rp->nthreads : 1, sizeof *rp->ntexp);
	if (!rp->texp || !rp->ntexp)
		return -1;
	for (size_t i = 0; i < t->nev; i++)
		rp->ntexp[t->ev[i].thread]++;
	for (size_t k = 0; k < rp->nthreads; k++) {
		rp->texp[k] = calloc(rp->ntexp[k] + 1, sizeof **rp->texp);
		if (!rp->texp[k])
			return -1;
		rp->ntexp[k] = 0;
	}
	for (size_t i = 0; i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		rp->texp[e->thread][rp->ntexp[e->thread]++] = e;
	}
	return 0;
}

static int check_schedule(struct replay *rp)
{
	for (size_t i = 0; i < rp->sched->nsteps; i++) {
		uint32_t th = rp->sched->steps[i].thread;
		if (th >= rp->nthreads) {
			avt_error("%s: step %zu names T%u, but the recording has only T0..T%zu",
				  rp->sched_path, i + 1, th, rp->nthreads ? rp->nthreads - 1 : 0);
			return -1;
		}
	}
	return 0;
}

static void hex_id(const uint8_t *id, size_t n, char *hex)
{
	hex[0] = 0;
	for (size_t i = 0; i < n && i < 20; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* avtrace's own agent is replaced by the one installed now: not the
 * program's library */
static bool own_module(const char *path)
{
	return !strcmp(base_name(path), "libavtrace-agent.so");
}

/*
 * Every library the recording loaded must be the same file now: a
 * replay of different library code follows other events and only says
 * INFEASIBLE at step 1.  A library with a build-id in the trace must
 * still have it (one without cannot be checked).  The executable has
 * its own check (load_meta).  A changed library is an error, not a
 * warning: its sites and events are not the recording's, so the
 * schedule's outcome would say nothing about the recorded program.
 */
static int check_libraries(struct replay *rp)
{
	for (size_t i = 0; i < rp->trace->nmod; i++) {
		const struct avt_module *m = &rp->trace->mod[i];
		if (!m->rec.build_id_len || !m->path || m->path[0] != '/' ||
		    (rp->exe && !strcmp(m->path, rp->exe)) || own_module(m->path))
			continue;
		uint8_t id[20];
		char now[41], was[41];
		struct stat st;
		/* the path comes from a trace: a FIFO would block the open */
		if (stat(m->path, &st) == 0 && !S_ISREG(st.st_mode)) {
			avt_error("cannot replay: library '%s' of the recording is not a regular file", m->path);
			return -1;
		}
		int n = elf_build_id(m->path, id, sizeof id);
		hex_id(m->rec.build_id, m->rec.build_id_len, was);
		if (n < 0) {
			avt_error("cannot replay: library '%s' of the recording is gone; record again", m->path);
			return -1;
		}
		hex_id(id, (size_t)n, now);
		if (strcmp(now, was)) {
			avt_error("cannot replay: library '%s' changed since it was recorded (build-id %s, recorded %s); record again",
				  m->path, n ? now : "none", was);
			return -1;
		}
	}
	return 0;
}

/* A library the replay loaded that is not the recorded one: the same
 * name found elsewhere now (an updated ld.so.cache, LD_LIBRARY_PATH), or
 * a file that changed since replay_open checked it.  Stops the replay
 * (ERROR) with a reason naming it. */
static void check_loaded(struct replay *rp, const struct avt_module_rec *m, const char *path)
{
	if (rp->stop || path[0] != '/' || own_module(path) || (rp->exe && !strcmp(path, rp->exe)))
		return;
	const struct avt_module *same_name = NULL;
	char now[41], was[41];
	for (size_t i = 0; i < rp->trace->nmod; i++) {
		const struct avt_module *r = &rp->trace->mod[i];
		if (!r->path)
			continue;
		if (!strcmp(r->path, path)) {
			if (!r->rec.build_id_len || !m->build_id_len ||
			    (r->rec.build_id_len == m->build_id_len &&
			     !memcmp(r->rec.build_id, m->build_id, m->build_id_len)))
				return;
			hex_id(m->build_id, m->build_id_len, now);
			hex_id(r->rec.build_id, r->rec.build_id_len, was);
			rp->stop = true;
			rp->outcome = RO_ERROR;
			snprintf(rp->reason, sizeof rp->reason,
				 "library '%s' changed since it was recorded (build-id %s, recorded %s); record again",
				 path, now, was);
			return;
		}
		if (!same_name && !strcmp(base_name(r->path), base_name(path)))
			same_name = r;
	}
	if (same_name) {
		rp->stop = true;
		rp->outcome = RO_ERROR;
		snprintf(rp->reason, sizeof rp->reason,
			 "library '%s' is loaded from '%s' now, from '%s' when recorded; record again",
			 base_name(path), path, same_name->path);
	}
}

struct replay *replay_open(const struct replay_opts *opts)
{
	struct replay *rp = calloc(1, sizeof *rp);
	char err[512];
	if (!rp) {
		avt_error("cannot replay: out of memory");
		return NULL;
	}
	rp->opts = *opts;
	rp->stdout_fd = -1;
	rp->stderr_fd = -1;
	if (opts->sched_path)
		snprintf(rp->sched_path, sizeof rp->sched_path, "%s", opts->sched_path);
	else
		snprintf(rp->sched_path, sizeof rp->sched_path, "%s/schedules/%04u.sched", opts->dir,
			 opts->schedule);
	if (opts->picker) {
		rp->sched = schedule_new(); /* no steps: free from the start */
	} else if (access(rp->sched_path, F_OK) < 0) {
		char meta[4200], trace[4200];
		snprintf(meta, sizeof meta, "%s/meta.json", opts->dir);
		snprintf(trace, sizeof trace, "%s/trace.avt", opts->dir);
		if (!opts->sched_path && access(meta, F_OK) < 0 && access(trace, F_OK) == 0)
			avt_error("incomplete recording in '%s': trace.avt but no meta.json nor schedules (the record was killed); 'avtrace dump -d %s' shows what it recorded",
				  opts->dir, opts->dir);
		else
			avt_error("no schedule %u in '%s' ('%s' does not exist)", opts->schedule, opts->dir,
				  rp->sched_path);
		goto fail;
	} else {
		rp->sched = schedule_read(rp->sched_path, err, sizeof err);
		if (!rp->sched)
			avt_error("%s", err);
	}
	if (!rp->sched)
		goto fail;
	if (load_meta(rp) < 0)
		goto fail;
	/* a replay never runs for ever: a run that loops in 'free' (or follows
	 * a recording that was cut short) ends as INFEASIBLE */
	if (!opts->picker && rp->opts.run_timeout_s <= 0)
		rp->opts.run_timeout_s = REPLAY_MAX_TIME_BASE_S + REPLAY_MAX_TIME_FACTOR * rp->recorded_s;
	char tpath[4200];
	snprintf(tpath, sizeof tpath, "%s/trace.avt", opts->dir);
	rp->trace = trace_read(tpath, err, sizeof err);
	if (!rp->trace) {
		avt_error("%s", err);
		goto fail;
	}
	/* a schedule's run delivers the recording's signals where they were
	 * (policy.c); under a picker they come as they come */
	if (!opts->picker)
		rp->sig_state = calloc(rp->trace->nsignals + 1, 1);
	if (index_expected(rp) < 0 || (!opts->picker && !rp->sig_state)) {
		avt_error("cannot replay: out of memory");
		goto fail;
	}
	if (check_schedule(rp) < 0)
		goto fail;
	if (check_libraries(rp) < 0)
		goto fail;
	rp->sym = sym_new();
	for (size_t i = 0; rp->sym && i < rp->trace->nmod; i++) {
		const struct avt_module *m = &rp->trace->mod[i];
		sym_add_module(rp->sym, m->rec.id, m->path, m->rec.base, m->rec.lo, m->rec.hi,
			       m->rec.build_id, m->rec.build_id_len);
	}
	rp->left = rp->sched->nsteps ? rp->sched->steps[0].count : 0;
	yields_init(&rp->yl);
	rp->in_free = rp->sched->nsteps == 0;
	return rp;
fail:
	replay_free(rp);
	return NULL;
}

static void rp_module(void *ctx, struct tracer *tr, const struct avt_module_rec *m, const char *path)
{
	struct replay *rp = ctx;
	check_loaded(rp, m, path);
	struct avt_module_rec *nm = realloc(rp->mods, (rp->nmods + 1) * sizeof *nm);
	char **np = realloc(rp->modpaths, (rp->nmods + 1) * sizeof *np);
	if (nm)
		rp->mods = nm;
	if (np)
		rp->modpaths = np;
	if (!nm || !np)
		return;
	rp->mods[rp->nmods] = *m;
	rp->modpaths[rp->nmods++] = strdup(path);
}

static void rp_alloc(void *ctx, struct tracer *tr, const struct avt_alloc_rec *a)
{
	struct replay *rp = ctx;
	struct avt_alloc_rec *n = realloc(rp->allocs, (rp->nallocs + 1) * sizeof *n);
	if (!n)
		return;
	rp->allocs = n;
	rp->allocs[rp->nallocs++] = *a;
}

static void rp_stack(void *ctx, struct tracer *tr, uint64_t seq, const struct avt_frame *f,
		     uint32_t depth)
{
	struct replay *rp = ctx;
	free(rp->bt);
	rp->bt = malloc(depth * sizeof *f);
	if (rp->bt) {
		memcpy(rp->bt, f, depth * sizeof *f);
		rp->nbt = depth;
	}
}

int replay_launch(struct replay *rp)
{
	if (!rp->opts.keep_stdout) {
		snprintf(rp->stdout_path, sizeof rp->stdout_path, "/tmp/avtrace-stdout.XXXXXX");
		rp->stdout_fd = mkstemp(rp->stdout_path);
		if (rp->stdout_fd >= 0)
			unlink(rp->stdout_path);
	}
	if (rp->opts.capture_stderr && !rp->opts.gdb) {
		char path[64] = "/tmp/avtrace-stderr.XXXXXX";
		rp->stderr_fd = mkstemp(path);
		if (rp->stderr_fd >= 0)
			unlink(path);
	}
	/* the recording's stdin, if it kept one: every run reads the same */
	char in[4200];
	snprintf(in, sizeof in, "%s/stdin", rp->opts.dir);
	struct tracer_opts to = {
		.stdin_path = access(in, R_OK) == 0 ? in : NULL,
		.argv = rp->argv, .cwd = rp->cwd, .envp = rp->envp, .cpu = rp->opts.cpu,
		.slice_ms = 10, .stdout_fd = rp->stdout_fd, .no_heap = rp->no_heap,
		.stderr_fd = rp->stderr_fd > 0 ? rp->stderr_fd : 0,
		.watch = (const char *const *)rp->watch, .nwatch = rp->nwatch,
		.own_session = rp->opts.gdb,
		.sync_sleeps = true,
		.access = rp->access, .access_budget = rp->access_budget,
		.access_scope = rp->access_scope,
		.fork_path = rp->fork_path, .nfork_path = rp->nfork_path,
		.sync_spec = rp->sync_spec, .sync_spec_name = rp->sync_spec_name,
		.futex = rp->futex,
	};
	/* the recording's fast path: the same environment (the agent is
	 * preloaded either way), the run token handed out step by step */
	if (rp->agent && !rp->opts.no_agent) {
		to.agent_lib = tracer_agent_lib_default();
		if (!to.agent_lib)
			avt_warn("cannot find libavtrace-agent.so: replaying on ptrace alone");
	}
	/* never NULL in a replay: "no removals" is a decision too */
	static const struct avt_disarm_rec none;
	to.disarms = rp->trace && rp->trace->ndisarms ? rp->trace->disarms : &none;
	to.ndisarms = rp->trace ? rp->trace->ndisarms : 0;
	if (site_lids(rp) < 0) {
		avt_error("cannot replay: out of memory");
		return -1;
	}
	static const struct tracer_site_lids no_lids;
	to.site_lids = rp->site_lids ? rp->site_lids : &no_lids; /* a replay: known */
	to.nsite_lids = rp->nsite_lids;
	struct tracer_sink sink = {
		.ctx = rp, .event = policy_event, .pick = policy_pick, .allow = policy_allow,
		.module = rp_module,
		.stack = rp_stack, .alloc = rp_alloc, .signal = policy_signal,
	};
	rp->tr = tracer_new(&to, &sink);
	rp->t0 = mono();
	if (!rp->tr) {
		avt_error("cannot replay: out of memory");
		return -1;
	}
	if (tracer_launch(rp->tr) < 0)
		return -1;
	return 0;
}

bool replay_step(struct replay *rp)
{
	rp->last_step = tracer_step(rp->tr);
	return rp->last_step == TSTEP_CONTINUE && !rp->stop;
}

static int run_oracle(struct replay *rp)
{
	if (!rp->opts.oracle || rp->stdout_fd < 0)
		return 0;
	lseek(rp->stdout_fd, 0, SEEK_SET);
	pid_t p = fork();
	if (p == 0) {
		dup2(rp->stdout_fd, 0);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl("/bin/sh", "sh", "-c", rp->opts.oracle, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	pid_t w = -1;
	while (p > 0 && (w = waitpid(p, &st, 0)) < 0 && errno == EINTR)
		; /* the tracer's tick */
	if (p < 0 || w < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void collect_waits(struct replay *rp, struct replay_result *res)
{
	size_t n = tracer_nthreads(rp->tr);
	res->waits = calloc(n ? n : 1, sizeof *res->waits);
	for (size_t i = 0; res->waits && i < n; i++) {
		struct tthread *t = tracer_thread(rp->tr, (uint32_t)i);
		uint64_t obj;
		uint32_t holder;
		const char *what = t && t->state != TS_DEAD ? tracer_blocked_on(rp->tr, t, &obj, &holder) : NULL;
		if (!what)
			continue;
		struct replay_wait *w = &res->waits[res->nwaits++];
		w->thread = t->lid;
		snprintf(w->what, sizeof w->what, "%s", what);
		w->obj = obj;
		w->holder = holder;
		/* the request it is stuck at is its "last event" for the report */
		if (t->state == TS_REQ) {
			memset(&w->last, 0, sizeof w->last);
			w->last.thread = t->lid;
			w->last.kind = t->req.kind ? t->req.kind : AVT_EV_ACQUIRE;
			w->last.obj = t->req.obj;
			tracer_site(rp->tr, t->req.site, &w->last.site_mod, &w->last.site_off);
			w->has_last = true;
		} else {
			/* asleep in a wait (cond, barrier, sem): the wait's own
			 * event is its last one, and names the line */
			for (size_t k = rp->nev; k-- > 0;)
				if (rp->ev[k].thread == t->lid) {
					w->last = rp->ev[k];
					w->has_last = true;
					break;
				}
		}
	}
}

/* The last lines of the captured stderr (REPLAY_STDERR_LINES,
 * REPLAY_STDERR_BYTES) into res: what an assert or a sanitizer said. */
static void stderr_tail(struct replay *rp, struct replay_result *res)
{
	struct stat st;
	if (rp->stderr_fd < 0 || fstat(rp->stderr_fd, &st) < 0 || st.st_size <= 0)
		return;
	off_t off = st.st_size > REPLAY_STDERR_BYTES ? st.st_size - REPLAY_STDERR_BYTES : 0;
	char *buf = malloc(REPLAY_STDERR_BYTES + 1);
	ssize_t n = buf ? pread(rp->stderr_fd, buf, REPLAY_STDERR_BYTES, off) : -1;
	if (n <= 0) {
		free(buf);
		return;
	}
	buf[n] = 0;
	char *start = buf;
	res->stderr_cut = off > 0;
	if (off > 0) { /* from the first whole line */
		char *nl = memchr(buf, '\n', (size_t)n);
		if (nl && nl + 1 < buf + n)
			start = nl + 1;
	}
	/* the last REPLAY_STDERR_LINES lines (a final newline ends the last) */
	size_t len = strlen(start), lines = 0;
	for (size_t i = len; i > 0; i--)
		if (start[i - 1] == '\n' && i < len && ++lines == REPLAY_STDERR_LINES) {
			start += i;
			res->stderr_cut = true;
			break;
		}
	for (char *p = start; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
			*p = '?';
	memmove(buf, start, strlen(start) + 1);
	res->stderr_tail = buf;
}

void replay_stderr_copy(struct replay *rp, FILE *f)
{
	char buf[4096];
	ssize_t n;
	off_t off = 0;
	if (rp->stderr_fd < 0)
		return;
	while ((n = pread(rp->stderr_fd, buf, sizeof buf, off)) > 0) {
		fwrite(buf, 1, (size_t)n, f);
		off += n;
	}
	fflush(f);
}

void replay_finish(struct replay *rp, struct replay_result *res)
{
	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	/* the last event may have completed the last step; yields left at
	 * the end ask for nothing more */
	while (!rp->in_free && (rp->left == 0 || rp->sched->steps[rp->step].kind == SCHED_YIELD)) {
		if (++rp->step >= rp->sched->nsteps)
			rp->in_free = true;
		else
			rp->left = rp->sched->steps[rp->step].count;
	}
	bool exited = rp->last_step == TSTEP_EXITED;
	if (rp->opts.gdb && rp->tr && !exited && (rp->fatal_sig || rp->in_free || !rp->stop)) {
		res->gdb_pid = tracer_detach_stopped(rp->tr);
	}
	if (tracer_interrupted()) {
		res->outcome = RO_ERROR;
		snprintf(res->reason, sizeof res->reason, "interrupted by SIG%s",
			 sigabbrev_np(tracer_interrupted()) ?: "?");
	} else if (rp->last_step == TSTEP_DEADLOCK && !rp->stop) {
		res->outcome = RO_DEADLOCK;
		collect_waits(rp, res);
		snprintf(res->reason, sizeof res->reason, "every live thread is blocked");
	} else if (rp->fatal_sig) {
		res->outcome = RO_BUG;
		res->signal = rp->fatal_sig;
		res->fail_thread = rp->fatal_thread;
		snprintf(res->reason, sizeof res->reason, "SIG%s in T%u", sigabbrev_np(rp->fatal_sig) ?: "?",
			 rp->fatal_thread);
	} else if (rp->stop) {
		res->outcome = rp->outcome;
		snprintf(res->reason, sizeof res->reason, "%s", rp->reason);
	} else if (rp->last_step == TSTEP_ERROR || !rp->tr) {
		res->outcome = RO_ERROR;
		snprintf(res->reason, sizeof res->reason, "tracer error");
	} else if (exited && !rp->in_free) {
		res->outcome = RO_INFEASIBLE;
		snprintf(res->reason, sizeof res->reason,
			 "the program exited (status %d) before step %zu of the schedule",
			 tracer_exit_status(rp->tr), rp->step + 1);
	} else if (exited) {
		int st = tracer_exit_status(rp->tr);
		res->exit_status = st;
		int oracle = st == 0 ? run_oracle(rp) : 0;
		res->outcome = st != 0 || oracle != 0 ? RO_BUG : RO_PASS;
		if (st)
			snprintf(res->reason, sizeof res->reason, "exit status %d", st);
		else if (oracle)
			snprintf(res->reason, sizeof res->reason, "the oracle '%s' failed (status %d)",
				 rp->opts.oracle, oracle);
	}
	if (rp->tr && !res->gdb_pid)
		tracer_kill(rp->tr);
	stderr_tail(rp, res);
	if (rp->tr) {
		res->agent_events = tracer_stats(rp->tr)->agent_events;
		res->stops = tracer_stats(rp->tr)->stops;
		res->stuck_waits = tracer_stats(rp->tr)->stuck_waits;
		res->agent_handovers = tracer_stats(rp->tr)->agent_handovers;
		res->agent_scripts = tracer_stats(rp->tr)->agent_scripts;
		res->agent_extras = tracer_stats(rp->tr)->agent_extras;
	}
	res->step = rp->step + (rp->in_free ? 0 : 1);
	res->in_free = rp->in_free;
	res->has_divergence = rp->has_div;
	res->expected = rp->expected;
	res->actual = rp->actual;
	res->actual_missing = rp->actual_missing;
	res->ev = rp->ev;
	res->nev = rp->nev;
	res->marks = rp->marks;
	res->nmarks = rp->nmarks;
	rp->marks = NULL;
	rp->nmarks = rp->markcap = 0;
	rp->ev = NULL;
	rp->nev = rp->evcap = 0;
	res->bt = rp->bt;
	res->nbt = rp->nbt;
	rp->bt = NULL;
	res->seconds = mono() - rp->t0;
}

void replay_result_release(struct replay_result *r)
{
	free(r->ev);
	free(r->marks);
	free(r->bt);
	free(r->waits);
	free(r->stderr_tail);
	memset(r, 0, sizeof *r);
}

const struct trace *replay_trace(const struct replay *rp)
{
	return rp->trace;
}

const struct schedule *replay_schedule(const struct replay *rp)
{
	return rp->sched;
}

const char *rp_obj_name(struct replay *rp, const char *what, uint64_t obj, char *buf, size_t len)
{
	if (what && !strcmp(what, "join"))
		snprintf(buf, len, "T%llu", (unsigned long long)obj);
	else if (!rp->sym || !sym_var_name(rp->sym, obj, buf, len))
		snprintf(buf, len, "0x%llx", (unsigned long long)obj);
	return buf;
}

void replay_free(struct replay *rp)
{
	if (!rp)
		return;
	sym_free(rp->sym);
	tracer_free(rp->tr);
	trace_free(rp->trace);
	schedule_free(rp->sched);
	free_strv(rp->argv);
	free_strv(rp->envp);
	free_strv(rp->watch);
	free(rp->access_scope);
	free(rp->sync_spec);
	free(rp->sync_spec_name);
	free(rp->cwd);
	free(rp->exe);
	for (size_t k = 0; rp->texp && k < rp->nthreads; k++)
		free(rp->texp[k]);
	free(rp->texp);
	free(rp->site_lids);
	free(rp->ntexp);
	free(rp->ev);
	free(rp->marks);
	free(rp->bt);
	free(rp->allocs);
	free(rp->sigs);
	free(rp->sig_state);
	for (size_t i = 0; i < rp->nmods; i++)
		free(rp->modpaths[i]);
	free(rp->modpaths);
	free(rp->mods);
	if (rp->stdout_fd >= 0)
		close(rp->stdout_fd);
	if (rp->stderr_fd >= 0)
		close(rp->stderr_fd);
	free(rp);
}

static json_t *event_json(const struct avt_event *e)
{
	char obj[32];
	snprintf(obj, sizeof obj, "0x%llx", (unsigned long long)e->obj);
	return json_pack("{s:I,s:I,s:s,s:s,s:i,s:I}", "seq", (json_int_t)e->seq, "thread",
			 (json_int_t)e->thread, "kind", avt_kind_name(e->kind) ?: "?", "obj", obj,
			 "site_mod", (int)e->site_mod, "site_off", (json_int_t)e->site_off);
}

/* The access breakpoints the run removed, and when, were the
 * recording's (by site and hits, replay_launch): its trace carries them,
 * or a replay of it (explore's check of a failing run) removed none and
 * met accesses the run never made ("T2's event N differs from the
 * recording").  Before the events: what the run was given to follow. */
static void write_disarms(struct trace_writer *w, const struct replay *rp)
{
	for (size_t i = 0; rp->trace && i < rp->trace->ndisarms; i++) {
		struct avt_disarm_rec d = rp->trace->disarms[i];
		d.after_seq = 0;
		trace_write_disarm(w, &d);
	}
}

/* The run's trace: the recording's modules and disarms, its events with
 * allocations and signals where they happened, the failure's stack; none
 * at all rather than a partial one.  -1 after an error (reported). */
static int write_run_trace(const struct replay *rp, const struct replay_result *res, const char *trace_path)
{
	int rc = 0;
	char err[256];
	struct trace_writer *w = trace_writer_open(trace_path, err, sizeof err);
	if (!w) {
		avt_error("%s", err);
		return -1;
	}
	for (size_t i = 0; i < rp->nmods; i++)
		trace_write_module(w, &rp->mods[i], rp->modpaths[i]);
	write_disarms(w, rp);
	size_t a = 0, g = 0;
	for (size_t i = 0; i < res->nev; i++) {
		/* allocations and signals interleaved where they happened */
		for (; a < rp->nallocs && rp->allocs[a].after_seq <= res->ev[i].seq; a++)
			trace_write_alloc(w, &rp->allocs[a]);
		for (; g < rp->nsigs && rp->sigs[g].after_seq <= i; g++)
			trace_write_signal(w, &rp->sigs[g]);
		trace_write_event(w, &res->ev[i]);
	}
	for (; a < rp->nallocs; a++)
		trace_write_alloc(w, &rp->allocs[a]);
	for (; g < rp->nsigs; g++)
		trace_write_signal(w, &rp->sigs[g]);
	if (res->nbt && res->nev)
		trace_write_stack(w, res->ev[res->nev - 1].seq, res->bt, res->nbt);
	if (trace_writer_close(w) < 0) {
		/* reported by the writer; a partial trace is worse than none */
		unlink(trace_path);
		rc = -1;
	}
	return rc;
}

/* The run's result as JSON (the outcome, the divergence, the backtrace),
 * written to a .tmp and renamed.  -1 after an error (reported). */
static int write_run_json(const struct replay *rp, const struct replay_result *res, const char *json_path)
{
	int rc = 0;
	json_t *o = json_object();
	json_object_set_new(o, "schedule", json_integer(rp->opts.schedule));
	json_object_set_new(o, "outcome", json_string(replay_outcome_name(res->outcome)));
	json_object_set_new(o, "reason", json_string(res->reason));
	json_object_set_new(o, "step", json_integer((json_int_t)res->step));
	json_object_set_new(o, "events", json_integer((json_int_t)res->nev));
	json_object_set_new(o, "exit_status", json_integer(res->exit_status));
	json_object_set_new(o, "signal", json_integer(res->signal));
	json_object_set_new(o, "seconds", json_real(res->seconds));
	json_object_set_new(o, "agent_events", json_integer((json_int_t)res->agent_events));
	json_object_set_new(o, "stuck_waits", json_integer((json_int_t)res->stuck_waits));
	json_object_set_new(o, "agent_scripts", json_integer((json_int_t)res->agent_scripts));
	json_object_set_new(o, "agent_handovers", json_integer((json_int_t)res->agent_handovers));
	json_object_set_new(o, "agent_extras", json_integer((json_int_t)res->agent_extras));
	if (res->stderr_tail) {
		json_t *err = json_string(res->stderr_tail);
		if (!err) { /* not UTF-8: its ASCII */
			char *a = strdup(res->stderr_tail);
			for (char *p = a; p && *p; p++)
				if ((unsigned char)*p >= 0x80)
					*p = '?';
			err = a ? json_string(a) : NULL;
			free(a);
		}
		if (err) {
			json_object_set_new(o, "stderr", err);
			json_object_set_new(o, "stderr_truncated", json_boolean(res->stderr_cut));
		}
	}
	if (res->has_divergence) {
		if (res->expected.kind)
			json_object_set_new(o, "expected", event_json(&res->expected));
		if (!res->actual_missing)
			json_object_set_new(o, "actual", event_json(&res->actual));
	}
	json_t *bt = json_array();
	for (uint32_t i = 0; i < res->nbt; i++)
		json_array_append_new(bt, json_pack("{s:i,s:I}", "mod", (int)res->bt[i].mod, "off",
						    (json_int_t)res->bt[i].off));
	json_object_set_new(o, "backtrace", bt);
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.tmp", json_path);
	errno = 0;
	if (json_dump_file(o, tmp, JSON_INDENT(2)) < 0 || rename(tmp, json_path) < 0) {
		avt_write_error("cannot write '%s': %s", json_path, strerror(errno ? errno : EIO));
		unlink(tmp);
		rc = -1;
	}
	json_decref(o);
	return rc;
}

int replay_write(const struct replay *rp, const struct replay_result *res,
		 const char *trace_path, const char *json_path, const char *unused)
{
	int rc = 0;
	if (trace_path && write_run_trace(rp, res, trace_path) < 0)
		rc = -1;
	if (json_path && write_run_json(rp, res, json_path) < 0)
		rc = -1;
	(void)unused;
	return rc;
}
