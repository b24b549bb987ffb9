/* avtrace test: record, predict, replay every prediction, report only
 * what was reproduced. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sched.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "explore/explore.h"
#include "explore/policy.h"
#include "html.h"
#include "names.h"
#include "prediction.h"
#include "results.h"
#include "tree.h"
#include "symbolizer/sym.h"
#include "predict/pattern.h"
#include "predict/predict.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "tracer/record.h"

/* Exploration after the predictions when they reproduced nothing: until
 * a bug or this many seconds (a CI job's share; docs/explore.md, "In
 * avtrace test"), but never fewer than TEST_EXPLORE_MIN_RUNS runs, so that
 * what those runs find does not depend on the machine's speed; --explore N
 * bounds it in runs instead. */
#define TEST_EXPLORE_TIME_S 30.0
#define TEST_EXPLORE_MIN_RUNS 100
/* How long the native run that a failed recording is compared with may take. */
#define NATIVE_LIMIT_S 60.0
/* A control run (state_failure): a native run longer than this is taken
 * as no failure, so that a program that hangs natively costs little. */
#define CONTROL_LIMIT_S 10.0

static const char test_help[] =
	"usage: avtrace test [options] -- PROG [ARGS...]\n"
	"\n"
	"Records PROG once, predicts schedules that would expose atomicity\n"
	"violations and deadlocks, replays each (rank order, -j at a time); if none\n"
	"reproduces a bug, explores random schedules (as 'avtrace explore', its\n"
	"default policy, the first runs starting where predictions that did not\n"
	"fail left off) within a budget.  Reports only the\n"
	"bugs it reproduced: one report per distinct failure in DIR/reports/.\n"
	"PROG may be any command (a script, a runner, a program that forks): each\n"
	"other multithreaded process it starts is recorded alone (DIR/procs/NNNN/)\n"
	"and tested in turn; the exit status is the whole tree's.\n"
	"Exit status: 0 no bug reproduced, 1 at least one, 2 error, 3 inconclusive:\n"
	"no bug reproduced, but most schedules did not run to their end (stuck\n"
	"until the time limit), a failure seen in exploration did not fail again\n"
	"when replayed, or the recording died of a signal that no schedule\n"
	"reproduced (a native run of PROG is compared then).  A failure that two\n"
	"native runs of PROG and the recorded order show too, in the state the\n"
	"runs left (its files), is not counted.  SIGINT, SIGTERM or\n"
	"SIGHUP while the predictions are replayed: the summary so far, exit 128+N.\n"
	"\n"
	"options:\n"
	"  -o, --output DIR   output directory (default ./avtrace-out)\n"
	"  -f, --force        replace an existing avtrace output directory\n"
	"  -j, --jobs N       replays at a time, each on its own CPU (default: CPUs)\n"
	"      --max N        replay the N best ranked predictions (default 100)\n"
	"  -t, --timeout S    a scheduled thread stuck S seconds: infeasible (default 2;\n"
	"                     0.001..1e6)\n"
	"      --watch V[,V]  as for record; --no-access, --access-scope, --no-heap,\n"
	"                     --sync-spec, --futex too\n"
	"      --no-stacks    do not record call stacks (they are on: each function\n"
	"                     call is a transaction for the atomicity detector)\n"
	"      --stack-depth N  frames per event (default 8, at most 16)\n"
	"      --no-agent, --agent  as for record: the replays of the predictions\n"
	"                     run through the in-process agent unless --no-agent\n"
	"                     (the recording too with --no-stacks)\n"
	"      --atomic F[,F]  only calls of these functions are meant to be atomic\n"
	"      --time S       exploration budget in seconds: no run starts after S\n"
	"                     seconds, and the first failing run ends it (default\n"
	"                     30, but at least 100 runs; with --explore N, none)\n"
	"      --explore N    exploration budget in runs, all of them (default: the\n"
	"                     time budget ends it; 0: no exploration)\n"
	"      --no-explore   the same as --explore 0\n"
	"      --seed S       seed of the exploration (default 1)\n"
	"      --policy P     the exploration's policy, as for explore: portfolio\n"
	"                     (default: surw, pos, surw, pct in turn), surw, pos,\n"
	"                     guided, pct, pctvb or tb, each with its default\n"
	"                     bounds\n"
	"      --pattern FILE  more access-anomaly patterns for pecan (docs/predict.md)\n"
	"      --no-penelope, --no-pecan, --no-order  skip that detector\n"
	"      --sarif FILE   also write the reproduced bugs as SARIF 2.1.0 to FILE\n"
	"      --minimize N   minimise each reproduced bug's schedule to the fewest\n"
	"                     context switches, trying at most N candidate replays\n"
	"                     per bug (default 40; as 'avtrace minimize'); its report\n"
	"                     then leads with them and their passing neighbours\n"
	"      --no-minimize  the same as --minimize 0\n"
	"  -q, --quiet        no summary lines from the recording\n"
	"      --json         print one JSON document (the table, the bugs, the exit\n"
	"                     status; docs/json-output.md) instead of the table\n";

/* Runs argv natively: no ptrace, ASLR off as in the recording, standard
 * streams on /dev/null (stdin: what recording dir kept of it, as replays
 * read it), at most limit_s seconds.  Its shell-style status, or -1 if it
 * could not run or had to be killed. */
static int run_natively(char *const *argv, const char *dir, double limit_s)
{
	char in[4300];
	snprintf(in, sizeof in, "%s/stdin", dir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		personality(ADDR_NO_RANDOMIZE);
		int fd = open("/dev/null", O_RDWR), kept = open(in, O_RDONLY);
		if (fd >= 0) {
			dup2(kept >= 0 ? kept : fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setpgid(0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (double waited = 0; waited < limit_s && !tracer_interrupted(); waited += 0.01) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		if (w < 0)
			return -1;
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* The signal the recorded run died of (meta.json), 0 if none. */
static int recorded_signal(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/meta.json", dir);
	json_t *j = json_load_file(path, 0, NULL);
	int sig = j ? (int)json_integer_value(json_object_get(j, "signal")) : 0;
	json_decref(j);
	return sig;
}

/* The signal of the recording's fatal-signal event, 0 if none: a fault
 * that a sanitizer's handler took (ASan reports it and exits 1) is
 * recorded as the fault (tracer/loop.c, sanitizer_fault), as a replay's
 * and an explored run's failure is, though the process exited. */
static int recorded_fault(const struct trace *t)
{
	for (size_t i = t ? t->nev : 0; i-- > 0;)
		if (t->ev[i].kind == AVT_EV_FATAL_SIGNAL)
			return t->ev[i].size;
	return 0;
}

/* The shell-style exit status of the recorded run (meta.json), 0 if none. */
static int recorded_status(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/meta.json", dir);
	json_t *j = json_load_file(path, 0, NULL);
	int st = j ? (int)json_integer_value(json_object_get(j, "exit_status")) : 0;
	json_decref(j);
	return st;
}

/* One avtrace test: its options, then what each phase found.  The
 * results model (res) is what the table, the summary lines, --json and
 * SARIF print. */
struct test_run {
	struct record_opts ro;
	struct explore_opts eo;
	struct predict_opts po;
	struct pr_patterns pats;
	struct atomic_funcs af;
	const char *watch[5];
	const char *timeout;
	struct test_output out;
	unsigned jobs, min_cap;
	int agent;
	double time_s;           /* --time, or -1 */
	bool runs_set;           /* --explore or --no-explore given */
	struct tracer_stats st;
	int rs, rec_sig, native; /* the recording's status, its signal, a native run's */
	struct trace *t;
	struct prediction_set set;
	struct names names;      /* for the table's "where" */
	char rdir[4200];         /* DIR/reports */
	struct results res;
	int control;             /* state_failure's answer: 0 not asked */
};

/* "BUG (SIGSEGV)" for a fatal signal, else the outcome. */
static const char *short_outcome(const json_t *replay, char *buf, size_t len)
{
	const char *oc = replay ? json_string_value(json_object_get(replay, "outcome")) : NULL;
	const char *head = replay ? json_string_value(json_object_get(replay, "headline")) : NULL;
	const char *sig = head ? strstr(head, "SIG") : NULL;
	if (oc && !strcmp(oc, "BUG") && sig)
		snprintf(buf, len, "BUG (%.*s)", (int)strcspn(sig, " "), sig);
	else
		snprintf(buf, len, "%s", oc ? oc : "ERROR");
	return buf;
}

/* Minimises reproduced bug b's schedule (cli/minimize.c): its report then
 * leads with the fewest switches that fail. */
static void test_minimize(struct test_run *tr, const struct result_bug *b)
{
	char x[16], sched[4300], ref[4300];
	const char *dir = tr->ro.dir;
	struct min_summary sum;
	snprintf(x, sizeof x, "%04u", b->schedule);
	snprintf(sched, sizeof sched, "%s/schedules/%04u.sched", dir, b->schedule);
	snprintf(ref, sizeof ref, "%s/replays/%04u.json", dir, b->schedule);
	fflush(stdout);
	if (minimize_bug(dir, x, sched, ref, tr->min_cap, tr->timeout, false, &sum) != 0) {
		printf("  #%u: not minimised (see above)\n", b->schedule);
		return;
	}
	printf("  #%u fails with %zu switch%s (%zu in its schedule; %u replays%s, %.1f s): %s/reports/%s.min.sched\n",
	       b->schedule, sum.switches, sum.switches == 1 ? "" : "es", sum.from,
	       sum.replays + sum.neighbour_replays, sum.capped ? ", stopped at the cap" : "", sum.seconds,
	       dir, x);
}

/* Replay i of the predictions has ended (in rank order): its row goes to
 * the model and the table; the first replay of a distinct bug keeps its
 * text report, now, in reports/; the others' go. */
static void test_replay_done(void *ctx, size_t i)
{
	struct test_run *tr = ctx;
	const struct prediction *p = &tr->set.p[i];
	char staged[4300], report[4300], det[64], oc[64];
	snprintf(staged, sizeof staged, "%s/replays/%04u.txt", tr->ro.dir, p->id);
	struct result_row *row = results_add_replay(&tr->res, p->id);
	if (!row) {
		remove(staged);
		return;
	}
	prediction_where(&tr->names, tr->t, p, row->where, sizeof row->where);
	printf("  %-4u %-14s %-15s %-40s %s\n", p->id, predict_detectors(p, det, sizeof det), p->pattern,
	       row->where, short_outcome(row->replay, oc, sizeof oc));
	snprintf(report, sizeof report, "%s/%04u.txt", tr->rdir, p->id);
	if (row->first && rename(staged, report) == 0)
		snprintf(tr->res.bugs[row->bug].report, sizeof tr->res.bugs[0].report, "%s", report);
	else
		remove(staged);
}

/* The shell-style status a replay failed with, or -1 (a deadlock, none). */
static int replay_status(const json_t *rp)
{
	const char *oc = json_string_value(json_object_get(rp, "outcome"));
	int sig = (int)json_integer_value(json_object_get(rp, "signal"));
	json_t *ex = json_object_get(rp, "exit_status");
	if (!oc || strcmp(oc, "BUG"))
		return -1;
	return sig > 0 ? 128 + sig : json_is_integer(ex) ? (int)json_integer_value(ex) : -1;
}

/* The recorded order, replayed now (replays/0000.*, removed after): the
 * status it fails with, 0 if it takes another path (INFEASIBLE), or -1
 * (it passed, or no answer).  The recording passed in that order from the
 * state it started from, so a race that also shows natively now and then
 * passes here (a replay is deterministic); the state the runs left does
 * not. */
static int recorded_order_now(struct test_run *tr)
{
	unsigned zero = 0;
	char path[4300];
	struct replay_batch b = { .dir = tr->ro.dir, .nums = &zero, .n = 1, .jobs = 1, .timeout = tr->timeout };
	if (run_replays(&b) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/replays/0000.json", tr->ro.dir);
	json_t *rp = json_load_file(path, 0, NULL);
	const char *oc = json_string_value(json_object_get(rp, "outcome"));
	int st = oc && !strcmp(oc, "INFEASIBLE") ? 0 : replay_status(rp);
	json_decref(rp);
	remove(path);
	snprintf(path, sizeof path, "%s/replays/0000.avt", tr->ro.dir);
	remove(path);
	return st;
}

/* Does PROG now fail on its own, whatever the order (issue 30)?  Every
 * run starts where the recording and the runs before it left PROG's
 * files: a script that created a table in db.sqlite, a program that made
 * its output with O_CREAT|O_EXCL, fails in every later run.  Those files
 * are not put back: which of them PROG made cannot be told apart from
 * what another process (a parallel build, an editor) made there meanwhile
 * without following every file system call, and avtrace removes nothing
 * it cannot prove was PROG's.  So PROG runs in the state as it is now, in
 * the recorded order and then natively, twice: the status all three fail
 * with (a failure once only is no state's, nor one the recorded order
 * does not show), or -1 (none, or a native run longer than
 * CONTROL_LIMIT_S).  The replay first: a real race passes there, and
 * costs no native run (some sleep for seconds). */
static int state_failure(struct test_run *tr)
{
	int replayed = recorded_order_now(tr);
	if (replayed < 0 || tracer_interrupted())
		return -1;
	int first = run_natively(tr->ro.argv, tr->ro.dir, CONTROL_LIMIT_S);
	if (first <= 0 || (replayed && first != replayed) || tracer_interrupted())
		return -1;
	return run_natively(tr->ro.argv, tr->ro.dir, CONTROL_LIMIT_S) == first ? first : -1;
}

/* Only when the recording passed: a failed one is compared with a native
 * run already (compare_natively); not for a process of a tree, whose
 * command is not PROG alone. */
static bool control_applies(const struct test_run *tr)
{
	return tr->rs == 0 && !tr->out.tree && !tracer_interrupted();
}

/* A bug counted so far that fails with the status PROG fails with now,
 * natively and in the recorded order (state_failure), is the state's
 * doing, not the interleaving's: not counted, its report removed.  A
 * real bug that fails exactly so is missed; the recording passed in that
 * order from the state it started from, so it did not fail so then. */
static void drop_state_bugs(struct test_run *tr)
{
	bool statused = false; /* a deadlock is never dropped: no need to ask */
	for (size_t i = 0; i < tr->res.nbugs; i++)
		statused |= replay_status(tr->res.bugs[i].replay) > 0;
	if (!statused || !control_applies(tr))
		return;
	tr->control = state_failure(tr);
	for (size_t i = tr->res.nbugs; tr->control > 0 && i-- > 0;) {
		const struct result_bug *b = &tr->res.bugs[i];
		int st = replay_status(b->replay);
		char who[64];
		if (st != tr->control)
			continue;
		if (b->explored)
			snprintf(who, sizeof who, "explored run %u", b->run);
		else
			snprintf(who, sizeof who, "replay #%u", b->schedule);
		printf("%s failed (%s %d), but so do two native runs and the recorded order now: the program's files changed (state), not counted\n",
		       who, st > 128 ? "signal" : "exit status", st > 128 ? st - 128 : st);
		results_drop(&tr->res, i);
	}
}

/* Replays every prediction, the table as they end; -1 on error, else the
 * signal that stopped it (0: none). */
static int test_replay(struct test_run *tr)
{
	unsigned *ids = calloc(tr->set.n ? tr->set.n : 1, sizeof *ids);
	if (!ids)
		return -1;
	for (size_t i = 0; i < tr->set.n; i++)
		ids[i] = tr->set.p[i].id;
	names_open(&tr->names, tr->t);
	printf("  %-4s %-14s %-15s %-40s %s\n", "#", "detector", "pattern", "where", "outcome");
	struct replay_batch b = { .dir = tr->ro.dir, .nums = ids, .n = tr->set.n, .jobs = tr->jobs,
				  .timeout = tr->timeout, .text = true, .done = test_replay_done, .ctx = tr };
	int rc = run_replays(&b);
	names_close(&tr->names);
	free(ids);
	if (rc == 0) /* before minimising what may not count */
		drop_state_bugs(tr);
	for (size_t k = 0; rc == 0 && tr->min_cap && k < tr->res.nbugs; k++)
		test_minimize(tr, &tr->res.bugs[k]);
	return rc;
}

/* The tally line; then the count of bugs, as in the model, reports/
 * holding one report each. */
static void say_tally(const struct results *r)
{
	const struct run_tally *t = &r->tally;
	unsigned total = t->ran + t->diverged + t->unfinished;
	if (total)
		printf("%u of %u schedule%s ran to their end (%u diverged from what the program can do, %u stuck until the time limit or failed)\n",
		       t->ran, total, total == 1 ? "" : "s", t->diverged, t->unfinished);
}

/* One line per distinct bug: what failed, and the variables of the
 * prediction that reproduced it. */
static void say_bugs(const struct test_run *tr)
{
	struct names n;
	bool named = tr->t && names_open(&n, tr->t) == 0;
	for (size_t i = 0; i < tr->res.nbugs; i++) {
		const struct result_bug *b = &tr->res.bugs[i];
		char vars[512] = "";
		json_t *objs = b->prediction ? json_object_get(b->prediction, "objs") : NULL;
		json_t *ev0 = b->prediction ? json_array_get(json_object_get(b->prediction, "events"), 0) : NULL;
		if (named && ev0) /* the image it ran in (a wrapper exec'd it) */
			names_at(&n, (uint64_t)json_integer_value(json_object_get(ev0, "seq")));
		size_t k;
		json_t *o;
		json_array_foreach(objs, k, o)
		{
			char name[256];
			size_t l = strlen(vars);
			const char *v = named ? names_obj_or_addr(&n, (uint64_t)json_integer_value(o), name, sizeof name) : NULL;
			if (v)
				snprintf(vars + l, sizeof vars - l, "%s%s", l ? ", " : "; on ", v);
		}
		printf("  bug %zu: %.*s%s\n", i + 1, (int)strcspn(b->key, "\n"), b->key, vars);
	}
	if (named)
		names_close(&n);
}

/* The last lines and the exit status.  "No bug" is said only of schedules
 * that ran: when most never reached their end, when exploration saw a
 * failure that its replay did not confirm, or when the recording died of
 * a signal that no schedule nor a native run shows, the answer is
 * inconclusive.  A recording that failed on its own (and natively) is a
 * failure, exit 1, but no bug of an interleaving. */
static int verdict(const struct test_run *tr)
{
	const struct results *r = &tr->res;
	unsigned total = r->tally.ran + r->tally.diverged + r->tally.unfinished;
	say_tally(r);
	if (r->nbugs) {
		say_bugs(tr);
		printf("%zu bug%s reproduced; reports in %s/\n", r->nbugs, r->nbugs == 1 ? "" : "s", tr->rdir);
		return 1;
	}
	if (tr->rs != 0 && tr->native != tr->rs) {
		printf("inconclusive: the recorded run failed (%s %d), no schedule reproduced it and a native run did not fail so: avtrace may have disturbed the program (please report it), or the failure needs timing that a schedule does not control\n",
		       tr->rec_sig ? "signal" : "exit status", tr->rec_sig ? tr->rec_sig : tr->rs);
		return EXIT_INCONCLUSIVE;
	}
	if (tr->rs != 0 && tr->native == tr->rs) {
		printf("no bug reproduced beyond the recorded run's own failure\n");
		return 1;
	}
	if (r->unconfirmed) {
		printf("inconclusive: no bug reproduced, but %u failure%s seen in exploration did not fail again when replayed (see above)\n",
		       r->unconfirmed, r->unconfirmed == 1 ? "" : "s");
		return EXIT_INCONCLUSIVE;
	}
	if (total && 2 * r->tally.unfinished > total) {
		printf("inconclusive: no bug reproduced, but %u of %u schedules never reached their end (stuck until the time limit, or failed): raise --timeout\n",
		       r->tally.unfinished, total);
		return EXIT_INCONCLUSIVE;
	}
	printf("no bug reproduced\n");
	return 0;
}

/* Stopped by signal sig in the replays: the summary of what ended, then
 * 128 + sig. */
static int test_stopped(struct test_run *tr, int sig)
{
	const struct results *r = &tr->res;
	printf("interrupted by SIG%s: %zu of %zu schedules replayed\n", sigabbrev_np(sig) ?: "?", r->nrows,
	       tr->set.n);
	say_tally(r);
	printf("%zu bug%s reproduced so far; reports in %s/\n", r->nbugs, r->nbugs == 1 ? "" : "s", tr->rdir);
	return 128 + sig;
}

/* Record-phase options; 1 if c was not one of them, -1 on a bad value. */
static int record_option(struct test_run *tr, int c)
{
	struct record_opts *ro = &tr->ro;
	switch (c) {
	case 'o': ro->dir = optarg; return 0;
	case 'f': ro->force = true; return 0;
	case 'w':
		for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
			if (ro->nwatch == 4)
				return usage_error("test", "--watch takes at most 4 variables"), -1;
			tr->watch[ro->nwatch++] = tok;
		}
		return 0;
	case 'W': ro->no_auto_watch = true; return 0;
	case 0x101:
		ro->access_scope = optarg;
		return arg_scope("test", "--access-scope", optarg) < 0 ? -1 : 0;
	case 'K': return 0;
	case 'N': ro->stack_depth = 0; return 0;
	case 'k': return arg_uint("test", "--stack-depth", optarg, 1, 16, &ro->stack_depth) < 0 ? -1 : 0;
	case 'H': ro->no_heap = true; return 0;
	case 0x110:
		ro->sync_spec_name = optarg;
		return arg_sync_spec(optarg, &ro->sync_spec) < 0 ? -1 : 0;
	case 0x111: ro->futex = true; return 0;
	case 'n': tr->agent = 0; return 0;
	case 'a': tr->agent = 1; return 0;
	case 'q': avt_quiet = 1; return 0;
	}
	return 1;
}

/* Predict, replay and explore options; 1 if c was none, -1 if bad. */
/* --policy P: the algorithm with the bounds `avtrace explore --policy P`
 * gives it when told no bounds (cli/explore.c); -1 after a usage error. */
static int test_policy(struct xp_config *cfg, const char *name)
{
	if (xp_algo_parse(name, &cfg->algo) < 0)
		return usage_error("test", "bad --policy '%s' (surw, pos, guided, pct, pctvb, tb or portfolio)",
				   name), -1;
	if (cfg->algo == XP_PCT || cfg->algo == XP_TB)
		cfg->nvars = 0;
	else if (cfg->algo == XP_PCTVB)
		cfg->nvars = 1;
	if (cfg->algo == XP_TB && !cfg->threads)
		cfg->threads = 2;
	return 0;
}

static int search_option(struct test_run *tr, int c)
{
	double secs;
	switch (c) {
	case 'j': return arg_uint("test", "-j", optarg, 1, 256, &tr->jobs) < 0 ? -1 : 0;
	case 'm': return arg_uint("test", "--max", optarg, 1, 1000000, &tr->po.max_predictions) < 0 ? -1 : 0;
	case 't':
		tr->timeout = optarg;
		return arg_seconds("test", "--timeout", optarg, &secs) < 0 ? -1 : 0;
	case 'A':
		return atomic_funcs_parse(&tr->af, optarg) < 0
			       ? usage_error("test", "--atomic takes at most 16 functions"), -1 : 0;
	case 'E':
		tr->runs_set = true;
		return arg_uint("test", "--explore", optarg, 0, 1000000, &tr->eo.runs) < 0 ? -1 : 0;
	case 'X': tr->eo.runs = 0, tr->runs_set = true; return 0;
	case 0x104: return arg_seconds("test", "--time", optarg, &tr->time_s) < 0 ? -1 : 0;
	case 'S': return arg_u64("test", "--seed", optarg, &tr->eo.seed) < 0 ? -1 : 0;
	case 0x105: return test_policy(&tr->eo.cfg, optarg);
	case 'p': return pr_patterns_load(&tr->pats, optarg) < 0 ? -1 : 0;
	case 'C': tr->po.pecan = false; return 0;
	case 'O': tr->po.order = false; return 0;
	case 'P': tr->po.penelope = false; return 0;
	case 'R': tr->out.sarif = optarg; return 0;
	case 'J': tr->out.json = true; return 0;
	case 0x102: return arg_uint("test", "--minimize", optarg, 0, 1000000, &tr->min_cap) < 0 ? -1 : 0;
	case 0x103: tr->min_cap = 0; return 0;
	}
	return 1;
}

/* Runs given: those runs, all of them (and --time if given too);
 * otherwise the time budget, ended early by the first bug. */
static void explore_budget(struct test_run *tr)
{
	if (tr->runs_set) {
		tr->eo.time_s = tr->time_s >= 0 ? tr->time_s : 0;
		return;
	}
	tr->eo.runs = EXPLORE_MAX_RUNS;
	tr->eo.stop_at_bug = true;
	tr->eo.time_s = tr->time_s >= 0 ? tr->time_s : TEST_EXPLORE_TIME_S;
	tr->eo.min_runs = tr->time_s >= 0 ? 0 : TEST_EXPLORE_MIN_RUNS;
}

/* Parses the options; 0, EXIT_USAGE, or -1 after --help. */
static int test_options(struct test_run *tr, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "force", no_argument, 0, 'f' },
		{ "jobs", required_argument, 0, 'j' }, { "max", required_argument, 0, 'm' },
		{ "timeout", required_argument, 0, 't' }, { "watch", required_argument, 0, 'w' },
		{ "no-auto-watch", no_argument, 0, 'W' }, { "no-access", no_argument, 0, 'W' }, { "access-scope", required_argument, 0, 0x101 },
		{ "stacks", no_argument, 0, 'K' }, { "stack-depth", required_argument, 0, 'k' },
		{ "no-stacks", no_argument, 0, 'N' }, { "no-heap", no_argument, 0, 'H' },
		{ "sync-spec", required_argument, 0, 0x110 }, { "futex", no_argument, 0, 0x111 },
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' },
		{ "atomic", required_argument, 0, 'A' }, { "explore", required_argument, 0, 'E' },
		{ "no-explore", no_argument, 0, 'X' }, { "seed", required_argument, 0, 'S' },
		{ "policy", required_argument, 0, 0x105 },
		{ "pattern", required_argument, 0, 'p' },
		{ "no-pecan", no_argument, 0, 'C' }, { "no-penelope", no_argument, 0, 'P' },
		{ "no-order", no_argument, 0, 'O' }, { "no-agent", no_argument, 0, 'n' },
		{ "agent", no_argument, 0, 'a' },
		{ "sarif", required_argument, 0, 'R' }, { "json", no_argument, 0, 'J' },
		{ "minimize", required_argument, 0, 0x102 }, { "no-minimize", no_argument, 0, 0x103 },
		{ "time", required_argument, 0, 0x104 },
		{ 0, 0, 0, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:fj:t:qh", lo, NULL)) != -1) {
		if (c == 'h') {
			fputs(test_help, stdout);
			return -1;
		}
		int rc = record_option(tr, c);
		if (rc == 1)
			rc = search_option(tr, c);
		if (rc == 1)
			return usage_error("test", "bad option");
		if (rc < 0)
			return EXIT_USAGE;
	}
	if (optind >= argc)
		return usage_error("test", "no program to test");
	explore_budget(tr);
	if (agent_choice(tr->agent, &tr->ro.agent_lib))
		return EXIT_USAGE;
	tr->ro.argv = argv + optind;
	tr->ro.watch = tr->watch;
	tr->ro.quiet_target = true;
	if (!tr->jobs) {
		cpu_set_t set;
		tr->jobs = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	}
	return 0;
}

/* A recording that failed: does PROG fail that way on its own too?  A
 * debugger must not change what the program computes; and a failure of
 * every run is no interleaving's doing. */
static void compare_natively(struct test_run *tr)
{
	char what[64], nat[96];
	tr->native = run_natively(tr->ro.argv, tr->ro.dir, NATIVE_LIMIT_S);
	if (tr->rec_sig)
		snprintf(what, sizeof what, "died of SIG%s", sigabbrev_np(tr->rec_sig) ?: "?");
	else
		snprintf(what, sizeof what, "exited with status %d", tr->rs);
	if (tr->native < 0)
		snprintf(nat, sizeof nat, "did not end within %.0f s", NATIVE_LIMIT_S);
	else if (tr->native > 128)
		snprintf(nat, sizeof nat, "died of SIG%s", sigabbrev_np(tr->native - 128) ?: "?");
	else
		snprintf(nat, sizeof nat, "exited with status %d", tr->native);
	if (tr->native == tr->rs)
		printf("the recorded run %s, and so does a native run\n", what);
	else
		printf("the recorded run %s; a native run %s\n", what, nat);
}

/* Records PROG, loads the trace; 0, or the exit status to end with. */
static int test_record(struct test_run *tr)
{
	tr->rs = record_run(&tr->ro, &tr->st);
	if (tracer_interrupted())
		return 128 + tracer_interrupted();
	tr->t = tr->rs == EXIT_USAGE ? NULL : load_trace(tr->ro.dir);
	if (!tr->t)
		return EXIT_USAGE;
	tr->rec_sig = recorded_signal(tr->ro.dir);
	if (!tr->rec_sig && tr->rs != 0)
		tr->rec_sig = recorded_fault(tr->t);
	if (tr->rs != 0)
		compare_natively(tr);
	return 0;
}

/* Predicts and writes the schedules; 0, or the exit status to end with. */
static int test_predict(struct test_run *tr)
{
	struct names vn;
	atomic_funcs_arm(&tr->af, tr->t, &tr->po);
	struct avt_meta *meta = recorded_scope(tr->ro.dir, &tr->po);
	tr->po.scope_known = true; /* what the recording instrumented */
	tr->po.scope = tr->ro.access_scope;
	bool vn_open = names_open(&vn, tr->t) == 0;
	if (vn_open) { /* AVFilter asks where changed reads' values go */
		tr->po.read_steers = sym_read_steers;
		tr->po.read_ctx = vn.sym;
		tr->po.rmw_blind = sym_rmw_blind;
	}
	int prc = tracer_interrupted() ? -1 : predict_run(tr->t, &tr->po, &tr->set);
	if (vn_open)
		names_close(&vn);
	atomic_funcs_release(&tr->af);
	tr->po.program = NULL;
	meta_free(meta);
	if (prc < 0)
		return tracer_interrupted() ? 128 + tracer_interrupted() : EXIT_USAGE;
	name_predictions(&tr->set, tr->t);
	if (predict_write(&tr->set, tr->t, tr->ro.dir) < 0)
		return EXIT_USAGE;
	if (prc == PREDICT_STOPPED) { /* a signal: what it made is written */
		avt_error("interrupted by SIG%s while predicting: %s/predictions.json keeps the %zu prediction%s made so far",
			  sigabbrev_np(predict_interrupted()) ?: "?", tr->ro.dir, tr->set.n,
			  tr->set.n == 1 ? "" : "s");
		return 128 + predict_interrupted();
	}
	char ev[32];
	printf("recorded %u threads, %s events; %zu prediction%s; replaying %zu schedule%s (-j %u)\n",
	       tr->st.threads, fmt_thousands(tr->st.events, ev, sizeof ev), tr->set.n,
	       tr->set.n == 1 ? "" : "s", tr->set.n, tr->set.n == 1 ? "" : "s", tr->jobs);
	print_dropped(&tr->set);
	print_lockwords(&tr->set, tr->t);
	if (tr->rs != 0 && tr->native == tr->rs)
		/* say it once: every schedule fails this way, which is no
		 * interleaving's doing; what differs is reported apart */
		printf("the recorded run itself failed (%s %d): failures that depend on the interleaving are reported apart\n",
		       tr->rec_sig ? "signal" : "exit status", tr->rec_sig ? tr->rec_sig : tr->rs);
	fflush(stdout);
	return 0;
}

/* The recorded run's failure as a run's is told (explore's as_recorded):
 * its fatal signal as 128 + the signal, else its exit status. */
static int recorded_failure(const struct test_run *tr)
{
	return tr->rec_sig ? 128 + tr->rec_sig : tr->rs;
}

/* One exploration, its bugs then asked about (drop_state_bugs): runs
 * failing as the recorded run did, or as PROG does now natively and in
 * the recorded order (tr->control, when asked already), are no finding
 * and end no budget.  0, or EXIT_USAGE. */
static int explore_round(struct test_run *tr)
{
	struct explore_report how = { .timeout = tr->timeout, .report_dir = tr->rdir,
				      .minimize_cap = tr->min_cap, .res = &tr->res,
				      .baseline_status = tr->rs != 0 && tr->native == tr->rs ? recorded_failure(tr) : 0 };
	if (!how.baseline_status && tr->control > 0) {
		how.baseline_status = tr->control;
		how.baseline_who = "native runs and the recorded order now do, from the files earlier runs left";
	}
	tr->eo.stop_except = how.baseline_status;
	const struct run_tally *t = &tr->res.tally;
	unsigned before = t->ran + t->diverged + t->unfinished;
	if (explore_and_report(&tr->eo, &how) == EXIT_USAGE)
		return EXIT_USAGE;
	unsigned done = t->ran + t->diverged + t->unfinished - before;
	tr->eo.first_run += done; /* a next round numbers its runs on */
	if (tr->eo.runs < EXPLORE_MAX_RUNS) /* else the budget is time alone */
		tr->eo.runs = tr->eo.runs > done ? tr->eo.runs - done : 0;
	tr->eo.min_runs = tr->eo.min_runs > done ? tr->eo.min_runs - done : 0;
	drop_state_bugs(tr); /* the runs may have changed the state again */
	return 0;
}

/* What is left of the budget after the rounds so far, begun at t0, in
 * tr->eo; false when nothing is. */
static bool explore_rest(struct test_run *tr, const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double spent = (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
	if (!tr->eo.runs || tracer_interrupted())
		return false;
	if (tr->eo.time_s > 0) {
		if (spent >= tr->eo.time_s && !tr->eo.min_runs)
			return false;
		double left = (double)(long)((tr->eo.time_s - spent) * 10) / 10; /* as said: 0.1 s */
		tr->eo.time_s = left > 0.1 ? left : 0.1;
	}
	return true;
}

/* Prediction only reorders what the recording did: when it reproduced
 * nothing, look further.  0, or EXIT_USAGE. */
static int test_explore(struct test_run *tr)
{
	if (tr->res.nbugs || !tr->eo.runs)
		return 0;
	if (tr->runs_set)
		printf("no bug reproduced by the predictions; exploring (--explore %u)\n", tr->eo.runs);
	else
		printf("no bug reproduced by the predictions; exploring (--time %g)\n", tr->eo.time_s);
	tr->eo.dir = tr->ro.dir;
	tr->eo.jobs = tr->jobs;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct explore_opts budget = tr->eo; /* the rounds spend it; a tree's next process has it whole */
	int rc = 0;
	for (int round = 0; round < 2 && !rc; round++) {
		rc = explore_round(tr);
		/* every failure it counted was the state's (drop_state_bugs),
		 * and the first may have ended the budget: the rest of it,
		 * those failures now counted apart */
		if (rc || tr->res.nbugs || tr->control <= 0 || tr->eo.stop_except == tr->control ||
		    !explore_rest(tr, &t0))
			break;
		printf("every failure exploration saw was the state's: exploring the rest of the budget\n");
	}
	tr->eo = budget;
	return rc;
}

/* Predicts, replays and explores the recording in tr->ro.dir (tr->t
 * loaded); the exit status. */
static int test_process(struct test_run *tr)
{
	int rc;
	if ((rc = test_predict(tr)))
		return rc;
	snprintf(tr->rdir, sizeof tr->rdir, "%s/reports", tr->ro.dir);
	mkdir(tr->rdir, 0777);
	results_init(&tr->res, tr->ro.dir);
	int sig = test_replay(tr);
	if (sig < 0)
		return EXIT_USAGE;
	if (sig > 0)
		return test_output_finish(&tr->out, &tr->res, test_stopped(tr, sig));
	if (avt_nwrite_errors) {
		/* a full disk: the runs to come could keep nothing either */
		avt_error("stopped: results cannot be written in '%s'", tr->ro.dir);
		return EXIT_USAGE;
	}
	if (test_explore(tr))
		return EXIT_USAGE;
	if (tracer_interrupted()) /* while exploring: the summary so far */
		return test_output_finish(&tr->out, &tr->res, test_stopped(tr, tracer_interrupted()));
	if (tr->res.nbugs) /* the picture beside each report (cli/html.c) */
		html_write_beside_reports(tr->ro.dir);
	if (tr->res.nbugs && verify_describe_reports(tr->ro.dir) < 0) /* for avtrace verify after a rebuild */
		avt_warn("cannot describe the reported bugs' events in '%s' (avtrace verify needs them)", tr->rdir);
	return test_output_finish(&tr->out, &tr->res, verdict(tr));
}

/* The next process recording of the tree as tr's: 0, or -1. */
static int test_take(struct test_run *tr, const struct tree_rec *p)
{
	results_release(&tr->res);
	memset(&tr->res, 0, sizeof tr->res);
	tr->control = 0;
	prediction_set_release(&tr->set);
	memset(&tr->set, 0, sizeof tr->set);
	if (tr->t)
		trace_free(tr->t);
	tr->ro.dir = p->dir;
	tr->t = load_trace(p->dir);
	if (!tr->t)
		return -1;
	tr->st.threads = trace_nthreads(tr->t);
	tr->st.events = tr->t->nev;
	/* its own failure was not compared with a native run of it */
	tr->rs = tr->native = recorded_status(p->dir);
	tr->rec_sig = recorded_signal(p->dir);
	if (!tr->rec_sig && tr->rs != 0)
		tr->rec_sig = recorded_fault(tr->t);
	return 0;
}

/* A command that exec'd another program (a wrapper): which one. */
static void say_exec(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/meta.json", dir);
	json_t *m = json_load_file(path, 0, NULL);
	const char *exe = json_string_value(json_object_get(m, "executable"));
	const char *argv0 = json_string_value(json_array_get(json_object_get(m, "argv"), 0));
	if (exe && argv0) {
		const char *a = strrchr(argv0, '/'), *e = strrchr(exe, '/');
		if (strcmp(a ? a + 1 : argv0, e ? e + 1 : exe))
			printf("%s exec'd %s: recorded in %s/\n", argv0, exe, dir);
	}
	json_decref(m);
}


/* The phases in turn, for the recorded process and then each other
 * multithreaded process of its tree; the exit status. */
static int test_phases(struct test_run *tr)
{
	int rc = test_record(tr);
	if (rc)
		return rc;
	struct tree_rec *procs;
	size_t n = tree_recordings(tr->ro.dir, &procs);
	/* a one-threaded launcher (a script, a runner) has nothing to try */
	int status = 0;
	const char *root = tr->ro.dir;
	say_exec(root);
	tr->out.tree = n > 0;
	tr->out.process = "process 0 (the command)";
	if (tr->st.threads >= 2 || !n)
		status = test_process(tr);
	else
		printf("%s: one thread; its processes follow\n", root);
	for (size_t i = 0; i < n && status < 128; i++) {
		printf("\n== %s: %s\n", procs[i].name, procs[i].dir);
		fflush(stdout);
		tr->out.process = procs[i].name;
		rc = test_take(tr, &procs[i]) < 0 ? EXIT_USAGE : test_process(tr);
		status = rc >= 128 ? rc : tree_status(status, rc);
	}
	if (n)
		status = test_output_tree(&tr->out, root, status);
	tr->ro.dir = root;
	free(procs);
	return status;
}

int cmd_test(int argc, char **argv)
{
	/* call stacks on: function calls are the transactions SideTrack checks */
	struct test_run *tr = calloc(1, sizeof *tr);
	if (!tr)
		return EXIT_USAGE;
	tr->ro = (struct record_opts){ .dir = "avtrace-out", .cpu = default_cpu(), .keep_stdin = !isatty(0),
				       .slice_ms = 10, .stack_depth = 8, .tree = true };
	tr->eo = (struct explore_opts){ .runs = EXPLORE_MAX_RUNS, .seed = 1, .timeout_s = 10,
					.cfg = EXPLORE_DEFAULT_CFG };
	tr->time_s = -1;
	tr->po = (struct predict_opts){ .deadlocks = true, .sidetrack = true, .penelope = true,
					.pecan = true, .order = true, .patterns = &tr->pats };
	tr->timeout = "2";
	tr->min_cap = MINIMIZE_DEFAULT_REPLAYS;
	tr->agent = -1;
	int rc = test_options(tr, argc, argv);
	if (rc == 0) {
		test_output_begin(&tr->out);
		rc = test_phases(tr);
	}
	results_release(&tr->res);
	prediction_set_release(&tr->set);
	if (tr->t)
		trace_free(tr->t);
	pr_patterns_release(&tr->pats); /* the predictions' pattern names */
	free(tr);
	return rc < 0 ? 0 : rc;
}
