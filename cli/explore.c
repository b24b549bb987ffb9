/* avtrace explore; and the exploration round of avtrace test. */
#include <dirent.h>
#include <inttypes.h>
#include <getopt.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "explore/explore.h"
#include "explore/policy.h"
#include "results.h"
#include "tree.h"
#include "trace/log.h"
#include "tracer/record.h"

static const char explore_help[] =
	"usage: avtrace explore [options] -- PROG [ARGS...]\n"
	"       avtrace explore [options] -d DIR\n"
	"\n"
	"Records PROG once (or takes the recording in DIR), then runs it again and\n"
	"again with exactly one thread running at a time, a policy choosing the\n"
	"thread at every event (docs/explore.md).  Run N depends only on the seed\n"
	"and N (guided: and on earlier rounds of runs).  If DIR holds replays of\n"
	"predictions (avtrace test), the first runs start where those that ended\n"
	"INFEASIBLE or PASS left off.  Each run's order is written to\n"
	"DIR/explore/runs/NNNN.sched; a failing run becomes a recording of its own,\n"
	"DIR/explore/runs/NNNN/, which is replayed once more to confirm it (one\n"
	"report per distinct failure; one not confirmed is reported as such).\n"
	"A command that starts other processes (a script, a test runner, a fork)\n"
	"is followed down its whole tree: each other multithreaded process is\n"
	"recorded alone (DIR/procs/NNNN/, DIR/tree.json) and explored in turn\n"
	"(docs/process-tree.md); so is a -d DIR that holds such a tree.\n"
	"Exit status: 0 no bug found, 1 at least one seen (a deadlock only when\n"
	"confirmed), 2 error; for a tree, a bug in any process first.\n"
	"\n"
	"policies (--policy P):\n"
	"  portfolio  (default) surw, pos, surw, pct (depth D) in turn: run i is\n"
	"           the run its member would make alone with the seed (no one\n"
	"           policy finds every shape; surw, the best on most, runs half)\n"
	"  surw     a uniform random walk over the interleavings of the\n"
	"           events on shared objects drawn per run, each thread weighted\n"
	"           by its remaining events on them (selectively uniform)\n"
	"  pos      partial-order sampling: random priorities per pending event,\n"
	"           drawn again for the events that race with the one that ran\n"
	"  guided   each run steers a read to a write no run has shown it, from\n"
	"           runs that showed new reads-from pairs\n"
	"  pct      random priorities changing at D-1 random events\n"
	"  pctvb    the same, changing only at events on V variables per run\n"
	"  tb       permutations covering every order of T threads\n"
	"\n"
	"options:\n"
	"  -o, --output DIR   output directory (default ./avtrace-out)\n"
	"  -d, --dir DIR      explore this existing recording instead of recording\n"
	"  -f, --force        replace an existing avtrace output directory\n"
	"  -n, --runs N       runs (default 200)\n"
	"      --policy P     surw, pos, guided, pct, pctvb, tb or portfolio\n"
	"                     (default: portfolio; tb with --threads; pct with --vars\n"
	"                     0, pctvb with --vars V or --depth D); --algo is the\n"
	"                     same option\n"
	"      --depth D      pct, pctvb: D-1 priority change points per run\n"
	"                     (default 3)\n"
	"      --vars V       pctvb: change points only at events on V variables\n"
	"                     (or locks) chosen per run (default 1); surw: V\n"
	"                     interesting objects per run, 0 for every event\n"
	"                     (default: their number drawn too)\n"
	"      --threads T    thread bounding: cover every order of T threads\n"
	"      --contexts C   thread bounding: preemptions per run (default 1)\n"
	"      --seed S       seed of the random choices (default 1)\n"
	"      --stop         stop at the first failing run\n"
	"      --time S       also start no run after S seconds (default: none)\n"
	"  -j, --jobs N       runs at a time, each on its own CPU (default: CPUs)\n"
	"  -t, --timeout S    abandon a run after S seconds (default 10; 0.001..1e6)\n"
	"      --oracle CMD   as for replay: a run whose stdout fails CMD is a bug\n"
	"      --watch V[,V]  as for record; --no-access, --access-scope, --no-heap,\n"
	"                     --sync-spec, --futex, --no-agent too (a recording's\n"
	"                     --futex is its runs' too)\n"
	"      --no-agent     also: the runs on ptrace alone (a recording made with\n"
	"                     the agent runs through it: SURW's events that need no\n"
	"                     decision, and the walks decided ahead, are taken\n"
	"                     in-process, threads waiting at a lock, an unlock or\n"
	"                     an access for their turn in the agent; the same runs\n"
	"                     either way)\n"
	"  -q, --quiet        no progress\n";

/* On a terminal, one line kept up to date; otherwise (a CI log), under a
 * time budget, a line every PROGRESS_EVERY_S seconds: a long exploration
 * shows it is alive and how far it has got. */
#define PROGRESS_EVERY_S 10.0

static void show_progress(void *ctx, const struct explore_progress *p)
{
	double *next_line = ctx;
	double rate = p->seconds > 0 ? p->done / p->seconds : 0.0;
	if (avt_quiet)
		return;
	if (!isatty(2)) {
		if (p->time_s <= 0 || !next_line || p->seconds < *next_line)
			return;
		*next_line = p->seconds + PROGRESS_EVERY_S;
		fprintf(stderr, "avtrace: explore: %u runs, %u failing, %u distinct, %.1f runs/s, %.0f s of %g s\n",
			p->done, p->failing, p->bugs, rate, p->seconds, p->time_s);
		return;
	}
	if (p->time_s > 0 && p->runs >= EXPLORE_MAX_RUNS)
		fprintf(stderr, "\ravtrace: explore: %u runs, %u failing, %u distinct, %.1f runs/s, %.0f s of %g s ",
			p->done, p->failing, p->bugs, rate, p->seconds, p->time_s);
	else
		fprintf(stderr, "\ravtrace: explore: %u/%u runs, %u failing, %u distinct, %.1f runs/s ",
			p->done, p->runs, p->failing, p->bugs, rate);
	if (p->done == p->runs)
		fputc('\n', stderr);
}

/* What bounds the exploration, for its first line. */
static void describe_budget(const struct explore_opts *eo, char *buf, size_t len)
{
	char least[64] = "";
	if (eo->min_runs)
		snprintf(least, sizeof least, " (at least %u runs)", eo->min_runs);
	if (eo->time_s > 0 && eo->runs >= EXPLORE_MAX_RUNS)
		snprintf(buf, len, "for up to %g s%s%s", eo->time_s, least,
			 eo->stop_at_bug ? " or until a bug" : "");
	else if (eo->time_s > 0)
		snprintf(buf, len, "%u runs or for %g s%s, whichever ends first", eo->runs, eo->time_s, least);
	else
		snprintf(buf, len, "%u runs", eo->runs);
}

/* Why the exploration ended, when that is not simply the runs budget. */
static void say_stop(const struct explore_opts *eo, const struct explore_result *r)
{
	if (r->stop == EXPLORE_STOP_TIME)
		printf("stopped: the time budget (--time %g) was spent\n", eo->time_s);
	else if (r->stop == EXPLORE_STOP_BUG)
		printf("stopped: a run failed\n");
	else if (r->stop == EXPLORE_STOP_ERROR)
		printf("stopped: a run could not be started\n");
	else if (r->stop == EXPLORE_STOP_SIGNAL)
		printf("stopped: interrupted by SIG%s (the runs in flight were not counted)\n",
		       sigabbrev_np(tracer_interrupted()) ?: "?");
	else if (eo->time_s > 0)
		printf("stopped: the runs budget (%u) was spent\n", eo->runs);
}

static void describe_cfg(const struct xp_config *c, char *buf, size_t len)
{
	switch (c->algo) {
	case XP_PCT:
		snprintf(buf, len, "pct, depth %u", c->depth);
		break;
	case XP_PCTVB:
		snprintf(buf, len, "pctvb, depth %u, %u variable%s", c->depth, c->nvars,
			 c->nvars == 1 ? "" : "s");
		break;
	case XP_TB:
		snprintf(buf, len, "tb, %u threads, %u context%s", c->threads, c->contexts,
			 c->contexts == 1 ? "" : "s");
		break;
	case XP_POS:
		snprintf(buf, len, "pos");
		break;
	case XP_SURW:
		if (c->nvars == XP_VARS_RANDOM)
			snprintf(buf, len, "surw, objects drawn per run");
		else if (c->nvars)
			snprintf(buf, len, "surw, %u object%s", c->nvars, c->nvars == 1 ? "" : "s");
		else
			snprintf(buf, len, "surw, all objects");
		break;
	case XP_GUIDED:
		snprintf(buf, len, "guided");
		break;
	case XP_PORTFOLIO:
		snprintf(buf, len, "portfolio: surw, pos, surw, pct (depth %u) in turn", c->depth);
		break;
	}
}

/* How a failed run failed, in words (its check replay did not say). */
static void failure_words(const struct explore_bug *b, char *buf, size_t len)
{
	if (!strncmp(b->key, "deadlock", 8))
		snprintf(buf, len, "DEADLOCK");
	else if (b->signal)
		snprintf(buf, len, "BUG: SIG%s in T%u", sigabbrev_np(b->signal) ?
			 sigabbrev_np(b->signal) : "?", b->thread);
	else
		snprintf(buf, len, "BUG: exit status %d", b->exit_status);
}

/* Copies src to dst; -1 if it cannot. */
static int copy_file(const char *src, const char *dst)
{
	FILE *in = fopen(src, "r"), *out = in ? fopen(dst, "w") : NULL;
	int ch, rc = in && out ? 0 : -1;
	while (rc == 0 && (ch = fgetc(in)) != EOF)
		fputc(ch, out);
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	return rc;
}

/* Does b fail as the recording already did (same exit status or signal)? */
static bool as_recorded(const struct explore_bug *b, int baseline_status)
{
	if (!baseline_status || !strncmp(b->key, "deadlock", 8))
		return false;
	return b->signal ? baseline_status == 128 + b->signal : baseline_status == b->exit_status;
}

/* The threads of prediction id's pattern (predictions.json), into
 * st->pattern; nothing when it does not say. */
static void pattern_threads(json_t *preds, unsigned id, struct explore_start *st)
{
	json_t *arr = json_object_get(preds, "predictions"), *p;
	size_t i;
	json_array_foreach(arr, i, p) {
		if (json_integer_value(json_object_get(p, "id")) != (json_int_t)id)
			continue;
		json_t *th = json_object_get(p, "threads"), *v;
		size_t n = json_array_size(th), k;
		st->pattern = n ? calloc(n, sizeof *st->pattern) : NULL;
		json_array_foreach(th, k, v) {
			if (st->pattern && json_is_integer(v) && json_integer_value(v) >= 0 &&
			    json_integer_value(v) < (json_int_t)UINT32_MAX)
				st->pattern[st->npattern++] = (uint32_t)json_integer_value(v);
		}
		if (st->pattern && !st->npattern) {
			free(st->pattern);
			st->pattern = NULL;
		}
		return;
	}
}

void explore_starts_free(struct explore_start *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].sched);
		free(s[i].pattern);
	}
	free(s);
}

/* Starting points from the predictions of dir, in prediction order, at
 * most max: with every false, the schedules of those replayed that
 * neither failed nor erred (INFEASIBLE: the order could not be followed
 * to its end; PASS: it could, and nothing failed); with every, each
 * prediction's schedule, replayed or not.  Each keeps its pattern's
 * threads: only their order is followed, the others are placed at
 * random.  The caller frees with explore_starts_free(). */
size_t prediction_starts(const char *dir, size_t max, bool every, struct explore_start **out)
{
	char path[4300];
	json_error_t je;
	snprintf(path, sizeof path, "%s/predictions.json", dir);
	json_t *preds = json_load_file(path, 0, &je);
	json_t *arr = json_object_get(preds, "predictions"), *p;
	size_t n = json_array_size(arr), k = 0, i;
	struct explore_start *st = calloc(n ? n : 1, sizeof *st);
	*out = st;
	json_array_foreach(arr, i, p) {
		if (!st || k >= max)
			break;
		json_int_t id = json_integer_value(json_object_get(p, "id"));
		if (id <= 0 || id > 9999)
			continue;
		if (!every) {
			snprintf(path, sizeof path, "%s/replays/%04u.json", dir, (unsigned)id);
			json_t *j = json_load_file(path, 0, &je);
			const char *oc = j ? json_string_value(json_object_get(j, "outcome")) : NULL;
			bool start = oc && (!strcmp(oc, "INFEASIBLE") || !strcmp(oc, "PASS"));
			json_decref(j);
			if (!start)
				continue;
		}
		snprintf(path, sizeof path, "%s/schedules/%04u.sched", dir, (unsigned)id);
		if (access(path, R_OK) != 0 || !(st[k].sched = strdup(path)))
			continue;
		pattern_threads(preds, (unsigned)id, &st[k]);
		k++;
	}
	json_decref(preds);
	return k;
}

/* The runs' totals, and the tally they add to. */
static void say_totals(const struct explore_result *r, struct run_tally *tally)
{
	printf("%u runs in %.1f s (%.1f runs/s): %u pass, %u bug, %u deadlock, %u infeasible, %u error\n",
	       r->done, r->seconds, r->seconds > 0 ? r->done / r->seconds : 0.0, r->counts[0], r->counts[1],
	       r->counts[3], r->counts[2], r->counts[4]);
	if (r->agent_events)
		printf("  %" PRIu64 " of the runs' %" PRIu64 " events in-process (the agent: no decision was due)\n",
		       r->agent_events, r->events);
	if (r->stops && r->events)
		printf("  %" PRIu64 " ptrace stops (%.2f per event)\n", r->stops, (double)r->stops / (double)r->events);
	if (r->agent_handovers)
		printf("  %" PRIu64 " hand-overs between threads in-process, in %" PRIu64 " scripts\n",
		       r->agent_handovers, r->agent_scripts);
	if (r->agent_extras)
		printf("  %" PRIu64 " accesses the recording does not have, made in-process with no decision due\n",
		       r->agent_extras);
	if (r->counts[4])
		printf("  first error: %s\n", r->error);
	if (r->stuck_waits)
		printf("  %" PRIu64 " turns ended as soon as their thread slept where only a stopped thread could wake it\n",
		       r->stuck_waits);
	tally->ran += r->counts[0] + r->counts[1] + r->counts[3];
	tally->unfinished += r->counts[2] + r->counts[4]; /* run time limit, errors */
}

/* The check replay of a failed run did not fail again: seen, never thrown
 * away, but no bug (an unconfirmed deadlock may be the scheduler's). */
static void say_unconfirmed(const struct explore_bug *b, unsigned done, struct results *res)
{
	char words[128], path[4300], why[1200];
	snprintf(path, sizeof path, "%s/replays/0000.json", b->dir);
	json_t *j = json_load_file(path, 0, NULL);
	const char *oc = j ? json_string_value(json_object_get(j, "outcome")) : NULL;
	const char *rs = j ? json_string_value(json_object_get(j, "reason")) : NULL;
	snprintf(why, sizeof why, "%s%s%s", oc ? oc : "no result", rs && *rs ? ": " : "", rs ? rs : "");
	json_decref(j);
	failure_words(b, words, sizeof words);
	printf("%s seen (unconfirmed)\n", words);
	printf("  seen in run %u and %u of %u runs (%s)\n", b->run, b->hits, done, b->choices);
	printf("  its replay did not fail again (%s): avtrace replay -d %s --schedule 0\n", why, b->dir);
	if (strncmp(b->key, "deadlock", 8))
		res->unconfirmed++;
}

/* Minimises the run that failed (cli/minimize.c): its report then leads
 * with the fewest switches, and the minimal schedule goes beside the copy
 * as explore-NNNN.min.*. */
static void minimize_run(const struct explore_bug *b, const struct explore_report *how)
{
	char sched[4400], ref[4400], src[4500], dst[4500];
	struct min_summary sum;
	snprintf(sched, sizeof sched, "%s/schedules/0000.sched", b->dir);
	snprintf(ref, sizeof ref, "%s/replays/0000.json", b->dir);
	fflush(stdout);
	if (minimize_bug(b->dir, "0000", sched, ref, how->minimize_cap, how->timeout, false, &sum) != 0)
		return;
	printf("  fails with %zu switch%s (%zu in the run; %u replays%s, %.1f s): %s/reports/0000.min.sched\n",
	       sum.switches, sum.switches == 1 ? "" : "es", sum.from, sum.replays + sum.neighbour_replays,
	       sum.capped ? ", stopped at the cap" : "", sum.seconds, b->dir);
	static const char *const ext[] = { "sched", "json", "txt" };
	for (size_t x = 0; x < 3; x++) {
		snprintf(src, sizeof src, "%s/reports/0000%s%s", b->dir, x < 2 ? ".min." : ".", ext[x]);
		snprintf(dst, sizeof dst, "%s/explore-%04u%s%s", how->report_dir, b->run, x < 2 ? ".min." : ".",
			 ext[x]);
		if (copy_file(src, dst) < 0)
			avt_warn("cannot copy '%s' to '%s'", src, dst);
	}
}

/* A confirmed, distinct bug: its entry, and its report kept now, in the
 * run's reports/ (and a copy in how->report_dir); the report's path. */
static void keep_bug(const struct explore_bug *b, const struct explore_opts *eo, unsigned done,
		     const struct explore_report *how, struct result_bug *rb)
{
	char staged[4300], rep[4300];
	snprintf(staged, sizeof staged, "%s/replays/0000.txt", b->dir);
	snprintf(rep, sizeof rep, "%s/reports", b->dir);
	mkdir(rep, 0777);
	snprintf(rep, sizeof rep, "%s/reports/0000.txt", b->dir);
	if (rename(staged, rep) != 0)
		avt_warn("cannot keep the report of '%s' in '%s'", b->dir, rep);
	printf("%s\n", json_string_value(json_object_get(rb->replay, "headline")) ?: "BUG");
	unsigned needed = b->run - eo->first_run;
	printf("  found by run %u: %u run%s to find it, %u of %u runs failed this way (%s)\n", b->run,
	       needed, needed == 1 ? "" : "s", b->hits, done, b->choices);
	printf("  confirmed: avtrace replay -d %s --schedule 0\n", b->dir);
	snprintf(rb->report, sizeof rb->report, "%s", rep);
	if (how->report_dir) {
		snprintf(rb->report, sizeof rb->report, "%s/explore-%04u.txt", how->report_dir, b->run);
		if (copy_file(rep, rb->report) < 0)
			avt_warn("cannot copy '%s' to '%s'", rep, rb->report);
		if (how->minimize_cap)
			minimize_run(b, how);
	}
	printf("  report: %s\n", rb->report);
}

/* Replays failure b of the runs to confirm it; into the model when it
 * is a bug not known yet. */
static void confirm_bug(const struct explore_bug *b, const struct explore_opts *eo, unsigned done,
			const struct explore_report *how)
{
	static const unsigned zero = 0;
	char staged[4300];
	bool is_new;
	fflush(stdout);
	struct replay_batch rb = { .dir = b->dir, .nums = &zero, .n = 1, .jobs = 1,
				   .timeout = how->timeout, .text = true };
	if (run_replays(&rb) != 0)
		return;
	int i = results_add_explored(how->res, b->dir, b->run, &is_new);
	if (i < 0)
		say_unconfirmed(b, done, how->res);
	else if (is_new)
		keep_bug(b, eo, done, how, &how->res->bugs[i]);
	snprintf(staged, sizeof staged, "%s/replays/0000.txt", b->dir);
	remove(staged); /* a report not kept: not a bug, or one known */
}

int explore_and_report(struct explore_opts *eo, const struct explore_report *how)
{
	struct explore_result r;
	char cfg[128];
	struct explore_start *starts = NULL;
	size_t nstarts = 0;
	if (!eo->starts) { /* predictions replayed before: the first runs start there */
		nstarts = prediction_starts(eo->dir, eo->runs / 2, false, &starts);
		eo->starts = starts;
		eo->nstarts = nstarts;
	}
	double next_line = PROGRESS_EVERY_S;
	char budget[160];
	bool own_progress = !eo->progress;
	if (own_progress) {
		eo->progress = show_progress;
		eo->progress_ctx = &next_line;
	}
	describe_cfg(&eo->cfg, cfg, sizeof cfg);
	describe_budget(eo, budget, sizeof budget);
	printf("exploring %s (%s, seed %llu, -j %u)\n", budget, cfg, (unsigned long long)eo->seed, eo->jobs);
	if (nstarts)
		printf("the first %zu run%s start%s where a prediction that did not fail left off\n", nstarts,
		       nstarts == 1 ? "" : "s", nstarts == 1 ? "s" : "");
	fflush(stdout);
	/* a stop signal ends it at its next step: the runs in flight are
	 * killed, what the finished ones found is kept and reported */
	int xrc = explore_run(eo, &r);
	if (own_progress) { /* next_line is ours: no caller keeps it */
		eo->progress = NULL;
		eo->progress_ctx = NULL;
		if (!avt_quiet && isatty(2) && r.done != eo->runs)
			fputc('\n', stderr); /* the progress line ends */
	}
	explore_starts_free(starts, nstarts);
	if (starts) {
		eo->starts = NULL;
		eo->nstarts = 0;
	}
	if (xrc < 0)
		return EXIT_USAGE;
	say_totals(&r, &how->res->tally);
	say_stop(eo, &r);
	for (size_t i = 0; i < r.nbugs && !tracer_interrupted(); i++) {
		if (as_recorded(&r.bugs[i], how->baseline_status))
			printf("%u of %u runs failed as %s (%s): not a finding of exploration\n",
			       r.bugs[i].hits, r.done, how->baseline_who ? how->baseline_who : "the recorded run did",
			       r.bugs[i].signal ? "a fatal signal" : "exit status");
		else
			confirm_bug(&r.bugs[i], eo, r.done, how);
	}
	explore_result_release(&r);
	return 0;
}

static unsigned cpus(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
}

/* avtrace explore's command line. */
struct explore_cmd {
	struct record_opts ro;
	struct explore_opts eo;
	const char *watch[5];
	const char *dir, *algo;
	bool vars_set, threads_set, depth_set, no_agent;
};

/* The numeric options -n, --depth, --vars, --threads, --contexts, -j;
 * -1 on a bad value. */
static int number_option(struct explore_cmd *x, int c)
{
	unsigned v;
	if (arg_uint("explore", c == 'n' ? "--runs" : c == 'D' ? "--depth" : c == 'V' ? "--vars" :
		     c == 'T' ? "--threads" : c == 'C' ? "--contexts" : "-j", optarg,
		     c == 'V' || c == 'C' ? 0 : 1, 1000000, &v) < 0)
		return -1;
	if (c == 'n')
		x->eo.runs = v;
	else if (c == 'D')
		x->eo.cfg.depth = v, x->depth_set = true;
	else if (c == 'V')
		x->eo.cfg.nvars = v, x->vars_set = true;
	else if (c == 'T')
		x->eo.cfg.threads = v, x->threads_set = true;
	else if (c == 'C')
		x->eo.cfg.contexts = v;
	else
		x->eo.jobs = v;
	return 0;
}

/* One option; 1 if unknown, -1 if bad, 2 after --help. */
static int explore_option(struct explore_cmd *x, int c)
{
	switch (c) {
	case 'o': x->ro.dir = optarg; return 0;
	case 'd': x->dir = optarg; return 0;
	case 'f': x->ro.force = true; return 0;
	case 'a': x->algo = optarg; return 0;
	case 'n': case 'D': case 'V': case 'T': case 'C': case 'j': return number_option(x, c);
	case 'S': return arg_u64("explore", "--seed", optarg, &x->eo.seed) < 0 ? -1 : 0;
	case 's': x->eo.stop_at_bug = true; return 0;
	case 't': return arg_seconds("explore", "--timeout", optarg, &x->eo.timeout_s) < 0 ? -1 : 0;
	case 0x103: return arg_seconds("explore", "--time", optarg, &x->eo.time_s) < 0 ? -1 : 0;
	case 'O': x->eo.oracle = optarg; return 0;
	case 'w':
		for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
			if (x->ro.nwatch == 4)
				return usage_error("explore", "--watch takes at most 4 variables"), -1;
			x->watch[x->ro.nwatch++] = tok;
		}
		return 0;
	case 'W': x->ro.no_auto_watch = true; return 0;
	case 0x101:
		x->ro.access_scope = optarg;
		return arg_scope("explore", "--access-scope", optarg) < 0 ? -1 : 0;
	case 'H': x->ro.no_heap = true; return 0;
	case 0x110:
		x->ro.sync_spec_name = optarg;
		return arg_sync_spec(optarg, &x->ro.sync_spec) < 0 ? -1 : 0;
	case 0x111: x->ro.futex = true; return 0;
	case 0x102: x->no_agent = true; return 0;
	case 'q': avt_quiet = 1; return 0;
	case 'h': fputs(explore_help, stdout); return 2;
	}
	return 1;
}

/* The policy from --policy and the bounds given; -1 after a usage error. */
static int explore_policy(struct explore_cmd *x)
{
	struct xp_config *cfg = &x->eo.cfg;
	if (x->algo && xp_algo_parse(x->algo, &cfg->algo) < 0)
		return usage_error("explore", "bad --policy '%s' (pct, pctvb, tb, pos, surw, guided or portfolio)",
				   x->algo), -1;
	if (!x->algo && x->threads_set)
		cfg->algo = XP_TB;
	else if (!x->algo && (x->vars_set || x->depth_set)) /* PCT's bounds: PCT, as before */
		cfg->algo = x->vars_set && !cfg->nvars ? XP_PCT : XP_PCTVB;
	if (cfg->algo == XP_PCTVB && !x->vars_set)
		cfg->nvars = 1;
	if (cfg->algo == XP_PCTVB && !cfg->nvars)
		return usage_error("explore", "--algo pctvb needs --vars of at least 1"), -1;
	if (cfg->algo == XP_TB && !cfg->threads)
		cfg->threads = 2;
	if (cfg->algo == XP_SURW && !x->vars_set)
		cfg->nvars = XP_VARS_RANDOM;
	if (cfg->algo == XP_PCT || (cfg->algo == XP_TB && !x->vars_set))
		cfg->nvars = 0; /* TB: change points as PCT's unless --vars */
	if (!x->eo.jobs)
		x->eo.jobs = cpus();
	return 0;
}

/* Parses the command line; 0, EXIT_USAGE, or -1 after --help. */
static int explore_options(struct explore_cmd *x, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "dir", required_argument, 0, 'd' },
		{ "force", no_argument, 0, 'f' }, { "runs", required_argument, 0, 'n' },
		{ "algo", required_argument, 0, 'a' }, { "policy", required_argument, 0, 'a' }, { "depth", required_argument, 0, 'D' },
		{ "vars", required_argument, 0, 'V' }, { "threads", required_argument, 0, 'T' },
		{ "contexts", required_argument, 0, 'C' }, { "seed", required_argument, 0, 'S' },
		{ "stop", no_argument, 0, 's' }, { "time", required_argument, 0, 0x103 }, { "jobs", required_argument, 0, 'j' },
		{ "timeout", required_argument, 0, 't' }, { "oracle", required_argument, 0, 'O' },
		{ "watch", required_argument, 0, 'w' }, { "no-auto-watch", no_argument, 0, 'W' },
		{ "no-access", no_argument, 0, 'W' }, { "access-scope", required_argument, 0, 0x101 },
		{ "no-heap", no_argument, 0, 'H' }, { "quiet", no_argument, 0, 'q' },
		{ "sync-spec", required_argument, 0, 0x110 }, { "futex", no_argument, 0, 0x111 },
		{ "no-agent", no_argument, 0, 0x102 },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:d:fn:j:t:qh", lo, NULL)) != -1) {
		int rc = explore_option(x, c);
		if (rc == 2)
			return -1;
		if (rc == 1)
			return usage_error("explore", "bad option");
		if (rc < 0)
			return EXIT_USAGE;
	}
	if (explore_policy(x) < 0)
		return EXIT_USAGE;
	if (x->dir && optind < argc)
		return usage_error("explore", "give either -d DIR or a program, not both");
	if (!x->dir && optind >= argc)
		return usage_error("explore", "no program to explore (-- PROG ARGS, or -d DIR)");
	return 0;
}

/* avtrace explore's report: the confirmed bugs; exit 1 if a failure was
 * seen (a deadlock only when confirmed), 0 if not. */
static int explore_report_only(struct explore_opts *eo)
{
	struct results res;
	results_init(&res, eo->dir);
	struct explore_report how = { .timeout = "2", .res = &res };
	int rc = explore_and_report(eo, &how);
	if (rc == 0)
		rc = res.nbugs || res.unconfirmed ? 1 : 0;
	if (rc != EXIT_USAGE && tracer_interrupted())
		rc = 128 + tracer_interrupted();
	results_release(&res);
	return rc;
}

/* The recording in dir explored, then each other multithreaded process
 * of its tree (tree.json, cli/tree.c); a one-threaded launcher (a script,
 * a runner) has nothing to explore.  The tree's exit status. */
static int explore_tree(struct explore_opts *eo, const char *dir)
{
	struct tree_rec *procs;
	size_t n = tree_recordings(dir, &procs);
	int status = 0;
	eo->dir = dir;
	if (!n || tree_root_threads(dir) >= 2)
		status = explore_report_only(eo);
	else
		printf("%s: one thread; its processes follow\n", dir);
	for (size_t i = 0; i < n && status < 128; i++) {
		printf("\n== %s: %s\n", procs[i].name, procs[i].dir);
		fflush(stdout);
		eo->dir = procs[i].dir;
		int rc = explore_report_only(eo);
		status = rc >= 128 ? rc : tree_status(status, rc);
	}
	eo->dir = dir;
	free(procs);
	return status;
}

int cmd_explore(int argc, char **argv)
{
	struct explore_cmd x = {
		.ro = { .dir = "avtrace-out", .cpu = default_cpu(), .keep_stdin = !isatty(0), .slice_ms = 10 },
		.eo = { .runs = 200, .seed = 1, .timeout_s = 10, .cfg = EXPLORE_DEFAULT_CFG },
	};
	int rc = explore_options(&x, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!x.dir) {
		/* the recording as record makes it: through the agent unless
		 * --no-agent (the runs themselves decide at every event, on
		 * ptrace) */
		if (agent_choice(x.no_agent ? 0 : -1, &x.ro.agent_lib))
			return EXIT_USAGE;
		x.ro.argv = argv + optind;
		x.ro.watch = x.watch;
		x.ro.quiet_target = true;
		x.ro.tree = true;
		int rs = record_run(&x.ro, NULL);
		if (tracer_interrupted())
			return 128 + tracer_interrupted();
		if (rs == EXIT_USAGE)
			return EXIT_USAGE;
		x.dir = x.ro.dir;
	}
	x.eo.no_agent = x.no_agent;
	return explore_tree(&x.eo, x.dir);
}
