#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elfmod.h"
#include "trace/log.h"
#include "trace/schedule.h"
#include "trace/trace.h"
#include "trace/version.h"

struct recorder {
	struct record_opts opts;
	struct tracer *tr;
	struct trace_writer *w;
	char *dir;
	struct timespec t0;
	uint16_t last_kind;   /* kind of the last event written */
	/* schedule 0, the recorded order, built as the events are written
	 * (NULL once out of memory: then read back from the trace) */
	struct schedule *observed;
	uint64_t last_flush_ns;
	pid_t tee;            /* copies avtrace's stdin to PROG and DIR/stdin */
	int tee_fd;           /* PROG's end of that pipe, until launched */
};

const char *fmt_thousands(unsigned long long v, char *buf, size_t len)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%llu", v), j = 0;
	for (int i = 0; i < n && (size_t)j + 1 < len; i++) {
		if (i && (n - i) % 3 == 0 && (size_t)j + 2 < len)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = 0;
	return buf;
}

/* ---- output directory */

/* Files and folders avtrace writes into an output directory: --force may
 * replace these and nothing else. */
static const char *const our_entries[] = {
	"trace.avt", "meta.json", "predictions.json", "schedules", "replays", "reports",
	"explore", "stdin", "procs", "tree.json", NULL,
};

static bool is_ours(const char *name)
{
	for (int i = 0; our_entries[i]; i++)
		if (!strcmp(name, our_entries[i]) || !strncmp(name, "trace.avt.", 10) ||
		    !strncmp(name, "meta.json.", 10))
			return true;
	return false;
}

static int rm_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *e;
	char sub[4096];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		rm_tree(sub);
	}
	closedir(d);
	return rmdir(path);
}

int outdir_prepare(const char *dir, bool force)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			avt_error("output directory '%s' is not a directory", dir);
			return -1;
		}
		DIR *d = opendir(dir);
		if (!d) {
			avt_error("cannot open output directory '%s': %s", dir, strerror(errno));
			return -1;
		}
		struct dirent *e;
		bool empty = true, foreign = false;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			empty = false;
			if (!is_ours(e->d_name))
				foreign = true;
		}
		closedir(d);
		if (!empty && !force) {
			avt_error("output directory '%s' already exists (use --force to replace it, or -o DIR)", dir);
			return -1;
		}
		if (!empty && foreign) {
			avt_error("output directory '%s' holds files avtrace did not write: refusing to replace it", dir);
			return -1;
		}
		char sub[4096];
		for (int i = 0; our_entries[i]; i++) {
			snprintf(sub, sizeof sub, "%s/%s", dir, our_entries[i]);
			rm_tree(sub);
		}
	} else if (mkdir(dir, 0777) < 0) {
		avt_error("cannot create output directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (access(dir, W_OK) < 0) {
		avt_error("cannot write to output directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* What a killed record may lose at most: events are on disk within this. */
#define FLUSH_PERIOD_NS (100 * 1000 * 1000ull)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stdin

 * What PROG reads on stdin is kept in DIR/stdin so that every replay and
 * explored run reads the same (docs/trace-format.md).  A child process
 * copies avtrace's stdin to PROG through a pipe and to the file, as PROG
 * reads it: a stream that never ends is fine, and PROG sees no difference
 * but a pipe instead of its original stdin. */
#define STDIN_KEEP_MAX (1ull << 30)

static void tee_loop(int out, int to_prog)
{
	static char buf[65536];
	uint64_t kept = 0;
	for (;;) {
		ssize_t n = read(0, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		if (kept < STDIN_KEEP_MAX && write(out, buf, (size_t)n) != n)
			kept = STDIN_KEEP_MAX; /* a full disk: PROG still gets its input */
		kept += (uint64_t)n;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to_prog, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(0); /* PROG closed its stdin or ended */
			off += w;
		}
	}
}

static int stdin_tee_start(struct recorder *rec)
{
	char path[4200];
	int p[2];
	snprintf(path, sizeof path, "%s/stdin", rec->dir);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0 || pipe2(p, O_CLOEXEC) < 0) {
		avt_error("cannot keep stdin in '%s': %s", path, strerror(errno));
		if (out >= 0)
			close(out);
		return -1;
	}
	pid_t parent = getpid();
	rec->tee = fork();
	if (rec->tee == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGINT, SIG_IGN); /* the supervisor decides when it ends */
		close(p[0]);
		tee_loop(out, p[1]);
	}
	close(out);
	close(p[1]);
	if (rec->tee < 0) {
		close(p[0]);
		rec->tee = 0;
		return -1;
	}
	rec->tee_fd = p[0];
	return 0;
}

/* PROG is gone: what it read is in the file (written before the pipe). */
static void stdin_tee_stop(struct recorder *rec)
{
	if (rec->tee_fd > 0)
		close(rec->tee_fd);
	rec->tee_fd = 0;
	if (rec->tee > 0 && !(rec->tr && tracer_feeder_gone(rec->tr))) {
		kill(rec->tee, SIGKILL);
		waitpid(rec->tee, NULL, 0);
	}
	rec->tee = 0;
}

/* ---- the sink */

static int rec_event(void *ctx, struct tracer *tr, const struct avt_event *ev)
{
	struct recorder *rec = ctx;
	if (trace_write_event(rec->w, ev) < 0)
		return -1;
	rec->last_kind = ev->kind;
	if (rec->observed && schedule_append_run(rec->observed, ev->thread, 1) < 0) {
		schedule_free(rec->observed);
		rec->observed = NULL;
	}
	/* a crash of the target must leave every event before it on disk */
	if (ev->kind == AVT_EV_FATAL_SIGNAL)
		trace_writer_flush(rec->w);
	return 0;
}

static void rec_thread(void *ctx, struct tracer *tr, const struct avt_thread_rec *th)
{
	struct recorder *rec = ctx;
	trace_write_thread(rec->w, th);
}

static void rec_module(void *ctx, struct tracer *tr, const struct avt_module_rec *m,
		       const char *path)
{
	struct recorder *rec = ctx;
	trace_write_module(rec->w, m, path);
}

static void rec_stack(void *ctx, struct tracer *tr, uint64_t seq, const struct avt_frame *f,
		      uint32_t depth)
{
	struct recorder *rec = ctx;
	trace_write_stack(rec->w, seq, f, depth);
	if (rec->last_kind == AVT_EV_FATAL_SIGNAL) /* the crash's backtrace */
		trace_writer_flush(rec->w);
}

static void rec_alloc(void *ctx, struct tracer *tr, const struct avt_alloc_rec *a)
{
	struct recorder *rec = ctx;
	trace_write_alloc(rec->w, a);
}

static void rec_note(void *ctx, struct tracer *tr, const char *text)
{
	struct recorder *rec = ctx;
	trace_write_note(rec->w, text);
}

static void rec_disarm(void *ctx, struct tracer *tr, const struct avt_disarm_rec *d)
{
	struct recorder *rec = ctx;
	trace_write_disarm(rec->w, d);
}

/* A caught asynchronous signal: delivered as it comes, and where it came
 * noted, for replays to deliver it there (tracer/signals.c). */
static bool rec_signal(void *ctx, struct tracer *tr, const struct tthread *t, int sig, bool raised)
{
	struct recorder *rec = ctx;
	(void)tr;
	(void)raised;
	struct avt_signal_rec s = { .thread = t->lid, .tindex = t->nevents, .signo = (uint16_t)sig };
	trace_write_signal(rec->w, &s);
	return true;
}

static int rec_pick(void *ctx, struct tracer *tr, struct tthread **run, size_t nrun,
		    struct tthread **last, size_t nlast, bool *use_last)
{
	return tracer_pick_round_robin(tr, run, nrun, last, nlast, use_last);
}

struct recorder *record_start(const struct record_opts *opts)
{
	struct recorder *rec = calloc(1, sizeof *rec);
	if (!rec)
		return NULL;
	rec->opts = *opts;
	rec->dir = strdup(opts->dir);
	rec->observed = schedule_new();
	struct tracer_opts to = {
		.argv = opts->argv, .cwd = opts->cwd, .envp = opts->envp,
		.fork_path = opts->fork_path, .nfork_path = opts->nfork_path,
		.cpu = opts->cpu, .slice_ms = opts->slice_ms,
		.quiet_target = opts->quiet_target, .stdout_fd = -1, .no_heap = opts->no_heap,
		.watch = opts->watch, .nwatch = opts->nwatch,
		/* access breakpoints replaced the automatic watchpoints */
		.access = !opts->no_auto_watch,
		.access_budget = opts->access_budget,
		.access_scope = opts->access_scope,
		.stack_depth = opts->stack_depth, .agent_lib = opts->agent_lib,
		.sync_spec = opts->sync_spec, .sync_spec_name = opts->sync_spec_name,
		.futex = opts->futex,
	};
	struct tracer_sink sink = {
		.ctx = rec, .event = rec_event, .pick = rec_pick, .thread = rec_thread,
		.module = rec_module, .note = rec_note, .stack = rec_stack, .alloc = rec_alloc,
		.disarm = rec_disarm, .signal = rec_signal, .drain_running = true,
		.keeps_yielder = true,
	};
	rec->tr = tracer_new(&to, &sink);
	if (!rec->tr || tracer_check(rec->tr) < 0 || outdir_prepare(opts->dir, opts->force) < 0 ||
	    (opts->keep_stdin && stdin_tee_start(rec) < 0)) {
		record_free(rec);
		return NULL;
	}
	tracer_set_stdin(rec->tr, rec->tee_fd, rec->tee);
	char path[4096], err[512];
	snprintf(path, sizeof path, "%s/trace.avt", opts->dir);
	rec->w = trace_writer_open(path, err, sizeof err);
	if (!rec->w) {
		avt_error("%s", err);
		record_free(rec);
		return NULL;
	}
	/* a record killed at any moment leaves a trace dump can read */
	trace_writer_flush(rec->w);
	rec->last_flush_ns = now_ns();
	clock_gettime(CLOCK_MONOTONIC, &rec->t0);
	int launched = tracer_launch(rec->tr);
	if (rec->tee_fd > 0) { /* PROG has it now */
		close(rec->tee_fd);
		rec->tee_fd = 0;
	}
	if (launched < 0) {
		trace_writer_close(rec->w);
		rec->w = NULL;
		unlink(path); /* nothing half-written that dump would take for a trace */
		if (opts->keep_stdin) { /* nor a stdin no recording goes with */
			stdin_tee_stop(rec);
			snprintf(path, sizeof path, "%s/stdin", opts->dir);
			unlink(path);
		}
		record_free(rec);
		return NULL;
	}
	return rec;
}

enum tstep record_step(struct recorder *rec)
{
	enum tstep st = tracer_step(rec->tr);
	uint64_t now = now_ns();
	if (now - rec->last_flush_ns >= FLUSH_PERIOD_NS) {
		trace_writer_flush(rec->w);
		rec->last_flush_ns = now;
	}
	return st;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void describe_deadlock(struct tracer *tr, struct record_result *res)
{
	char *buf = res->deadlock_desc;
	size_t off = 0, len = sizeof res->deadlock_desc;
	buf[0] = 0;
	res->nblocked = 0;
	for (size_t i = 0; i < tracer_nthreads(tr) && off < len; i++) {
		struct tthread *t = tracer_thread(tr, (uint32_t)i);
		uint64_t obj;
		uint32_t holder;
		const char *what = t && t->state != TS_DEAD ? tracer_blocked_on(tr, t, &obj, &holder) : NULL;
		if (!what)
			continue;
		if (res->nblocked < sizeof res->blocked / sizeof *res->blocked) {
			struct record_blocked *b = &res->blocked[res->nblocked++];
			b->lid = t->lid;
			b->holder = holder;
			b->obj = obj;
			snprintf(b->what, sizeof b->what, "%s", what);
		}
		int n;
		if (holder != UINT32_MAX)
			n = snprintf(buf + off, len - off, "%sT%u waits for %s 0x%llx held by T%u",
				     off ? "; " : "", t->lid, what, (unsigned long long)obj, holder);
		else
			n = snprintf(buf + off, len - off, "%sT%u waits for %s 0x%llx",
				     off ? "; " : "", t->lid, what, (unsigned long long)obj);
		if (n > 0)
			off += (size_t)n;
	}
}

static char *hex(const uint8_t *b, size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", b[i]);
	buf[2 * n] = 0;
	return buf;
}

/* The recording's options that its replays take again (heap, --futex,
 * access breakpoints, the sync spec) and what they did. */
static void meta_options(json_t *m, struct recorder *rec, const struct tracer_stats *st)
{
	json_object_set_new(m, "heap", json_boolean(!rec->opts.no_heap));
	json_object_set_new(m, "futex", json_boolean(rec->opts.futex));
	json_object_set_new(m, "futex_stops", json_integer((json_int_t)st->futex_stops));
	json_object_set_new(m, "access", json_boolean(tracer_access_on(rec->tr)));
	json_object_set_new(m, "access_budget", json_integer(rec->opts.access_budget));
	if (rec->opts.access_scope && *rec->opts.access_scope)
		json_object_set_new(m, "access_scope", json_string(rec->opts.access_scope));
	if (tracer_program(rec->tr))
		json_object_set_new(m, "program", json_string(tracer_program(rec->tr)));
	/* the spec itself: every replay plants the same hooks, wherever it runs */
	if (rec->opts.sync_spec) {
		json_object_set_new(m, "sync_spec", json_string(rec->opts.sync_spec));
		json_object_set_new(m, "sync_spec_file", json_string(rec->opts.sync_spec_name ? rec->opts.sync_spec_name : ""));
	}
	const struct tracer_access_stats *as = tracer_access_stats(rec->tr);
	json_object_set_new(m, "access_sites", json_integer(as->sites));
	json_object_set_new(m, "access_disarmed", json_integer(as->disarmed));
	json_object_set_new(m, "access_stubs", json_integer(as->stubs));
	json_object_set_new(m, "access_skipped", json_integer(as->skipped));
	json_object_set_new(m, "access_events", json_integer((json_int_t)as->events));
	json_object_set_new(m, "access_covers", json_integer(as->covers));
	json_object_set_new(m, "access_stack_escapes", json_integer(as->stack_escapes));
}

static int write_meta(struct recorder *rec, const struct record_result *res)
{
	json_t *m = json_object(), *argv = json_array();
	for (char *const *a = rec->opts.argv; *a; a++)
		json_array_append_new(argv, json_string(*a));
	char cwd[4096], bid[64] = "", path[4200], tmp[4300];
	if (rec->opts.cwd)
		snprintf(cwd, sizeof cwd, "%s", rec->opts.cwd);
	else if (!getcwd(cwd, sizeof cwd))
		cwd[0] = 0;
	const char *exe = tracer_exe(rec->tr);
	uint8_t id[20];
	int n = elf_build_id(exe, id, sizeof id);
	if (n > 0)
		hex(id, (size_t)n, bid);
	const struct tracer_stats *st = &res->stats;
	json_object_set_new(m, "avtrace_version", json_string(AVT_VERSION));
	json_object_set_new(m, "argv", argv);
	/* replay must pass the same environment: stack addresses move with it */
	json_t *env = json_array();
	extern char **environ;
	char *const *tenv = tracer_envp(rec->tr); /* --agent: with LD_PRELOAD */
	for (char *const *e = tenv ? tenv : environ; e && *e; e++)
		json_array_append_new(env, json_string(*e));
	json_object_set_new(m, "env", env);
	json_t *watch = json_array();
	for (size_t i = 0; i < tracer_watch_count(rec->tr); i++)
		json_array_append_new(watch, json_string(tracer_watch_name(rec->tr, i)));
	json_object_set_new(m, "watch", watch);
	meta_options(m, rec, st);
	json_object_set_new(m, "stack_depth", json_integer(rec->opts.stack_depth));
	json_object_set_new(m, "agent", rec->opts.agent_lib ? json_string(rec->opts.agent_lib) : json_false());
	json_object_set_new(m, "agent_events", json_integer((json_int_t)st->agent_events));
	json_object_set_new(m, "stuck_waits", json_integer((json_int_t)st->stuck_waits));
	json_object_set_new(m, "cwd", json_string(cwd));
	if (rec->opts.nfork_path) {
		json_t *fp = json_array();
		for (size_t i = 0; i < rec->opts.nfork_path; i++)
			json_array_append_new(fp, json_integer(rec->opts.fork_path[i]));
		json_object_set_new(m, "fork_path", fp);
	}
	if (rec->opts.origin) {
		json_t *o = json_loads(rec->opts.origin, 0, NULL);
		if (o)
			json_object_set_new(m, "process", o);
	}
	json_object_set_new(m, "executable", json_string(exe));
	json_object_set_new(m, "build_id", json_string(bid));
	json_object_set_new(m, "exit_status", res->deadlock ? json_null() : json_integer(res->exit_status));
	json_object_set_new(m, "signal", json_integer(tracer_exit_signal(rec->tr)));
	json_object_set_new(m, "deadlock", json_boolean(res->deadlock));
	if (tracer_interrupted())
		json_object_set_new(m, "interrupted", json_integer(tracer_interrupted()));
	if (rec->opts.keep_stdin)
		json_object_set_new(m, "stdin", json_string("stdin"));
	json_object_set_new(m, "events", json_integer((json_int_t)st->events));
	json_object_set_new(m, "threads", json_integer(st->threads));
	json_object_set_new(m, "mutexes", json_integer(st->mutexes));
	json_object_set_new(m, "condvars", json_integer(st->condvars));
	json_object_set_new(m, "heap_blocks", json_integer((json_int_t)st->heap_blocks));
	json_object_set_new(m, "agent_heap_calls", json_integer((json_int_t)st->agent_heap));
	json_object_set_new(m, "agent_drained_running", json_integer((json_int_t)st->agent_drained_running));
	json_object_set_new(m, "agent_yields", json_integer((json_int_t)st->agent_yields));
	json_object_set_new(m, "forks_untraced", json_integer(st->forks_untraced));
	json_object_set_new(m, "execs", json_integer(st->execs));
	json_object_set_new(m, "preemptions", json_integer(st->preemptions));
	json_object_set_new(m, "ptrace_stops", json_integer((json_int_t)st->stops));
	json_object_set_new(m, "seconds", json_real(res->seconds));
	snprintf(path, sizeof path, "%s/meta.json", rec->dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	errno = 0;
	int rc = json_dump_file(m, tmp, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(m);
	if (rc < 0 || rename(tmp, path) < 0) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The events' threads in the order written, run by run (the recorder's
 * own, or, had it run out of memory, the trace's read back). */
static struct schedule *observed_schedule(struct recorder *rec)
{
	struct schedule *s = rec->observed;
	rec->observed = NULL;
	if (s) {
		s->has_free = 1;
		return s;
	}
	char path[4200], err[512];
	snprintf(path, sizeof path, "%s/trace.avt", rec->dir);
	struct trace *t = trace_read(path, err, sizeof err);
	if (!t) {
		avt_error("%s", err);
		return NULL;
	}
	s = schedule_from_events(t->ev, t->nev);
	trace_free(t);
	return s;
}

static int write_observed_schedule(struct recorder *rec)
{
	char path[4200];
	struct schedule *s = observed_schedule(rec);
	if (!s)
		return -1;
	schedule_add_comment(s, "0: the recorded order");
	snprintf(path, sizeof path, "%s/schedules", rec->dir);
	mkdir(path, 0777);
	snprintf(path, sizeof path, "%s/schedules/0000.sched", rec->dir);
	int rc = schedule_write(s, path);
	schedule_free(s);
	return rc; /* schedule_write said why */
}

int record_finish(struct recorder *rec, enum tstep last, struct record_result *res)
{
	memset(res, 0, sizeof *res);
	if (last == TSTEP_DEADLOCK) {
		res->deadlock = true;
		describe_deadlock(rec->tr, res);
		trace_write_note(rec->w, "deadlock");
	}
	if (tracer_interrupted()) {
		char note[64];
		snprintf(note, sizeof note, "interrupted by SIG%s", sigabbrev_np(tracer_interrupted()) ?: "?");
		trace_write_note(rec->w, note);
	}
	if (last != TSTEP_EXITED)
		tracer_kill(rec->tr);
	stdin_tee_stop(rec);
	res->exit_status = last == TSTEP_EXITED ? tracer_exit_status(rec->tr) : -1;
	res->seconds = elapsed(&rec->t0);
	res->stats = *tracer_stats(rec->tr);
	res->access_on = tracer_access_on(rec->tr);
	res->access = *tracer_access_stats(rec->tr);
	res->procs = tracer_take_tree(rec->tr, &res->nprocs, &res->focus);
	int rc = trace_writer_close(rec->w);
	rec->w = NULL;
	if (rc < 0) /* the writer said why */
		return -1;
	if (write_observed_schedule(rec) < 0 || write_meta(rec, res) < 0)
		return -1;
	return 0;
}

void record_tree_free(struct record_result *res)
{
	tracer_procs_free(res->procs, res->nprocs);
	res->procs = NULL;
	res->nprocs = 0;
}

struct tracer *record_tracer(struct recorder *rec)
{
	return rec->tr;
}

void record_free(struct recorder *rec)
{
	if (!rec)
		return;
	if (rec->w)
		trace_writer_close(rec->w);
	stdin_tee_stop(rec);
	tracer_free(rec->tr);
	schedule_free(rec->observed);
	free(rec->dir);
	free(rec);
}
