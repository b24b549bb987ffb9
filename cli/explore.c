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
	"Exit status: 0 no bug found, 1 at least one seen (a deadlock only when\n"
	"confirmed), 2 error.\n"
	"\n"
	"policies (--policy P):\n"
	"  surw     (default) a uniform random walk over the interleavings of the\n"
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
	"      --policy P     surw, pos, guided, pct, pctvb or tb (default: surw; tb\n"
	"                     with --threads; pct with --vars 0, pctvb with --vars\n"
	"                     V or --depth D); --algo is the same option\n"
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
	"  -j, --jobs N       runs at a time, each on its own CPU (default: CPUs)\n"
	"  -t, --timeout S    abandon a run after S seconds (default 10; 0.001..1e6)\n"
	"      --oracle CMD   as for replay: a run whose stdout fails CMD is a bug\n"
	"      --watch V[,V]  as for record; --no-access, --access-scope, --no-heap,\n"
	"                     --sync-spec, --no-agent too\n"
	"      --no-agent     also: the runs on ptrace alone (a recording made with\n"
	"                     the agent runs through it: SURW's events that need no\n"
	"                     decision, and the walks decided ahead, are taken\n"
	"                     in-process, threads waiting at a lock, an unlock or\n"
	"                     an access for their turn in the agent; the same runs\n"
	"                     either way)\n"
	"  -q, --quiet        no progress\n";

static void show_progress(void *ctx, const struct explore_progress *p)
{
	(void)ctx;
	if (avt_quiet || !isatty(2))
		return;
	fprintf(stderr, "\ravtrace: explore: %u/%u runs, %u failing, %u distinct, %.1f runs/s ",
		p->done, p->runs, p->failing, p->bugs, p->seconds > 0 ? p->done / p->seconds : 0.0);
	if (p->done == p->runs)
		fputc('\n', stderr);
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
	}
}

static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/* Did the check replay of a failed run fail too?  why: its outcome and
 * reason when it did not. */
static bool confirmed(const char *dir, char *why, size_t len)
{
	char path[4300];
	json_error_t je;
	snprintf(path, sizeof path, "%s/replays/0000.json", dir);
	json_t *j = json_load_file(path, 0, &je);
	const char *oc = j ? json_string_value(json_object_get(j, "outcome")) : NULL;
	const char *rs = j ? json_string_value(json_object_get(j, "reason")) : NULL;
	bool ok = oc && (!strcmp(oc, "BUG") || !strcmp(oc, "DEADLOCK"));
	snprintf(why, len, "%s%s%s", oc ? oc : "no result", rs && *rs ? ": " : "", rs ? rs : "");
	json_decref(j);
	return ok;
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

static int baseline_status;
static unsigned minimize_cap; /* avtrace test: candidates per bug, 0 none */

void explore_report_minimize(unsigned cap)
{
	minimize_cap = cap;
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

void explore_report_baseline(int status)
{
	baseline_status = status;
}

/* Does b fail as the recording already did (same exit status or signal)? */
static bool as_recorded(const struct explore_bug *b)
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

int explore_and_report(struct explore_opts *eo, const char *timeout, const char *report_dir,
		       struct run_tally *tally)
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
	if (!eo->progress)
		eo->progress = show_progress;
	describe_cfg(&eo->cfg, cfg, sizeof cfg);
	printf("exploring %u runs (%s, seed %llu, -j %u)\n", eo->runs, cfg,
	       (unsigned long long)eo->seed, eo->jobs);
	if (nstarts)
		printf("the first %zu run%s start%s where a prediction that did not fail left off\n", nstarts,
		       nstarts == 1 ? "" : "s", nstarts == 1 ? "s" : "");
	fflush(stdout);
	cli_parent_phase(true); /* its runs are workers that die with it */
	int xrc = explore_run(eo, &r);
	cli_parent_phase(false);
	explore_starts_free(starts, nstarts);
	if (starts) {
		eo->starts = NULL;
		eo->nstarts = 0;
	}
	if (xrc < 0)
		return EXIT_USAGE;
	printf("%u runs in %.1f s (%.1f runs/s): %u pass, %u bug, %u deadlock, %u infeasible, %u error\n",
	       r.done, r.seconds, r.seconds > 0 ? r.done / r.seconds : 0.0, r.counts[0], r.counts[1],
	       r.counts[3], r.counts[2], r.counts[4]);
	if (r.agent_events)
		printf("  %" PRIu64 " of the runs' %" PRIu64 " events in-process (the agent: no decision was due)\n",
		       r.agent_events, r.events);
	if (r.agent_handovers)
		printf("  %" PRIu64 " hand-overs between threads in-process, in %" PRIu64 " scripts\n",
		       r.agent_handovers, r.agent_scripts);
	if (r.agent_extras)
		printf("  %" PRIu64 " accesses the recording does not have, made in-process with no decision due\n",
		       r.agent_extras);
	if (r.counts[4])
		printf("  first error: %s\n", r.error);
	if (r.stuck_waits)
		printf("  %" PRIu64 " turns ended as soon as their thread slept where only a stopped thread could wake it\n",
		       r.stuck_waits);
	if (tally) {
		tally->ran += r.counts[0] + r.counts[1] + r.counts[3];
		tally->unfinished += r.counts[2] + r.counts[4]; /* run time limit, errors */
	}
	char (*heads)[512] = calloc(r.nbugs ? r.nbugs : 1, sizeof *heads);
	size_t nconf = 0, nunconf = 0;
	for (size_t i = 0; heads && i < r.nbugs; i++) {
		struct explore_bug *b = &r.bugs[i];
		char rdir[4300], rep[4400], head[512];
		if (as_recorded(b)) {
			printf("%u of %u runs failed as the recorded run did (%s): not a finding of exploration\n",
			       b->hits, r.done, b->signal ? "a fatal signal" : "exit status");
			continue;
		}
		static const unsigned zero = 0;
		snprintf(rdir, sizeof rdir, "%s/reports", b->dir);
		mkdir(rdir, 0777);
		fflush(stdout);
		run_replays(b->dir, &zero, 1, 1, timeout, rdir);
		snprintf(rep, sizeof rep, "%s/0000.txt", rdir);
		first_line(rep, head, sizeof head);
		char why[1200];
		if (!confirmed(b->dir, why, sizeof why)) {
			/* seen, never thrown away: a real failure of the program
			 * counts; an unconfirmed deadlock may be the scheduler's */
			char words[128];
			failure_words(b, words, sizeof words);
			printf("%s seen (unconfirmed)\n", words);
			printf("  seen in run %u and %u of %u runs (%s)\n", b->run, b->hits, r.done,
			       b->choices);
			printf("  its replay did not fail again (%s): avtrace replay -d %s --schedule 0\n",
			       why, b->dir);
			if (strncmp(b->key, "deadlock", 8))
				nunconf++;
			continue;
		}
		bool dup = false;
		for (size_t k = 0; k < nconf; k++)
			dup |= !strcmp(heads[k], head);
		if (dup)
			continue; /* the same source-level failure through another path */
		snprintf(heads[nconf++], sizeof heads[0], "%s", head);
		printf("%s\n", head);
		unsigned needed = b->run - eo->first_run;
		printf("  found by run %u: %u run%s to find it, %u of %u runs failed this way (%s)\n",
		       b->run, needed, needed == 1 ? "" : "s", b->hits, r.done, b->choices);
		printf("  confirmed: avtrace replay -d %s --schedule 0\n", b->dir);
		if (report_dir && minimize_cap) {
			/* the fewest switches of the run that failed: its report
			 * then leads with them (cli/minimize.c), and the minimal
			 * schedule goes beside the copy as explore-NNNN.min.* */
			char sched[4400], ref[4400], src[4500], dst[4500];
			struct min_summary sum;
			snprintf(sched, sizeof sched, "%s/schedules/0000.sched", b->dir);
			snprintf(ref, sizeof ref, "%s/replays/0000.json", b->dir);
			fflush(stdout);
			if (minimize_bug(b->dir, "0000", sched, ref, minimize_cap, timeout, false, &sum) == 0) {
				printf("  fails with %zu switch%s (%zu in the run; %u replays%s, %.1f s): %s/reports/0000.min.sched\n",
				       sum.switches, sum.switches == 1 ? "" : "es", sum.from,
				       sum.replays + sum.neighbour_replays, sum.capped ? ", stopped at the cap" : "",
				       sum.seconds, b->dir);
				static const char *const ext[] = { "sched", "json" };
				for (size_t x = 0; x < 2; x++) {
					snprintf(src, sizeof src, "%s/reports/0000.min.%s", b->dir, ext[x]);
					snprintf(dst, sizeof dst, "%s/explore-%04u.min.%s", report_dir, b->run, ext[x]);
					if (copy_file(src, dst) < 0)
						avt_warn("cannot copy '%s' to '%s'", src, dst);
				}
			}
		}
		if (report_dir) {
			char dst[4400];
			snprintf(dst, sizeof dst, "%s/explore-%04u.txt", report_dir, b->run);
			FILE *in = fopen(rep, "r"), *out = fopen(dst, "w");
			int ch;
			while (in && out && (ch = fgetc(in)) != EOF)
				fputc(ch, out);
			if (in)
				fclose(in);
			if (out)
				fclose(out);
			printf("  report: %s\n", dst);
		} else {
			printf("  report: %s\n", rep);
		}
	}
	free(heads);
	explore_result_release(&r);
	return nconf + nunconf ? 1 : 0;
}

static unsigned cpus(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
}

int cmd_explore(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "dir", required_argument, 0, 'd' },
		{ "force", no_argument, 0, 'f' }, { "runs", required_argument, 0, 'n' },
		{ "algo", required_argument, 0, 'a' }, { "policy", required_argument, 0, 'a' }, { "depth", required_argument, 0, 'D' },
		{ "vars", required_argument, 0, 'V' }, { "threads", required_argument, 0, 'T' },
		{ "contexts", required_argument, 0, 'C' }, { "seed", required_argument, 0, 'S' },
		{ "stop", no_argument, 0, 's' }, { "jobs", required_argument, 0, 'j' },
		{ "timeout", required_argument, 0, 't' }, { "oracle", required_argument, 0, 'O' },
		{ "watch", required_argument, 0, 'w' }, { "no-auto-watch", no_argument, 0, 'W' },
		{ "no-access", no_argument, 0, 'W' }, { "access-scope", required_argument, 0, 0x101 },
		{ "sync-spec", required_argument, 0, 0x110 },
		{ "no-heap", no_argument, 0, 'H' }, { "quiet", no_argument, 0, 'q' },
		{ "no-agent", no_argument, 0, 0x102 },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct record_opts ro = { .dir = "avtrace-out", .cpu = default_cpu(), .keep_stdin = !isatty(0), .slice_ms = 10 };
	struct explore_opts eo = { .runs = 200, .seed = 1, .timeout_s = 10,
				   .cfg = EXPLORE_DEFAULT_CFG };
	static const char *watch[5];
	const char *dir = NULL, *algo = NULL;
	bool vars_set = false, threads_set = false, depth_set = false, no_agent = false;
	int c;
	unsigned v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:d:fn:j:t:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': ro.dir = optarg; break;
		case 'd': dir = optarg; break;
		case 'f': ro.force = true; break;
		case 'a': algo = optarg; break;
		case 'n': case 'D': case 'V': case 'T': case 'C': case 'j':
			if (arg_uint("explore", c == 'n' ? "--runs" : c == 'D' ? "--depth" :
				     c == 'V' ? "--vars" : c == 'T' ? "--threads" :
				     c == 'C' ? "--contexts" : "-j", optarg,
				     c == 'V' || c == 'C' ? 0 : 1, 1000000, &v) < 0)
				return EXIT_USAGE;
			if (c == 'n')
				eo.runs = (unsigned)v;
			else if (c == 'D')
				eo.cfg.depth = (unsigned)v, depth_set = true;
			else if (c == 'V')
				eo.cfg.nvars = (unsigned)v, vars_set = true;
			else if (c == 'T')
				eo.cfg.threads = (unsigned)v, threads_set = true;
			else if (c == 'C')
				eo.cfg.contexts = (unsigned)v;
			else
				eo.jobs = (unsigned)v;
			break;
		case 'S':
			if (arg_u64("explore", "--seed", optarg, &eo.seed) < 0)
				return EXIT_USAGE;
			break;
		case 's': eo.stop_at_bug = true; break;
		case 't':
			if (arg_seconds("explore", "--timeout", optarg, &eo.timeout_s) < 0)
				return EXIT_USAGE;
			break;
		case 'O': eo.oracle = optarg; break;
		case 'w':
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				if (ro.nwatch == 4)
					return usage_error("explore", "--watch takes at most 4 variables");
				watch[ro.nwatch++] = tok;
			}
			break;
		case 'W': ro.no_auto_watch = true; break;
		case 0x101:
			if (arg_scope("explore", "--access-scope", optarg) < 0)
				return EXIT_USAGE;
			ro.access_scope = optarg;
			break;
		case 0x110:
			if (arg_sync_spec(optarg, &ro.sync_spec) < 0)
				return EXIT_USAGE;
			ro.sync_spec_name = optarg;
			break;
		case 'H': ro.no_heap = true; break;
		case 0x102: no_agent = true; break;
		case 'q': avt_quiet = 1; break;
		case 'h': fputs(explore_help, stdout); return 0;
		default: return usage_error("explore", "bad option");
		}
	}
	if (algo && xp_algo_parse(algo, &eo.cfg.algo) < 0)
		return usage_error("explore", "bad --policy '%s' (pct, pctvb, tb, pos, surw or guided)",
				   algo);
	if (!algo && threads_set)
		eo.cfg.algo = XP_TB;
	else if (!algo && (vars_set || depth_set)) /* PCT's bounds: PCT, as before */
		eo.cfg.algo = vars_set && !eo.cfg.nvars ? XP_PCT : XP_PCTVB;
	if (eo.cfg.algo == XP_PCTVB && !vars_set)
		eo.cfg.nvars = 1;
	if (eo.cfg.algo == XP_PCTVB && !eo.cfg.nvars)
		return usage_error("explore", "--algo pctvb needs --vars of at least 1");
	if (eo.cfg.algo == XP_TB && !eo.cfg.threads)
		eo.cfg.threads = 2;
	if (eo.cfg.algo == XP_SURW && !vars_set)
		eo.cfg.nvars = XP_VARS_RANDOM;
	if (eo.cfg.algo == XP_PCT || (eo.cfg.algo == XP_TB && !vars_set))
		eo.cfg.nvars = 0; /* TB: change points as PCT's unless --vars */
	if (!eo.jobs)
		eo.jobs = cpus();
	if (dir && optind < argc)
		return usage_error("explore", "give either -d DIR or a program, not both");
	if (!dir && optind >= argc)
		return usage_error("explore", "no program to explore (-- PROG ARGS, or -d DIR)");
	if (!dir) {
		/* the recording as record makes it: through the agent unless
		 * --no-agent (the runs themselves decide at every event, on
		 * ptrace) */
		if (agent_choice(no_agent ? 0 : -1, &ro.agent_lib))
			return EXIT_USAGE;
		ro.argv = argv + optind;
		ro.watch = watch;
		ro.quiet_target = true;
		int rs = record_run(&ro, NULL);
		if (tracer_interrupted())
			return 128 + tracer_interrupted();
		if (rs == EXIT_USAGE)
			return EXIT_USAGE;
		dir = ro.dir;
	}
	eo.dir = dir;
	eo.no_agent = no_agent;
	return explore_and_report(&eo, "2", NULL, NULL);
}
