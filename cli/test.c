/* avtrace test: record, predict, replay every prediction, report only
 * what was reproduced. */
#include <getopt.h>
#include <sched.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "explore/explore.h"
#include "names.h"
#include "symbolizer/sym.h"
#include "predict/pattern.h"
#include "predict/predict.h"
#include "trace/log.h"
#include "tracer/record.h"

/* Exploration runs after the predictions when they reproduced nothing. */
#define TEST_EXPLORE_RUNS 100

static const char test_help[] =
	"usage: avtrace test [options] -- PROG [ARGS...]\n"
	"\n"
	"Records PROG once, predicts schedules that would expose atomicity\n"
	"violations and deadlocks, replays each (rank order, -j at a time); if none\n"
	"reproduces a bug, explores random schedules (as 'avtrace explore', its\n"
	"default policy, the first runs starting where predictions that did not\n"
	"fail left off) within a budget.  Reports only the\n"
	"bugs it reproduced: one report per distinct failure in DIR/reports/.\n"
	"Exit status: 0 no bug reproduced, 1 at least one, 2 error.\n"
	"\n"
	"options:\n"
	"  -o, --output DIR   output directory (default ./avtrace-out)\n"
	"  -f, --force        replace an existing avtrace output directory\n"
	"  -j, --jobs N       replays at a time, each on its own CPU (default: CPUs)\n"
	"      --max N        replay at most N predictions (default 100)\n"
	"  -t, --timeout S    a scheduled thread stuck S seconds: infeasible (default 2)\n"
	"      --watch V[,V]  as for record; --no-auto-watch, --no-heap too\n"
	"      --no-stacks    do not record call stacks (they are on: each function\n"
	"                     call is a transaction for the atomicity detector)\n"
	"      --stack-depth N  frames per event (default 8, at most 16)\n"
	"      --atomic F[,F]  only calls of these functions are meant to be atomic\n"
	"      --explore N    exploration budget in runs (default 100; 0: none)\n"
	"      --no-explore   the same as --explore 0\n"
	"      --seed S       seed of the exploration (default 1)\n"
	"      --pattern FILE  more access-anomaly patterns for pecan (docs/predict.md)\n"
	"      --no-penelope, --no-pecan  skip that access detector\n";

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

/* Replays every prediction and prints the table; the number of distinct
 * bugs reproduced, or -1 on error. */
static int test_replay(const char *dir, const struct prediction_set *set, const struct trace *t,
		       unsigned jobs, const char *timeout)
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
	size_t nkeys = 0;
	printf("  %-4s %-14s %-15s %-40s %s\n", "#", "detector", "pattern", "where", "outcome");
	for (size_t i = 0; i < set->n; i++) {
		const struct prediction *p = &set->p[i];
		struct outcome o;
		read_outcome(dir, p->id, &o);
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
			if (keep)
				snprintf(keys[nkeys++], sizeof keys[0], "%s", key);
		}
		if (!keep)
			remove(path); /* only reproduced, distinct bugs get a report */
	}
	names_close(&n);
	free(keys);
	free(ids);
	return (int)nkeys;
}

int cmd_test(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "force", no_argument, 0, 'f' },
		{ "jobs", required_argument, 0, 'j' }, { "max", required_argument, 0, 'm' },
		{ "timeout", required_argument, 0, 't' }, { "watch", required_argument, 0, 'w' },
		{ "no-auto-watch", no_argument, 0, 'W' },
		{ "stacks", no_argument, 0, 'K' }, { "stack-depth", required_argument, 0, 'k' },
		{ "no-stacks", no_argument, 0, 'N' }, { "no-heap", no_argument, 0, 'H' },
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' },
		{ "atomic", required_argument, 0, 'A' }, { "explore", required_argument, 0, 'E' },
		{ "no-explore", no_argument, 0, 'X' }, { "seed", required_argument, 0, 'S' },
		{ "atomic", required_argument, 0, 'A' }, { "pattern", required_argument, 0, 'p' },
		{ "no-pecan", no_argument, 0, 'C' }, { "no-penelope", no_argument, 0, 'P' },
		{ 0, 0, 0, 0 },
	};
	struct pr_patterns pats = { NULL, 0, 0 };
	struct atomic_funcs af = { .count = 0 };
	/* call stacks on: function calls are the transactions SideTrack checks */
	struct record_opts ro = { .dir = "avtrace-out", .cpu = first_allowed_cpu(), .slice_ms = 10,
				  .stack_depth = 8 };
	struct explore_opts eo = { .runs = TEST_EXPLORE_RUNS, .seed = 1, .timeout_s = 10,
				   .cfg = EXPLORE_DEFAULT_CFG };
	struct predict_opts po = { .deadlocks = true, .sidetrack = true, .penelope = true,
				   .pecan = true, .patterns = &pats };
	static const char *watch[5];
	const char *timeout = "2";
	unsigned jobs = 0;
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:fj:t:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': ro.dir = optarg; break;
		case 'f': ro.force = true; break;
		case 'j':
			jobs = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !jobs || jobs > 256)
				return usage_error("test", "bad -j '%s' (1..256)", optarg);
			break;
		case 'm':
			po.max_predictions = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !po.max_predictions)
				return usage_error("test", "bad --max '%s'", optarg);
			break;
		case 't':
			if (strtod(optarg, &end) <= 0 || *end)
				return usage_error("test", "bad --timeout '%s' (seconds, > 0)", optarg);
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
		case 'K': break;
		case 'N': ro.stack_depth = 0; break;
		case 'k':
			ro.stack_depth = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !ro.stack_depth || ro.stack_depth > 16)
				return usage_error("test", "bad --stack-depth '%s' (1..16)", optarg);
			break;
		case 'H': ro.no_heap = true; break;
		case 'A':
			if (atomic_funcs_parse(&af, optarg) < 0)
				return usage_error("test", "--atomic takes at most 16 functions");
			break;
		case 'E':
			eo.runs = (unsigned)strtoul(optarg, &end, 10);
			if (*end || *optarg == '-' || eo.runs > 1000000)
				return usage_error("test", "bad --explore '%s' (runs, 0 for none)", optarg);
			break;
		case 'X': eo.runs = 0; break;
		case 'S':
			eo.seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				return usage_error("test", "bad --seed '%s'", optarg);
			break;
		case 'p':
			if (pr_patterns_load(&pats, optarg) < 0) {
				pr_patterns_release(&pats);
				return EXIT_USAGE;
			}
			break;
		case 'C': po.pecan = false; break;
		case 'P': po.penelope = false; break;
		case 'q': avt_quiet = 1; break;
		case 'h': fputs(test_help, stdout); return 0;
		default: return usage_error("test", "bad option");
		}
	}
	if (optind >= argc)
		return usage_error("test", "no program to test");
	ro.argv = argv + optind;
	ro.watch = watch;
	ro.quiet_target = true;
	if (!jobs) {
		cpu_set_t set;
		jobs = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	}
	struct tracer_stats st;
	int rs = record_run(&ro, &st);
	struct trace *t = rs == EXIT_USAGE ? NULL : load_trace(ro.dir);
	if (!t) {
		pr_patterns_release(&pats);
		return EXIT_USAGE;
	}
	struct prediction_set set;
	atomic_funcs_arm(&af, t, &po);
	struct names vn;
	bool vn_open = names_open(&vn, t) == 0;
	if (vn_open) { /* AVFilter asks where changed reads' values go */
		po.read_steers = sym_read_steers;
		po.read_ctx = vn.sym;
	}
	int prc = predict_run(t, &po, &set);
	if (vn_open)
		names_close(&vn);
	atomic_funcs_release(&af);
	if (prc < 0) {
		trace_free(t);
		pr_patterns_release(&pats);
		return EXIT_USAGE;
	}
	name_predictions(&set, t);
	if (predict_write(&set, t, ro.dir) < 0) {
		prediction_set_release(&set);
		trace_free(t);
		pr_patterns_release(&pats);
		return EXIT_USAGE;
	}
	char ev[32];
	printf("recorded %u threads, %s events; %zu prediction%s; replaying %zu schedule%s (-j %u)\n",
	       st.threads, fmt_thousands(st.events, ev, sizeof ev), set.n, set.n == 1 ? "" : "s", set.n,
	       set.n == 1 ? "" : "s", jobs);
	fflush(stdout);
	int nbugs = test_replay(ro.dir, &set, t, jobs, timeout);
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
		int erc = explore_and_report(&eo, timeout, rdir);
		if (erc == EXIT_USAGE)
			return EXIT_USAGE;
		nbugs = erc;
	}
	if (nbugs)
		printf("%d bug%s reproduced; reports in %s/\n", nbugs, nbugs == 1 ? "" : "s", rdir);
	else
		printf("no bug reproduced\n");
	return nbugs ? 1 : 0;
}
