/* avtrace minimize, and the minimisation step of avtrace test: the fewest
 * context switches a reproduced bug needs (minimize/), each candidate an
 * ordinary replay in its own process, and the report that leads with them. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "minimize/minimize.h"
#include "names.h"
#include "pattern.h"
#include "trace/trace.h"
#include "trace/log.h"
#include "trace/schedule.h"

static const char minimize_help[] =
	"usage: avtrace minimize [-d DIR] --schedule N [options]\n"
	"       avtrace minimize [-d DIR] --file SCHED [options]\n"
	"\n"
	"Reduces the schedule of a reproduced bug to the fewest context switches\n"
	"(changes of thread between consecutive run/yield lines) that still fail\n"
	"the same way: the same outcome, signal or exit status and failure site\n"
	"(file:line).  Delta debugging over the switches: first every segment of\n"
	"events that touch nothing another thread touches is moved later, then the\n"
	"shortest failing prefix, then chunks of segments moved later (ddmin), then\n"
	"one segment at a time moved later or earlier until no single removal keeps\n"
	"the failure.  Each candidate is an ordinary replay ('avtrace replay\n"
	"--file'); one that is infeasible or fails otherwise does not count, one\n"
	"that fails counts only if it fails so again.  Then, for each switch left,\n"
	"the event after it is moved past the next events of the thread that gave\n"
	"way (up to where it holds no lock): the report says which of these\n"
	"passing neighbours pass.\n"
	"\n"	"Writes DIR/reports/X.min.sched (the minimal schedule, replayable with\n"
	"'avtrace replay -d DIR --file DIR/reports/X.min.sched') and\n"
	"DIR/reports/X.min.json (its replay's JSON with a \"switches\" array), X\n"
	"being NNNN for --schedule N and the file's name without .sched for\n"
	"--file; rewrites DIR/reports/X.txt, if there is one, to lead with the\n"
	"minimal schedule, and prints that report.\n"
	"Exit status: 0 minimised (or nothing to remove), 1 the schedule does not\n"
	"reproduce a bug, 2 error.\n"
	"\n"
	"options:\n"
	"  -d, --dir DIR        recording directory (default ./avtrace-out)\n"
	"  -s, --schedule N     schedule N (DIR/schedules/NNNN.sched); its replay\n"
	"                       DIR/replays/NNNN.json is the failure to keep, else\n"
	"                       it is replayed first\n"
	"      --file SCHED     a schedule file of your own (replayed first)\n"
	"      --max-replays N  try at most N candidates (default 40; 0: no cap);\n"
	"                       the neighbours (one per switch) come on top\n"
	"  -t, --timeout S      as for replay (default 2)\n"
	"  -q, --quiet          no report on stdout\n"
	"  -v, --verbose        one line per candidate on stderr\n";

/* What identifies a failure: outcome, signal, exit status, site. */
struct failure {
	char outcome[16];
	char signal[32];
	long long exit_status;
	char file[1024];
	long long line;
	char deadlock[1024]; /* the cycle: waits_for and object, in order */
};

static const char *js(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void failure_of(const json_t *j, struct failure *f)
{
	memset(f, 0, sizeof *f);
	snprintf(f->outcome, sizeof f->outcome, "%s", js(j, "outcome"));
	const json_t *fl = json_object_get(j, "failure");
	snprintf(f->signal, sizeof f->signal, "%s", js(fl, "signal"));
	f->exit_status = json_integer_value(json_object_get(j, "exit_status"));
	snprintf(f->file, sizeof f->file, "%s", js(fl, "file"));
	f->line = json_integer_value(json_object_get(fl, "line"));
	size_t i, off = 0;
	json_t *w;
	json_array_foreach(json_object_get(j, "deadlock"), i, w) {
		if (off < sizeof f->deadlock)
			off += (size_t)snprintf(f->deadlock + off, sizeof f->deadlock - off, "%s %s|",
						js(w, "waits_for"), js(w, "object"));
	}
}

static bool is_failure(const struct failure *f)
{
	return !strcmp(f->outcome, "BUG") || !strcmp(f->outcome, "DEADLOCK");
}

static bool same_failure(const struct failure *a, const struct failure *b)
{
	return !strcmp(a->outcome, b->outcome) && !strcmp(a->signal, b->signal) &&
	       a->exit_status == b->exit_status && !strcmp(a->file, b->file) && a->line == b->line &&
	       !strcmp(a->deadlock, b->deadlock);
}

/* One candidate replay. */
struct mctx {
	const char *dir, *timeout, *cand_path;
	const char *avt_keep; /* the kept replay's trace goes here */
	const struct quiet_map *quiet; /* or NULL */
	struct failure want;
	json_t *last;        /* the JSON of the last candidate replayed */
	json_t *kept;        /* of the last one that failed the same way */
	double seconds;      /* in replays */
	unsigned confirmations; /* second replays of candidates that failed */
};

/* Replays sched_path in a process of its own (stdout to /dev/null, stderr
 * kept for the results it could not write); its JSON
 * (DIR/replays/custom.json), or NULL. */
static json_t *replay_file(const char *dir, const char *sched_path, const char *timeout)
{
	char scpu[16], jpath[4200];
	snprintf(scpu, sizeof scpu, "%d", default_cpu());
	snprintf(jpath, sizeof jpath, "%s/replays/custom.json", dir);
	remove(jpath);
	fflush(NULL);
	pid_t parent = getpid();
	int err = memfd_create("avtrace-minimize-err", MFD_CLOEXEC);
	pid_t p = fork();
	if (p < 0) {
		if (err >= 0)
			close(err);
		return NULL;
	}
	if (p == 0) {
		cli_worker_dies_with_parent(parent);
		if (!freopen("/dev/null", "w", stdout) ||
		    (err >= 0 ? dup2(err, STDERR_FILENO) < 0 : !freopen("/dev/null", "w", stderr)))
			_exit(2);
		execl("/proc/self/exe", "avtrace", "replay", "-d", dir, "--file", sched_path, "--cpu", scpu,
		      "--timeout", timeout, (char *)NULL);
		_exit(2);
	}
	int st = 0;
	while (waitpid(p, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_USAGE)
		cli_worker_errors(err);
	if (err >= 0)
		close(err);
	return json_load_file(jpath, 0, NULL);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int candidate(void *ctx, const struct schedule *cand)
{
	struct mctx *m = ctx;
	if (schedule_write(cand, m->cand_path) < 0)
		return -1;
	double t0 = now_s();
	json_t *j = replay_file(m->dir, m->cand_path, m->timeout);
	m->seconds += now_s() - t0;
	if (!j) {
		if (!avt_nwrite_errors) /* else it said what it could not write */
			avt_error("cannot read the replay of candidate '%s'", m->cand_path);
		return -1;
	}
	struct failure f;
	failure_of(j, &f);
	int same = same_failure(&f, &m->want);
	if (same) {
		/* after "free" a run may depend on time slices: a schedule
		 * counts only if it fails so twice in a row */
		char avt[4300], keep[4400];
		snprintf(avt, sizeof avt, "%s/replays/custom.avt", m->dir);
		snprintf(keep, sizeof keep, "%s.try", m->avt_keep);
		if (rename(avt, keep) < 0)
			keep[0] = 0;
		t0 = now_s();
		json_t *again = replay_file(m->dir, m->cand_path, m->timeout);
		m->seconds += now_s() - t0;
		m->confirmations++;
		struct failure g;
		if (again)
			failure_of(again, &g);
		same = again && same_failure(&g, &m->want);
		json_decref(again);
		if (keep[0] && rename(keep, avt) < 0)
			remove(keep);
	}
	avt_debug("candidate with %zu switches: %s%s", min_count_switches(cand), f.outcome,
		  is_failure(&f) && !same ? " (another failure)" : "");
	json_decref(m->last);
	m->last = j;
	if (same) {
		char avt[4300];
		snprintf(avt, sizeof avt, "%s/replays/custom.avt", m->dir);
		json_decref(m->kept);
		m->kept = json_incref(j);
		if (rename(avt, m->avt_keep) < 0)
			avt_warn("cannot keep the trace of the minimal replay as '%s'", m->avt_keep);
	}
	return same;
}

/* Which recorded events commute with the other threads': for each thread,
 * loud[t][i] = how many of its first i events do not (they touch an object
 * another thread touches, or a thread: create, join, start, exit). */
struct quiet_map {
	size_t nthr;
	uint64_t **loud;
	uint64_t *nev;
	int32_t **held; /* held[t][i]: locks thread t holds after its first i events */
};

struct obj_thread {
	uint64_t obj;
	uint32_t thread;
};

static int cmp_ot(const void *a, const void *b)
{
	const struct obj_thread *x = a, *y = b;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* 1: the kind's objects are obj (and obj2); 0: no object (quiet); -1 loud */
static int kind_objects(unsigned kind)
{
	switch (kind) {
	case AVT_EV_ACQUIRE: case AVT_EV_RELEASE: case AVT_EV_TRYLOCK_FAIL: case AVT_EV_RD_ACQUIRE:
	case AVT_EV_WR_ACQUIRE: case AVT_EV_WAIT: case AVT_EV_SIGNAL: case AVT_EV_BROADCAST:
	case AVT_EV_BARRIER: case AVT_EV_SEM_WAIT: case AVT_EV_SEM_POST: case AVT_EV_READ:
	case AVT_EV_WRITE: case AVT_EV_RMW:
		return 1;
	case AVT_EV_BEGIN: case AVT_EV_END:
		return 0;
	default:
		return -1;
	}
}

static void quiet_map_release(struct quiet_map *q)
{
	for (size_t t = 0; q->loud && t < q->nthr; t++)
		free(q->loud[t]);
	for (size_t t = 0; q->held && t < q->nthr; t++)
		free(q->held[t]);
	free(q->loud);
	free(q->held);
	free(q->nev);
	memset(q, 0, sizeof *q);
}

static int quiet_map_init(struct quiet_map *q, const struct trace *tr)
{
	memset(q, 0, sizeof *q);
	q->nthr = trace_nthreads(tr);
	struct obj_thread *ot = malloc((2 * tr->nev + 1) * sizeof *ot);
	uint64_t *shared = malloc((2 * tr->nev + 1) * sizeof *shared);
	q->loud = calloc(q->nthr ? q->nthr : 1, sizeof *q->loud);
	q->held = calloc(q->nthr ? q->nthr : 1, sizeof *q->held);
	q->nev = calloc(q->nthr ? q->nthr : 1, sizeof *q->nev);
	if (!ot || !shared || !q->loud || !q->held || !q->nev) {
		free(ot);
		free(shared);
		quiet_map_release(q);
		return -1;
	}
	size_t n = 0, ns = 0;
	for (size_t i = 0; i < tr->nev; i++) {
		const struct avt_event *e = &tr->ev[i];
		if (e->thread < q->nthr && e->tindex + 1 > q->nev[e->thread])
			q->nev[e->thread] = e->tindex + 1;
		if (kind_objects(e->kind) != 1)
			continue;
		ot[n++] = (struct obj_thread){ e->obj, e->thread };
		if (e->obj2 && !(e->flags & AVT_F_VALUE)) /* a read's value is no object */
			ot[n++] = (struct obj_thread){ e->obj2, e->thread };
	}
	qsort(ot, n, sizeof *ot, cmp_ot);
	for (size_t i = 1; i < n; i++)
		if (ot[i].obj == ot[i - 1].obj && ot[i].thread != ot[i - 1].thread &&
		    (!ns || shared[ns - 1] != ot[i].obj))
			shared[ns++] = ot[i].obj;
	free(ot);
	int rc = 0;
	for (size_t t = 0; t < q->nthr; t++)
		if (!(q->loud[t] = calloc(q->nev[t] + 1, sizeof **q->loud)) ||
		    !(q->held[t] = calloc(q->nev[t] + 1, sizeof **q->held)))
			rc = -1;
	for (size_t i = 0; rc == 0 && i < tr->nev; i++) {
		const struct avt_event *e = &tr->ev[i];
		if (e->thread >= q->nthr)
			continue;
		int ko = kind_objects(e->kind);
		bool loud = ko < 0 ||
			    (ko == 1 && (bsearch(&e->obj, shared, ns, sizeof *shared, cmp_u64) ||
					 (e->obj2 && !(e->flags & AVT_F_VALUE) &&
					  bsearch(&e->obj2, shared, ns, sizeof *shared, cmp_u64))));
		q->loud[e->thread][e->tindex + 1] = loud; /* counts summed below */
		int d = 0;
		if (e->kind == AVT_EV_ACQUIRE || e->kind == AVT_EV_RD_ACQUIRE || e->kind == AVT_EV_WR_ACQUIRE)
			d = 1;
		else if (e->kind == AVT_EV_RELEASE || e->kind == AVT_EV_WAIT)
			d = -1;
		q->held[e->thread][e->tindex + 1] = d;
	}
	for (size_t t = 0; rc == 0 && t < q->nthr; t++)
		for (uint64_t i = 1; i <= q->nev[t]; i++) {
			q->loud[t][i] += q->loud[t][i - 1];
			q->held[t][i] += q->held[t][i - 1];
		}
	free(shared);
	if (rc < 0)
		quiet_map_release(q);
	return rc;
}

static bool quiet_events(void *ctx, uint32_t thread, uint64_t from, uint64_t n)
{
	const struct quiet_map *q = ((struct mctx *)ctx)->quiet;
	if (!q || thread >= q->nthr || from + n > q->nev[thread])
		return false;
	return q->loud[thread][from + n] == q->loud[thread][from];
}

/* The interleaving's event with index idx, or NULL. */
static json_t *event_at(const json_t *replay, long long idx)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(replay, "interleaving"), i, e)
		if (json_integer_value(json_object_get(e, "index")) == idx)
			return e;
	return NULL;
}

/* Index in the run of the first event of step k: the run steps before it. */
static long long events_before(const struct schedule *s, size_t k)
{
	long long n = 0;
	for (size_t i = 0; i < k && i < s->nsteps; i++)
		if (s->steps[i].kind == SCHED_RUN)
			n += s->steps[i].count;
	return n;
}

static json_t *switches_json(const struct schedule *s, const json_t *replay)
{
	struct min_switch *w;
	size_t n = min_list_switches(s, &w);
	json_t *a = json_array();
	for (size_t k = 0; n != (size_t)-1 && k < n; k++) {
		char from[16], to[16];
		snprintf(from, sizeof from, "T%u", w[k].from);
		snprintf(to, sizeof to, "T%u", w[k].to);
		long long at = events_before(s, w[k].step);
		json_t *b = event_at(replay, at - 1), *af = event_at(replay, at);
		json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:O, s:O}", "step",
						   (json_int_t)w[k].step + 1, "from", from, "to", to,
						   "before", b ? b : json_null(), "after",
						   af ? af : json_null()));
	}
	free(w);
	return a;
}

/* Per thread, its events in the recording (schedule 0, the observed
 * order).  Number of threads, 0 if unknown. */
static size_t recorded_counts(const char *dir, uint64_t **out)
{
	char path[4200], err[512];
	snprintf(path, sizeof path, "%s/schedules/0000.sched", dir);
	*out = NULL;
	struct schedule *s = schedule_read(path, err, sizeof err);
	if (!s)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].thread + 1 > n)
			n = s->steps[i].thread + 1;
	*out = calloc(n ? n : 1, sizeof **out);
	for (size_t i = 0; *out && i < s->nsteps; i++)
		if (s->steps[i].kind == SCHED_RUN)
			(*out)[s->steps[i].thread] += s->steps[i].count;
	schedule_free(s);
	return *out ? n : 0;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "T2's write of balance at bank.c:42" */
static void event_phrase(const json_t *e, char *buf, size_t len)
{
	if (!e) {
		snprintf(buf, len, "nothing");
		return;
	}
	const char *obj = js(e, "object"), *file = js(e, "file");
	char site[1100] = "";
	if (*file)
		snprintf(site, sizeof site, " at %s:%lld", base(file),
			 json_integer_value(json_object_get(e, "line")));
	snprintf(buf, len, "T%lld's %s%s%s%s", json_integer_value(json_object_get(e, "thread")),
		 js(e, "kind"), *obj ? " of " : "", obj, site);
}

/* "T1 read balance  bank.c:34 (deposit)" */
static void event_line(const json_t *e, char *buf, size_t len)
{
	if (!e) {
		snprintf(buf, len, "(none: the run starts here)");
		return;
	}
	const char *obj = js(e, "object"), *file = js(e, "file"), *fn = js(e, "function");
	char site[1200] = "";
	if (*file)
		snprintf(site, sizeof site, "  %s:%lld%s%s%s", base(file),
			 json_integer_value(json_object_get(e, "line")), *fn ? " (" : "", fn, *fn ? ")" : "");
	snprintf(buf, len, "T%lld %s%s%s%s", json_integer_value(json_object_get(e, "thread")),
		 js(e, "kind"), *obj ? " " : "", obj, site);
}

#define SHORT_SWITCHES 10 /* up to this many, two lines each */
#define MAX_SWITCH_LINES 20 /* switches in the text report at most */
#define WINDOW 2      /* events shown on each side of a switch */
#define FAIL_TAIL 3   /* events shown before the failure */
#define PATTERN_UNSEEN 4 /* pattern events named as missing from the events kept */

struct neighbour {
	bool tried, passes;
	uint32_t shift;      /* events of the thread that gave way moved before */
	char outcome[16];
	char moved[1400], past[1400]; /* event phrases */
};

/* The report that leads with the minimal schedule; fp gets it. */
/* The report's head: the headline, the failure, a deadlock's waits. */
static void report_failure(FILE *fp, const json_t *mj)
{
	size_t i;
	json_t *s;
	fprintf(fp, "%s\n", js(mj, "headline"));
	const json_t *f = json_object_get(mj, "failure");
	const char *file = js(f, "file");
	const char *sig = js(f, "signal");
	if (*sig)
		fprintf(fp, "the failure: %s in T%lld", sig, json_integer_value(json_object_get(f, "thread")));
	else if (!strcmp(js(mj, "outcome"), "DEADLOCK"))
		fprintf(fp, "the failure: a deadlock");
	else
		fprintf(fp, "the failure: exit status %lld in T%lld",
			json_integer_value(json_object_get(mj, "exit_status")),
			json_integer_value(json_object_get(f, "thread")));
	if (*file && strcmp(js(mj, "outcome"), "DEADLOCK"))
		fprintf(fp, " at %s:%lld%s%s%s", base(file), json_integer_value(json_object_get(f, "line")),
			*js(f, "function") ? " (" : "", js(f, "function"), *js(f, "function") ? ")" : "");
	fputc('\n', fp);
	json_array_foreach(json_object_get(mj, "deadlock"), i, s) {
		if (i == 4)
			break; /* the rest in the report below */
		const json_t *h = json_object_get(s, "holder");
		fprintf(fp, "  T%lld waits for %s %s", json_integer_value(json_object_get(s, "thread")),
			js(s, "waits_for"), js(s, "object"));
		if (*js(s, "file"))
			fprintf(fp, " at %s:%lld", base(js(s, "file")), json_integer_value(json_object_get(s, "line")));
		if (json_is_integer(h))
			fprintf(fp, " (held by T%lld)", json_integer_value(h));
		fputc('\n', fp);
	}
}

/* The switches the minimal schedule keeps, and the neighbours that pass. */
static void report_switches(FILE *fp, const char *dir, const char *x, const json_t *mj,
			    const json_t *sw, const struct schedule *ms, const struct neighbour *nb)
{
	const json_t *il = json_object_get(mj, "interleaving");
	long long first = json_integer_value(json_object_get(json_array_get(il, 0), "index"));
	size_t k = json_array_size(sw), i;
	char a[1600], b[1600];
	json_t *s;
	json_array_foreach(sw, i, s) {
		if (i == MAX_SWITCH_LINES) {
			fprintf(fp, "  ... and %zu more (%s/reports/%s.min.json)\n", k - i, dir, x);
			break;
		}
		event_line(json_object_get(s, "before"), a, sizeof a);
		event_line(json_object_get(s, "after"), b, sizeof b);
		/* no event there, though the run had one: the replay's JSON
		 * keeps the last events only */
		long long at = events_before(ms, (size_t)json_integer_value(json_object_get(s, "step")) - 1);
		if (at > 0 && at - 1 < first && json_is_null(json_object_get(s, "before")))
			snprintf(a, sizeof a, "(an event before those the replay kept)");
		if (at < first && json_is_null(json_object_get(s, "after")))
			snprintf(b, sizeof b, "(an event before those the replay kept)");
		/* more than SHORT_SWITCHES: one line each, so that the first
		 * screen still has them */
		fprintf(fp, "  %zu. step %lld, %s -> %s:  %s%s", i + 1,
			json_integer_value(json_object_get(s, "step")), js(s, "from"), js(s, "to"), a,
			k > SHORT_SWITCHES ? "  |  " : "\n     then ");
		fprintf(fp, "%s\n", b);
	}
	if (!k)
		fprintf(fp, "  none: the program fails this way with no thread forced to give way\n");
	for (i = 0; i < k; i++)
		if (nb[i].passes)
			fprintf(fp, "moving %s after %s makes it pass (switch %zu)\n", nb[i].moved, nb[i].past, i + 1);
}

/* Where each switch of ms lands in interleaving il (a position in il, or
 * outside it); the first MAX_SWITCH_LINES, those the report lists.  How
 * many, (size_t)-1 when out of memory. */
static size_t switch_positions(const json_t *il, const json_t *sw, const struct schedule *ms,
			       long long **out)
{
	size_t n = json_array_size(sw), i;
	long long first = json_array_size(il) ? json_integer_value(json_object_get(json_array_get(il, 0), "index")) : 0;
	if (n > MAX_SWITCH_LINES)
		n = MAX_SWITCH_LINES;
	*out = calloc(n ? n : 1, sizeof **out);
	if (!*out)
		return (size_t)-1;
	for (i = 0; i < n; i++) {
		long long step = json_integer_value(json_object_get(json_array_get(sw, i), "step"));
		(*out)[i] = events_before(ms, (size_t)step - 1) - first;
	}
	return n;
}

/* The events of interleaving il worth showing: the pattern's (mark, one
 * event per element of the prediction), those near a listed switch, the
 * last ones (the failure).  A bounded set: the rest is one dump away.
 * NULL when out of memory. */
static bool *events_shown(const json_t *il, const int *mark, const long long *at, size_t nat)
{
	size_t nev = json_array_size(il), i;
	bool *show = calloc(nev ? nev : 1, sizeof *show);
	for (i = 0; show && i < nev; i++)
		show[i] = mark[i] || i + FAIL_TAIL >= nev;
	for (i = 0; show && i < nat; i++)
		for (long long e = at[i] - WINDOW; e < at[i] + WINDOW; e++)
			if (e >= 0 && e < (long long)nev)
				show[e] = true;
	return show;
}

/* Is pe a request the deadlock left waiting (the failure's waits show
 * it: it never ran)? */
static bool deadlock_wait(const json_t *mj, const struct pattern_ev *pe)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(mj, "deadlock"), i, w)
		if (json_integer_value(json_object_get(w, "thread")) == pe->thread &&
		    (!*pe->object || !strcmp(js(w, "object"), pe->object)))
			return true;
	return false;
}

/* The pattern's events the interleaving does not hold (the replay's JSON
 * keeps the last events only): say which, so that no star is taken for
 * absent evidence. */
static void report_unseen(FILE *fp, const json_t *mj, const struct pattern *pat, const int *mark,
			  size_t nev)
{
	size_t unseen = 0;
	for (size_t j = 0; j < pat->n; j++) {
		bool seen = false;
		for (size_t i = 0; !seen && i < nev; i++)
			seen = mark[i] == (int)j + 1;
		if (seen || pat->ev[j].thread < 0 || deadlock_wait(mj, &pat->ev[j]))
			continue;
		if (unseen < PATTERN_UNSEEN)
			fprintf(fp, "%s%s", unseen ? ", " : "  not among these events: ", pat->ev[j].text);
		unseen++;
	}
	if (unseen > PATTERN_UNSEEN)
		fprintf(fp, " and %zu more", unseen - PATTERN_UNSEEN);
	if (unseen)
		fputc('\n', fp);
}

/* The events that matter: pattern, windows, the failure; then what was
 * left out, and where to see it (avt: the minimal replay's trace). */
static void report_events(FILE *fp, const json_t *mj, const json_t *sw, const struct schedule *ms,
			  const char *avt)
{
	const json_t *il = json_object_get(mj, "interleaving");
	size_t nev = json_array_size(il), k = json_array_size(sw), next_sw = 0, shown = 0;
	struct pattern pat;
	long long *at = NULL;
	size_t nat = (size_t)-1;
	int *mark = NULL;
	bool *show = NULL;
	if (pattern_init(&pat, json_object_get(mj, "predicted")) == 0) {
		nat = switch_positions(il, sw, ms, &at);
		mark = nat != (size_t)-1 ? pattern_mark(&pat, il, at, nat) : NULL;
		show = mark ? events_shown(il, mark, at, nat) : NULL;
	}
	char a[1600];
	fprintf(fp, "events that matter (* the predicted pattern; | a switch):\n");
	long long last = -1; /* the gap before the first shown counts from the run's start */
	for (size_t i = 0; show && i < nev; i++) {
		if (!show[i])
			continue;
		const json_t *e = json_array_get(il, i);
		long long idx = json_integer_value(json_object_get(e, "index"));
		if (idx > last + 1)
			fprintf(fp, "     ... %lld event%s\n", idx - last - 1, idx - last - 1 == 1 ? "" : "s");
		while (next_sw < k && events_before(ms, (size_t)json_integer_value(json_object_get(
						  json_array_get(sw, next_sw), "step")) - 1) < idx)
			next_sw++;
		bool at_sw = next_sw < k && events_before(ms, (size_t)json_integer_value(json_object_get(
						  json_array_get(sw, next_sw), "step")) - 1) == idx;
		event_line(e, a, sizeof a);
		fprintf(fp, "  %c%c%5lld %*s%s\n", at_sw ? '|' : ' ', mark[i] ? '*' : ' ', idx,
			(int)(2 * json_integer_value(json_object_get(e, "thread"))), "", a);
		last = idx;
		shown++;
	}
	if (show)
		report_unseen(fp, mj, &pat, mark, nev);
	/* the run's events, those the JSON left out before its first too */
	long long total = nev ? json_integer_value(json_object_get(json_array_get(il, nev - 1), "index")) + 1 : 0;
	fprintf(fp, "%lld of the run's %lld events not shown; every event: avtrace dump -d %s\n",
		total - (long long)shown, total, avt);
	free(show);
	free(mark);
	free(at);
	pattern_release(&pat);
}

static void write_report(FILE *fp, const char *dir, const char *x, const json_t *mj,
			 const struct schedule *ms, size_t from_sw, unsigned replays, double secs,
			 bool capped, const struct neighbour *nb, const char *replay_avt)
{
	const json_t *sw = json_object_get(mj, "switches");
	size_t k = json_array_size(sw);
	report_failure(fp, mj);
	fprintf(fp, "fails with these %zu switch%s (from %zu in the reproduced schedule; %u replays, %.1f s%s):\n",
		k, k == 1 ? "" : "es", from_sw, replays, secs, capped ? ", stopped at the cap" : "");
	report_switches(fp, dir, x, mj, sw, ms, nb);
	fprintf(fp, "replay it: avtrace replay -d %s --file %s/reports/%s.min.sched\n", dir, dir, x);
	fprintf(fp, "every event: avtrace dump -d %s; the reproduced schedule's full report is below\n",
		replay_avt);
	report_events(fp, mj, sw, ms, replay_avt);
	for (size_t i = 0; i < k; i++)
		if (nb[i].tried && !nb[i].passes)
			fprintf(fp, "switch %zu moved %u event%s later (%s after %s): %s\n", i + 1, nb[i].shift,
				nb[i].shift == 1 ? "" : "s", nb[i].moved, nb[i].past, nb[i].outcome);
}

/* The n-th event (1-based) of thread t at or after index at in the run, or
 * with n 0 the one that says most: its first event of the predicted
 * pattern, else its first with a site. */
static json_t *thread_event(const json_t *replay, long long at, long long t, unsigned n)
{
	size_t j;
	json_t *e, *sited = NULL, *found = NULL;
	struct pattern pat = { 0 };
	if (!n && pattern_init(&pat, json_object_get(replay, "predicted")) < 0)
		pat.n = 0;
	json_array_foreach(json_object_get(replay, "interleaving"), j, e) {
		if (json_integer_value(json_object_get(e, "index")) < at ||
		    json_integer_value(json_object_get(e, "thread")) != t)
			continue;
		if (n ? --n == 0 : pattern_matches(&pat, e)) {
			found = e;
			break;
		}
		if (!sited && *js(e, "file") && strcmp(js(e, "kind"), "start"))
			sited = e;
	}
	pattern_release(&pat);
	return found ? found : sited;
}

/* The neighbour moves the event after a switch past the next events of
 * the thread that gave way up to where that thread holds no lock (at most
 * this many): one event later, or, when it is inside a critical section
 * the other thread needs, past its end. */
#define NEIGHBOUR_MAX_SHIFT 64

static uint32_t neighbour_shift(const struct quiet_map *q, uint32_t t, uint64_t done)
{
	if (!q || t >= q->nthr)
		return 1;
	for (uint32_t s = 1; s <= NEIGHBOUR_MAX_SHIFT && done + s <= q->nev[t]; s++)
		if (q->held[t][done + s] <= 0)
			return s;
	return 1;
}

/* The passing neighbour of switch i of the minimal schedule ms. */
static void try_neighbour(struct mctx *m, const struct schedule *ms, size_t i, const uint64_t *counts,
			  size_t nthr, struct neighbour *nb, struct min_summary *out)
{
	struct min_switch *w;
	if (min_list_switches(ms, &w) == (size_t)-1)
		return;
	long long at = events_before(ms, w[i].step);
	uint32_t from = w[i].from, to = w[i].to;
	uint64_t from_done = w[i].from_done;
	free(w);
	const json_t *mj = m->kept;
	uint32_t shift = neighbour_shift(m->quiet, from, from_done);
	struct schedule *n = minimize_neighbour(ms, i, shift, counts, nthr);
	if (n && schedule_write(n, m->cand_path) == 0) {
		double t1 = now_s();
		json_t *nj = replay_file(m->dir, m->cand_path, m->timeout);
		m->seconds += now_s() - t1;
		out->neighbour_replays++;
		nb->tried = true;
		nb->shift = shift;
		snprintf(nb->outcome, sizeof nb->outcome, "%s", nj ? js(nj, "outcome") : "ERROR");
		nb->passes = nj && !strcmp(js(nj, "outcome"), "PASS");
		json_decref(nj);
		event_phrase(thread_event(mj, at, to, 0), nb->moved, sizeof nb->moved);
		const json_t *pe = thread_event(mj, at, from, shift);
		if (pe)
			event_phrase(pe, nb->past, sizeof nb->past);
		else
			snprintf(nb->past, sizeof nb->past, "T%u's next %u event%s", from, shift,
				 shift == 1 ? "" : "s");
	}
	schedule_free(n);
	json_object_set_new(json_array_get(json_object_get(mj, "switches"), i), "neighbour",
			    nb->tried ? json_pack("{s:s, s:b, s:i, s:s, s:s}", "outcome", nb->outcome,
						  "passes", nb->passes, "shift", (int)nb->shift, "moved",
						  nb->moved, "past", nb->past)
				      : json_null());
}

#define REPORT_MARK "---- the reproduced schedule's report ----"

/* Rewrites path to lead with lead (a string), keeping the original report
 * (only once: what followed the mark if it was rewritten before). */
static int rewrite_report(const char *path, const char *lead)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	char *old = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&old, &len);
	int ch;
	while (mem && (ch = fgetc(f)) != EOF)
		fputc(ch, mem);
	fclose(f);
	if (!mem)
		return -1;
	fclose(mem);
	const char *orig = strstr(old, REPORT_MARK "\n");
	orig = orig ? orig + strlen(REPORT_MARK) + 1 : old;
	char tmp[4400];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		free(old);
		return -1;
	}
	errno = 0;
	fprintf(f, "%s\n%s\n%s", lead, REPORT_MARK, orig);
	int bad = ferror(f);
	int rc = fclose(f) == 0 && !bad && rename(tmp, path) == 0 ? 0 : -1;
	if (rc < 0) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
		remove(tmp);
	}
	free(old);
	return rc;
}

/* The reproduced failure to keep: ref_json's when it shows one (ref_avt:
 * its trace beside it), else the schedule's replay, made now (ref_avt:
 * its trace kept as mavt.ref).  NULL after an avt_error(). */
static json_t *reference_of(struct mctx *m, const char *sched_path, const char *ref_json,
			    const char *mavt, char *ref_avt, size_t len, struct min_summary *out)
{
	json_t *ref = ref_json ? json_load_file(ref_json, 0, NULL) : NULL;
	ref_avt[0] = 0;
	if (ref) {
		failure_of(ref, &m->want);
		if (!is_failure(&m->want)) {
			json_decref(ref);
			ref = NULL;
		} else {
			size_t n = strlen(ref_json);
			if (n > 5 && !strcmp(ref_json + n - 5, ".json"))
				snprintf(ref_avt, len, "%.*s.avt", (int)(n - 5), ref_json);
		}
	}
	if (ref)
		return ref;
	/* no reproduced failure on file: replay the schedule */
	ref = replay_file(m->dir, sched_path, m->timeout);
	if (!ref) {
		avt_error("cannot replay '%s'", sched_path);
		return NULL;
	}
	out->replays++;
	char keep[4400];
	snprintf(keep, sizeof keep, "%s.ref", mavt);
	snprintf(ref_avt, len, "%s/replays/custom.avt", m->dir);
	if (rename(ref_avt, keep) == 0)
		snprintf(ref_avt, len, "%s", keep);
	else
		ref_avt[0] = 0;
	return ref;
}

/* Nothing was removed: the reproduced schedule ms is minimal, and its
 * replay (ref, its trace ref_avt) the minimal one; 0, or -1 when it
 * does not fail the same way again. */
static int keep_reference(struct mctx *m, const json_t *ref, const char *ref_avt, const char *mavt,
			  struct schedule *ms, const char *sched_path, struct min_summary *out)
{
	m->kept = json_deep_copy(ref);
	if (ref_avt[0] && link(ref_avt, mavt) == 0)
		return 0;
	/* no trace of it at hand: replay it once more */
	json_decref(m->kept);
	m->kept = NULL;
	if (candidate(m, ms) == 1) {
		out->replays++;
		return 0;
	}
	avt_error("the schedule '%s' did not fail the same way again", sched_path);
	return -1;
}

/* Writes rdir/x.min.sched and x.min.json, and the report that leads with
 * them (on stdout too with print); -1 if a file cannot be written. */
static int write_minimal(const char *dir, const char *x, json_t *mj, const struct schedule *ms,
			 const struct min_stats *st, const struct min_summary *out,
			 const struct neighbour *nb, const char *mavt, bool print)
{
	char msched[4300], mjson[4300], path[4300];
	int rc = 0;
	snprintf(msched, sizeof msched, "%s/reports/%s.min.sched", dir, x);
	snprintf(mjson, sizeof mjson, "%s/reports/%s.min.json", dir, x);
	json_object_set_new(mj, "minimal_schedule", json_string(msched));
	json_object_set_new(mj, "minimize", json_pack("{s:I, s:I, s:I, s:I, s:b, s:f}", "from_switches",
						      (json_int_t)st->from_switches, "candidates",
						      (json_int_t)st->tests, "replays",
						      (json_int_t)out->replays, "neighbour_replays",
						      (json_int_t)out->neighbour_replays, "capped",
						      st->capped, "seconds", out->seconds));
	errno = 0;
	if (schedule_write(ms, msched) < 0)
		rc = -1;
	else if (json_dump_file(mj, mjson, JSON_INDENT(2)) < 0) {
		avt_write_error("cannot write '%s': %s", mjson, strerror(errno ? errno : EIO));
		remove(mjson);
		rc = -1;
	}
	char *lead = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&lead, &len);
	if (!mem)
		return rc;
	write_report(mem, dir, x, mj, ms, st->from_switches, out->replays, out->seconds, st->capped, nb,
		     mavt);
	fclose(mem);
	snprintf(path, sizeof path, "%s/reports/%s.txt", dir, x);
	rewrite_report(path, lead); /* it said why it could not */
	if (print)
		fputs(lead, stdout);
	free(lead);
	return rc;
}

/* The switches of ms into mj, and the passing neighbour of each (nb[k]). */
static void find_neighbours(struct mctx *m, const struct schedule *ms, json_t *mj, struct neighbour *nb,
			    size_t k, struct min_summary *out)
{
	uint64_t *counts;
	size_t nthr = recorded_counts(m->dir, &counts);
	json_object_set_new(mj, "switches", switches_json(ms, mj));
	for (size_t i = 0; i < k; i++)
		try_neighbour(m, ms, i, counts, nthr, &nb[i], out);
	free(counts);
}

int minimize_bug(const char *dir, const char *x, const char *sched_path, const char *ref_json,
		 unsigned cap, const char *timeout, bool print, struct min_summary *out)
{
	char err[600], path[4300], cand[4300], mavt[4300], ref_avt[4400];
	memset(out, 0, sizeof *out);
	struct schedule *s = schedule_read(sched_path, err, sizeof err);
	if (!s) {
		avt_error("%s", err);
		return -1;
	}
	snprintf(path, sizeof path, "%s/reports", dir);
	mkdir(path, 0777);
	snprintf(path, sizeof path, "%s/replays", dir);
	mkdir(path, 0777);
	snprintf(cand, sizeof cand, "%s/reports/%s.cand.sched", dir, x);
	snprintf(mavt, sizeof mavt, "%s/reports/%s.min.avt", dir, x);
	struct mctx m = { .dir = dir, .timeout = timeout, .cand_path = cand, .avt_keep = mavt };
	double t0 = now_s();
	remove(mavt);
	json_t *ref = reference_of(&m, sched_path, ref_json, mavt, ref_avt, sizeof ref_avt, out);
	if (!ref) {
		schedule_free(s);
		return -1;
	}
	failure_of(ref, &m.want);
	if (!is_failure(&m.want)) {
		avt_error("'%s' does not reproduce a bug (%s): nothing to minimise", sched_path,
			  m.want.outcome[0] ? m.want.outcome : "no outcome");
		json_decref(ref);
		schedule_free(s);
		return 1;
	}
	struct quiet_map qm;
	struct trace *tr = load_trace(dir);
	if (tr && quiet_map_init(&qm, tr) == 0)
		m.quiet = &qm;
	trace_free(tr);
	struct min_opts mo = { candidate, &m, cap, quiet_events };
	struct min_stats st;
	struct schedule *ms = minimize_schedule(s, &mo, &st);
	out->replays += st.tests;
	int rc = ms && !st.error ? 0 : -1;
	if (rc == 0 && !m.kept)
		rc = keep_reference(&m, ref, ref_avt, mavt, ms, sched_path, out);
	size_t k = ms ? min_count_switches(ms) : 0;
	struct neighbour *nb = calloc(k ? k : 1, sizeof *nb);
	if (rc == 0 && m.kept && nb)
		find_neighbours(&m, ms, m.kept, nb, k, out);
	remove(cand);
	if (ref_avt[0] && strstr(ref_avt, ".min.avt.ref"))
		remove(ref_avt);
	out->replays += m.confirmations;
	out->from = st.from_switches;
	out->switches = k;
	out->capped = st.capped;
	out->seconds = now_s() - t0;
	if (rc == 0 && m.kept && write_minimal(dir, x, m.kept, ms, &st, out, nb, mavt, print) < 0)
		rc = -1;
	free(nb);
	if (m.quiet)
		quiet_map_release(&qm);
	json_decref(m.last);
	json_decref(m.kept);
	json_decref(ref);
	schedule_free(ms);
	schedule_free(s);
	return rc;
}

int cmd_minimize(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, 0, 'd' }, { "schedule", required_argument, 0, 's' },
		{ "file", required_argument, 0, 'F' }, { "timeout", required_argument, 0, 't' },
		{ "max-replays", required_argument, 0, 'm' }, { "quiet", no_argument, 0, 'q' },
		{ "verbose", no_argument, 0, 'v' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *dir = "avtrace-out", *file = NULL, *timeout = "2";
	unsigned num = 0, cap = MINIMIZE_DEFAULT_REPLAYS;
	bool have = false, quiet = false;
	double secs;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:t:qvh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 's':
			if (arg_uint("minimize", "--schedule", optarg, 0, UINT32_MAX, &num) < 0)
				return EXIT_USAGE;
			have = true;
			break;
		case 'F': file = optarg; break;
		case 't':
			if (arg_seconds("minimize", "--timeout", optarg, &secs) < 0)
				return EXIT_USAGE;
			timeout = optarg;
			break;
		case 'm':
			if (arg_uint("minimize", "--max-replays", optarg, 0, 1000000, &cap) < 0)
				return EXIT_USAGE;
			break;
		case 'q': quiet = true; break;
		case 'v': avt_verbose++; break;
		case 'h': fputs(minimize_help, stdout); return 0;
		default: return usage_error("minimize", "bad option");
		}
	}
	if (optind < argc)
		return usage_error("minimize", "unexpected argument '%s'", argv[optind]);
	if (have == !!file)
		return usage_error("minimize", "which schedule? give --schedule N or --file SCHED");
	char x[256], sched[4300], ref[4300];
	if (file) {
		const char *b = base(file);
		size_t n = strlen(b);
		if (n > 6 && !strcmp(b + n - 6, ".sched"))
			n -= 6;
		snprintf(x, sizeof x, "%.*s", (int)n, b);
		snprintf(sched, sizeof sched, "%s", file);
	} else {
		snprintf(x, sizeof x, "%04u", num);
		snprintf(sched, sizeof sched, "%s/schedules/%04u.sched", dir, num);
		snprintf(ref, sizeof ref, "%s/replays/%04u.json", dir, num);
	}
	struct min_summary sum;
	int rc = minimize_bug(dir, x, sched, file ? NULL : ref, cap, timeout, !quiet, &sum);
	if (rc < 0)
		return EXIT_USAGE;
	return rc;
}
