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
#include "html.h"
#include "names.h"
#include "results.h"
#include "symbolizer/sym.h"
#include "predict/pattern.h"
#include "predict/predict.h"
#include "trace/log.h"
#include "tracer/record.h"

/* Exploration runs after the predictions when they reproduced nothing. */
#define TEST_EXPLORE_RUNS 100
/* Exit status when no bug was reproduced but that is no clean result: most
 * schedules never ran to their end, or the recording died of a signal that
 * no schedule reproduced. */
#define EXIT_INCONCLUSIVE 3
/* How long the native run that a failed recording is compared with may take. */
#define NATIVE_LIMIT_S 60.0

static const char test_help[] =
	"usage: avtrace test [options] -- PROG [ARGS...]\n"
	"\n"
	"Records PROG once, predicts schedules that would expose atomicity\n"
	"violations and deadlocks, replays each (rank order, -j at a time); if none\n"
	"reproduces a bug, explores random schedules (as 'avtrace explore', its\n"
	"default policy, the first runs starting where predictions that did not\n"
	"fail left off) within a budget.  Reports only the\n"
	"bugs it reproduced: one report per distinct failure in DIR/reports/.\n"
	"Exit status: 0 no bug reproduced, 1 at least one, 2 error, 3 inconclusive:\n"
	"no bug reproduced, but most schedules did not run to their end (stuck\n"
	"until the time limit), or the recording died of a signal that no schedule\n"
	"reproduced (a native run of PROG is compared then).\n"
	"\n"
	"options:\n"
	"  -o, --output DIR   output directory (default ./avtrace-out)\n"
	"  -f, --force        replace an existing avtrace output directory\n"
	"  -j, --jobs N       replays at a time, each on its own CPU (default: CPUs)\n"
	"      --max N        replay at most N predictions (default 100)\n"
	"  -t, --timeout S    a scheduled thread stuck S seconds: infeasible (default 2;\n"
	"                     0.001..1e6)\n"
	"      --watch V[,V]  as for record; --no-access, --access-scope, --no-heap,\n"
	"                     --sync-spec too\n"
	"      --no-stacks    do not record call stacks (they are on: each function\n"
	"                     call is a transaction for the atomicity detector)\n"
	"      --stack-depth N  frames per event (default 8, at most 16)\n"
	"      --no-agent, --agent  as for record: the replays of the predictions\n"
	"                     run through the in-process agent unless --no-agent\n"
	"                     (the recording too with --no-stacks)\n"
	"      --atomic F[,F]  only calls of these functions are meant to be atomic\n"
	"      --explore N    exploration budget in runs (default 100; 0: none)\n"
	"      --no-explore   the same as --explore 0\n"
	"      --seed S       seed of the exploration (default 1)\n"
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

struct outcome {
	char oc[16];
	char reason[256];
	char headline[512];
};

static void read_outcome(const char *dir, unsigned id, struct outcome *o)
{
	char path[4200];
	json_error_t je;
	memset(o, 0, sizeof *o);
	snprintf(path, sizeof path, "%s/replays/%04u.json", dir, id);
	json_t *j = json_load_file(path, 0, &je);
	const char *s = j ? json_string_value(json_object_get(j, "outcome")) : NULL;
	snprintf(o->oc, sizeof o->oc, "%s", s ? s : "ERROR");
	s = j ? json_string_value(json_object_get(j, "reason")) : NULL;
	snprintf(o->reason, sizeof o->reason, "%s", s ? s : "no result");
	json_decref(j);
	snprintf(path, sizeof path, "%s/reports/%04u.txt", dir, id);
	FILE *f = fopen(path, "r");
	if (f && fgets(o->headline, sizeof o->headline, f))
		o->headline[strcspn(o->headline, "\n")] = 0;
	if (f)
		fclose(f);
}

static bool reproduced(const struct outcome *o)
{
	return !strcmp(o->oc, "BUG") || !strcmp(o->oc, "DEADLOCK");
}

/* A distinct bug: its report's first line names the failure and where (or
 * for a deadlock, the first line of its cycle). */
static void bug_key(const char *dir, unsigned id, const struct outcome *o, char *key, size_t len)
{
	char path[4200], line[512];
	snprintf(key, len, "%s", o->headline);
	if (strcmp(o->oc, "DEADLOCK"))
		return;
	snprintf(path, sizeof path, "%s/reports/%04u.txt", dir, id);
	FILE *f = fopen(path, "r");
	size_t off = strlen(key);
	while (f && fgets(line, sizeof line, f) && off < len)
		if (strstr(line, " waits for lock ")) /* the cycle, in thread order */
			off += (size_t)snprintf(key + off, len - off, "|%s", strstr(line, "waits"));
	if (f)
		fclose(f);
}

/* A replay ran to its end, diverged (an answer: the program cannot follow
 * that order), or never finished (stuck until the time limit, an error). */
static void tally_outcome(struct run_tally *tally, const struct outcome *o)
{
	if (!strcmp(o->oc, "INFEASIBLE") && !strstr(o->reason, " within ") && !strstr(o->reason, "timed out"))
		tally->diverged++;
	else if (!strcmp(o->oc, "INFEASIBLE") || !strcmp(o->oc, "ERROR"))
		tally->unfinished++;
	else
		tally->ran++;
}

/* Runs argv natively: no ptrace, ASLR off as in the recording, standard
 * streams on /dev/null, at most NATIVE_LIMIT_S.  Its shell-style status,
 * or -1 if it could not run or had to be killed. */
static int run_natively(char *const *argv)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		personality(ADDR_NO_RANDOMIZE);
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setpgid(0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (double waited = 0; waited < NATIVE_LIMIT_S && !tracer_interrupted(); waited += 0.01) {
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

static const char *short_outcome(const struct outcome *o, char *buf, size_t len)
{
	const char *sig = strstr(o->headline, "SIG");
	if (!strcmp(o->oc, "BUG") && sig)
		snprintf(buf, len, "BUG (%.*s)", (int)strcspn(sig, " "), sig);
	else
		snprintf(buf, len, "%s", o->oc);
	return buf;
}

int print_predictions(const struct prediction_set *set, const struct trace *t);
void name_predictions(struct prediction_set *set, const struct trace *t);
struct atomic_funcs {
	struct names n;
	char *names[16];
	size_t count;
	bool open;
};
int atomic_funcs_parse(struct atomic_funcs *a, char *arg);
void atomic_funcs_arm(struct atomic_funcs *a, const struct trace *t, struct predict_opts *o);
void atomic_funcs_release(struct atomic_funcs *a);
const char *prediction_where(struct names *n, const struct trace *t, const struct prediction *p,
			     char *buf, size_t len);

/* Minimises reproduced bug id's schedule (cli/minimize.c): its report
 * then leads with the fewest switches that fail. */
static void test_minimize(const char *dir, unsigned id, const char *timeout, unsigned cap)
{
	char x[16], sched[4200], ref[4200];
	struct min_summary sum;
	snprintf(x, sizeof x, "%04u", id);
	snprintf(sched, sizeof sched, "%s/schedules/%04u.sched", dir, id);
	snprintf(ref, sizeof ref, "%s/replays/%04u.json", dir, id);
	fflush(stdout);
	if (minimize_bug(dir, x, sched, ref, cap, timeout, false, &sum) != 0) {
		printf("  #%u: not minimised (see above)\n", id);
		return;
	}
	printf("  #%u fails with %zu switch%s (%zu in its schedule; %u replays%s, %.1f s): %s/reports/%s.min.sched\n",
	       id, sum.switches, sum.switches == 1 ? "" : "es", sum.from, sum.replays + sum.neighbour_replays,
	       sum.capped ? ", stopped at the cap" : "", sum.seconds, dir, x);
}

/* Replays every prediction and prints the table; the number of distinct
 * bugs reproduced, or -1 on error. */
static int test_replay(const char *dir, const struct prediction_set *set, const struct trace *t,
		       unsigned jobs, const char *timeout, struct run_tally *tally, unsigned min_cap)
{
	char rdir[4200];
	snprintf(rdir, sizeof rdir, "%s/reports", dir);
	mkdir(rdir, 0777);
	unsigned *ids = calloc(set->n ? set->n : 1, sizeof *ids);
	for (size_t i = 0; ids && i < set->n; i++)
		ids[i] = set->p[i].id;
	if (!ids || run_replays(dir, ids, set->n, jobs, timeout, rdir) < 0) {
		free(ids);
		return -1;
	}
	struct names n;
	names_open(&n, t);
	char where[512], oc[64], (*keys)[1024] = calloc(set->n ? set->n : 1, sizeof *keys);
	unsigned *kept = calloc(set->n ? set->n : 1, sizeof *kept);
	size_t nkeys = 0;
	printf("  %-4s %-14s %-15s %-40s %s\n", "#", "detector", "pattern", "where", "outcome");
	for (size_t i = 0; i < set->n; i++) {
		const struct prediction *p = &set->p[i];
		struct outcome o;
		read_outcome(dir, p->id, &o);
		tally_outcome(tally, &o);
		char det[64];
		printf("  %-4u %-14s %-15s %-40s %s\n", p->id, predict_detectors(p, det, sizeof det),
		       p->pattern, prediction_where(&n, t, p, where, sizeof where),
		       short_outcome(&o, oc, sizeof oc));
		char path[4300];
		snprintf(path, sizeof path, "%s/%04u.txt", rdir, p->id);
		bool keep = false;
		if (reproduced(&o) && keys) {
			char key[1024];
			bug_key(dir, p->id, &o, key, sizeof key);
			keep = true;
			for (size_t k = 0; k < nkeys; k++)
				if (!strcmp(keys[k], key))
					keep = false; /* the same bug through another schedule */
			if (keep && kept)
				kept[nkeys] = p->id;
			if (keep)
				snprintf(keys[nkeys++], sizeof keys[0], "%s", key);
		}
		if (!keep)
			remove(path); /* only reproduced, distinct bugs get a report */
	}
	names_close(&n);
	for (size_t k = 0; kept && min_cap && k < nkeys; k++)
		test_minimize(dir, kept[k], timeout, min_cap);
	free(kept);
	free(keys);
	free(ids);
	return (int)nkeys;
}

/* The last lines and the exit status.  "No bug" is said only of schedules
 * that ran: when most never reached their end, or the recording died of a
 * signal that no schedule nor a native run shows, the answer is
 * inconclusive.  A recording that failed on its own (and natively) is a
 * failure, exit 1, but no bug of an interleaving. */
/* rs: the recorded run's shell-style status; native: a native run's (only
 * run when rs != 0), -1 if it did not end */
static int verdict(int nbugs, const struct run_tally *tally, const char *rdir, int rs, int rec_sig,
		   int native)
{
	unsigned total = tally->ran + tally->diverged + tally->unfinished;
	if (total)
		printf("%u of %u schedule%s ran to their end (%u diverged from what the program can do, %u stuck until the time limit or failed)\n",
		       tally->ran, total, total == 1 ? "" : "s", tally->diverged, tally->unfinished);
	if (nbugs) {
		printf("%d bug%s reproduced; reports in %s/\n", nbugs, nbugs == 1 ? "" : "s", rdir);
		return 1;
	}
	if (rs != 0 && native != rs) {
		printf("inconclusive: the recorded run failed (%s %d), no schedule reproduced it and a native run did not fail so: avtrace may have disturbed the program (please report it), or the failure needs timing that a schedule does not control\n",
		       rec_sig ? "signal" : "exit status", rec_sig ? rec_sig : rs);
		return EXIT_INCONCLUSIVE;
	}
	if (rs != 0 && native == rs) {
		printf("no bug reproduced beyond the recorded run's own failure\n");
		return 1;
	}
	if (total && 2 * tally->unfinished > total) {
		printf("inconclusive: no bug reproduced, but %u of %u schedules never reached their end (stuck until the time limit, or failed): raise --timeout\n",
		       tally->unfinished, total);
		return EXIT_INCONCLUSIVE;
	}
	printf("no bug reproduced\n");
	return 0;
}

int cmd_test(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "force", no_argument, 0, 'f' },
		{ "jobs", required_argument, 0, 'j' }, { "max", required_argument, 0, 'm' },
		{ "timeout", required_argument, 0, 't' }, { "watch", required_argument, 0, 'w' },
		{ "no-auto-watch", no_argument, 0, 'W' }, { "no-access", no_argument, 0, 'W' }, { "access-scope", required_argument, 0, 0x101 },
		{ "sync-spec", required_argument, 0, 0x110 },
		{ "stacks", no_argument, 0, 'K' }, { "stack-depth", required_argument, 0, 'k' },
		{ "no-stacks", no_argument, 0, 'N' }, { "no-heap", no_argument, 0, 'H' },
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' },
		{ "atomic", required_argument, 0, 'A' }, { "explore", required_argument, 0, 'E' },
		{ "no-explore", no_argument, 0, 'X' }, { "seed", required_argument, 0, 'S' },
		{ "atomic", required_argument, 0, 'A' }, { "pattern", required_argument, 0, 'p' },
		{ "no-pecan", no_argument, 0, 'C' }, { "no-penelope", no_argument, 0, 'P' },
		{ "no-order", no_argument, 0, 'O' }, { "no-agent", no_argument, 0, 'n' },
		{ "agent", no_argument, 0, 'a' },
		{ "sarif", required_argument, 0, 'R' }, { "json", no_argument, 0, 'J' },
		{ "minimize", required_argument, 0, 0x102 }, { "no-minimize", no_argument, 0, 0x103 },
		{ 0, 0, 0, 0 },
	};
	struct pr_patterns pats = { NULL, 0, 0 };
	struct atomic_funcs af = { .count = 0 };
	/* call stacks on: function calls are the transactions SideTrack checks */
	struct record_opts ro = { .dir = "avtrace-out", .cpu = default_cpu(), .keep_stdin = !isatty(0), .slice_ms = 10,
				  .stack_depth = 8 };
	struct explore_opts eo = { .runs = TEST_EXPLORE_RUNS, .seed = 1, .timeout_s = 10,
				   .cfg = EXPLORE_DEFAULT_CFG };
	struct predict_opts po = { .deadlocks = true, .sidetrack = true, .penelope = true,
				   .pecan = true, .order = true, .patterns = &pats };
	static const char *watch[5];
	const char *timeout = "2";
	struct test_output out = { .sarif = NULL };
	unsigned jobs = 0, min_cap = MINIMIZE_DEFAULT_REPLAYS;
	int c, agent = -1;
	double secs;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:fj:t:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': ro.dir = optarg; break;
		case 'f': ro.force = true; break;
		case 'j':
			if (arg_uint("test", "-j", optarg, 1, 256, &jobs) < 0)
				return EXIT_USAGE;
			break;
		case 'm':
			if (arg_uint("test", "--max", optarg, 1, 1000000, &po.max_predictions) < 0)
				return EXIT_USAGE;
			break;
		case 't':
			if (arg_seconds("test", "--timeout", optarg, &secs) < 0)
				return EXIT_USAGE;
			timeout = optarg;
			break;
		case 'w':
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				if (ro.nwatch == 4)
					return usage_error("test", "--watch takes at most 4 variables");
				watch[ro.nwatch++] = tok;
			}
			break;
		case 'W': ro.no_auto_watch = true; break;
		case 0x101:
			if (arg_scope("test", "--access-scope", optarg) < 0)
				return EXIT_USAGE;
			ro.access_scope = optarg;
			break;
		case 0x110:
			if (arg_sync_spec(optarg, &ro.sync_spec) < 0)
				return EXIT_USAGE;
			ro.sync_spec_name = optarg;
			break;
		case 'K': break;
		case 'N': ro.stack_depth = 0; break;
		case 'k':
			if (arg_uint("test", "--stack-depth", optarg, 1, 16, &ro.stack_depth) < 0)
				return EXIT_USAGE;
			break;
		case 'H': ro.no_heap = true; break;
		case 'A':
			if (atomic_funcs_parse(&af, optarg) < 0)
				return usage_error("test", "--atomic takes at most 16 functions");
			break;
		case 'E':
			if (arg_uint("test", "--explore", optarg, 0, 1000000, &eo.runs) < 0)
				return EXIT_USAGE;
			break;
		case 'X': eo.runs = 0; break;
		case 'S':
			if (arg_u64("test", "--seed", optarg, &eo.seed) < 0)
				return EXIT_USAGE;
			break;
		case 'p':
			if (pr_patterns_load(&pats, optarg) < 0) {
				pr_patterns_release(&pats);
				return EXIT_USAGE;
			}
			break;
		case 'C': po.pecan = false; break;
		case 'O': po.order = false; break;
		case 'n': agent = 0; break;
		case 'a': agent = 1; break;
		case 'P': po.penelope = false; break;
		case 'q': avt_quiet = 1; break;
		case 'R': out.sarif = optarg; break;
		case 'J': out.json = true; break;
		case 0x102:
			if (arg_uint("test", "--minimize", optarg, 0, 1000000, &min_cap) < 0)
				return EXIT_USAGE;
			break;
		case 0x103: min_cap = 0; break;
		case 'h': fputs(test_help, stdout); return 0;
		default: return usage_error("test", "bad option");
		}
	}
	if (optind >= argc)
		return usage_error("test", "no program to test");
	if (agent_choice(agent, &ro.agent_lib))
		return EXIT_USAGE;
	ro.argv = argv + optind;
	ro.watch = watch;
	test_output_begin(&out);
	ro.quiet_target = true;
	if (!jobs) {
		cpu_set_t set;
		jobs = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	}
	struct tracer_stats st;
	int rs = record_run(&ro, &st);
	if (tracer_interrupted()) {
		pr_patterns_release(&pats);
		return 128 + tracer_interrupted();
	}
	struct trace *t = rs == EXIT_USAGE ? NULL : load_trace(ro.dir);
	if (!t) {
		pr_patterns_release(&pats);
		return EXIT_USAGE;
	}
	/* A recording that failed: does PROG fail that way on its own too?  A
	 * debugger must not change what the program computes; and a failure of
	 * every run is no interleaving's doing. */
	int rec_sig = recorded_signal(ro.dir), native = 0;
	if (rs != 0 && rs != EXIT_USAGE) {
		native = run_natively(ro.argv);
		char what[64], nat[96];
		if (rec_sig)
			snprintf(what, sizeof what, "died of SIG%s", sigabbrev_np(rec_sig) ?: "?");
		else
			snprintf(what, sizeof what, "exited with status %d", rs);
		if (native < 0)
			snprintf(nat, sizeof nat, "did not end within %.0f s", NATIVE_LIMIT_S);
		else if (native > 128)
			snprintf(nat, sizeof nat, "died of SIG%s", sigabbrev_np(native - 128) ?: "?");
		else
			snprintf(nat, sizeof nat, "exited with status %d", native);
		if (native == rs)
			printf("the recorded run %s, and so does a native run\n", what);
		else
			printf("the recorded run %s; a native run %s\n", what, nat);
	}
	struct prediction_set set;
	atomic_funcs_arm(&af, t, &po);
	struct names vn;
	bool vn_open = names_open(&vn, t) == 0;
	if (vn_open) { /* AVFilter asks where changed reads' values go */
		po.read_steers = sym_read_steers;
		po.read_ctx = vn.sym;
	}
	int prc = tracer_interrupted() ? -1 : predict_run(t, &po, &set);
	if (vn_open)
		names_close(&vn);
	atomic_funcs_release(&af);
	if (prc < 0) {
		trace_free(t);
		pr_patterns_release(&pats);
		return tracer_interrupted() ? 128 + tracer_interrupted() : EXIT_USAGE;
	}
	name_predictions(&set, t);
	if (predict_write(&set, t, ro.dir) < 0) {
		prediction_set_release(&set);
		trace_free(t);
		pr_patterns_release(&pats);
		return EXIT_USAGE;
	}
	if (prc == PREDICT_STOPPED) { /* a signal: what it made is written */
		avt_error("interrupted by SIG%s while predicting: %s/predictions.json keeps the %zu prediction%s made so far",
			  sigabbrev_np(predict_interrupted()) ?: "?", ro.dir, set.n, set.n == 1 ? "" : "s");
		prediction_set_release(&set);
		trace_free(t);
		pr_patterns_release(&pats);
		return 128 + predict_interrupted();
	}
	char ev[32];
	printf("recorded %u threads, %s events; %zu prediction%s; replaying %zu schedule%s (-j %u)\n",
	       st.threads, fmt_thousands(st.events, ev, sizeof ev), set.n, set.n == 1 ? "" : "s", set.n,
	       set.n == 1 ? "" : "s", jobs);
	fflush(stdout);
	if (rs != 0 && rs != EXIT_USAGE && native == rs) {
		/* say it once: every schedule fails this way, which is no
		 * interleaving's doing; what differs is reported apart */
		printf("the recorded run itself failed (%s %d): failures that depend on the interleaving are reported apart\n",
		       rs > 128 ? "signal" : "exit status", rs > 128 ? rs - 128 : rs);
		explore_report_baseline(rs);
	}
	struct run_tally tally = { 0, 0, 0 };
	int nbugs = test_replay(ro.dir, &set, t, jobs, timeout, &tally, min_cap);
	prediction_set_release(&set);
	trace_free(t);
	pr_patterns_release(&pats); /* the predictions' pattern names */
	if (nbugs < 0)
		return EXIT_USAGE;
	char rdir[4200];
	snprintf(rdir, sizeof rdir, "%s/reports", ro.dir);
	if (!nbugs && eo.runs) {
		/* prediction only reorders what the recording did: look further */
		printf("no bug reproduced by the predictions; exploring (--explore %u)\n", eo.runs);
		eo.dir = ro.dir;
		eo.jobs = jobs;
		explore_report_minimize(min_cap);
		int erc = explore_and_report(&eo, timeout, rdir, &tally);
		if (erc == EXIT_USAGE)
			return EXIT_USAGE;
		nbugs = erc;
	}
	if (nbugs > 0) /* the picture beside each report (cli/html.c) */
		html_write_beside_reports(ro.dir);
	if (nbugs > 0 && verify_describe_reports(ro.dir) < 0) /* for avtrace verify after a rebuild */
		avt_warn("cannot describe the reported bugs' events in '%s' (avtrace verify needs them)", rdir);
	out.ran = tally.ran;
	out.diverged = tally.diverged;
	out.unfinished = tally.unfinished;
	return test_output_finish(&out, ro.dir, verdict(nbugs, &tally, rdir, rs, rec_sig, native));
}
