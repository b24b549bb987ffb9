/* avtrace replay, avtrace schedule */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cli.h"
#include "facts.h"
#include "names.h"
#include "replay/replay.h"
#include "trace/file.h"
#include "trace/log.h"


static const char replay_help[] =
	"usage: avtrace replay [-d DIR] --schedule N [options]\n"
	"       avtrace replay [-d DIR] --file SCHED [options]\n"
	"       avtrace replay [-d DIR] --all [-j N] [--timeout S]\n"
	"\n"
	"Re-runs the recorded program (same argv, cwd, environment, ASLR off) with\n"
	"exactly one thread running at a time, forcing schedule N\n"
	"(DIR/schedules/NNNN.sched): each step's thread runs its next events, each\n"
	"compared with the recording.  Outcomes and exit status:\n"
	"  PASS        0  the program ended normally\n"
	"  BUG         1  fatal signal, nonzero exit, or --oracle failed\n"
	"  DEADLOCK    1  every live thread blocked (the wait-for cycle is shown)\n"
	"  INFEASIBLE  3  the schedule could not be followed (divergence, a thread\n"
	"                 blocked or stuck before 'free')\n"
	"  error       2  usage or tool error; nothing was run (also when the\n"
	"                 executable or a library the recording loaded changed\n"
	"                 since, or a library is found elsewhere now: record again)\n"
	"Writes DIR/replays/NNNN.json (outcome) and DIR/replays/NNNN.avt (what\n"
	"ran; inspect with 'avtrace dump -d DIR/replays/NNNN.avt').\n"
	"\n"
	"options:\n"
	"  -d, --dir DIR        recording directory (default ./avtrace-out)\n"
	"  -s, --schedule N     schedule number (0 is the recorded order)\n"
	"      --file SCHED     a schedule file of your own\n"
	"  -t, --timeout S      a scheduled thread missing its event for S seconds\n"
	"                       is stuck (default 2; 0.001..1e6)\n"
	"      --max-time S     a run longer than S seconds in all is INFEASIBLE\n"
	"                       (default 60 + 10 x the recording's time)\n"
	"      --oracle CMD     shell command given the run's stdout on stdin; a\n"
	"                       nonzero status counts as a BUG\n"
	"      --stdout         let the program's stdout through (else captured)\n"
	"      --gdb            at the failure (or the end of the schedule), leave\n"
	"                       the program stopped and detached for 'gdb -p PID'\n"
	"      --no-agent       a recording made with the in-process agent replays\n"
	"                       through it (docs/agent.md); this replays it on\n"
	"                       ptrace alone (the same outcome, slower)\n"
	"      --json           print the outcome as JSON instead of the report\n"
	"      --cpu N          CPU to pin to (default: the allowed CPU it starts on)\n"
	"      --all            replay every schedule of DIR and print a table\n"
	"  -j, --jobs N         with --all: N replays at a time, each on its own CPU\n"
	"  -v, --verbose        debug messages\n";

static const char *sig_name(int sig, char *buf, size_t len)
{
	snprintf(buf, len, "SIG%s", sigabbrev_np(sig) ?: "?");
	return buf;
}

static void event_words(struct names *n, const struct avt_event *e, char *buf, size_t len)
{
	char obj[256], site[256];
	const char *func = NULL;
	if (e->kind == AVT_EV_FATAL_SIGNAL) {
		snprintf(buf, len, "*** %s ***", sig_name(e->size, obj, sizeof obj));
		return;
	}
	if (avt_kind_obj_is_thread(e->kind))
		snprintf(obj, sizeof obj, e->kind == AVT_EV_START ? "" : "T%llu", (unsigned long long)e->obj);
	else if (e->kind == AVT_EV_EXIT || e->kind == AVT_EV_BEGIN || e->kind == AVT_EV_END)
		obj[0] = 0;
	else
		names_obj_or_addr(n, e->obj, obj, sizeof obj);
	names_site(n, e, site, sizeof site, &func);
	snprintf(buf, len, "%s %s%s%s", avt_kind_name(e->kind), obj, *site ? "  " : "", site);
}

#define COLW 38
#define SHOWN 40

static void print_interleaving(struct names *n, const struct replay_result *res)
{
	uint32_t nthr = 0;
	for (size_t i = 0; i < res->nev; i++)
		if (res->ev[i].thread + 1 > nthr)
			nthr = res->ev[i].thread + 1;
	if (nthr > 6)
		nthr = 6;
	printf("  ");
	for (uint32_t k = 0; k < nthr; k++) {
		char h[16];
		snprintf(h, sizeof h, "T%u", k);
		printf("%-*s", COLW, h);
	}
	putchar('\n');
	size_t from = res->nev > SHOWN ? res->nev - SHOWN : 0;
	if (from)
		printf("  ... %zu earlier events (avtrace dump shows them all)\n", from);
	for (size_t i = from; i < res->nev; i++) {
		const struct avt_event *e = &res->ev[i];
		/* whole: a long name runs past its column, one event a line */
		char w[1024];
		event_words(n, e, w, sizeof w);
		if (e->thread >= nthr) {
			printf("  [T%u] %s\n", e->thread, w);
			continue;
		}
		printf("  %*s%s\n", (int)(e->thread * COLW), "", w);
	}
}

static void print_backtrace(struct names *n, const struct replay_result *res)
{
	char site[256];
	if (!res->nbt)
		return;
	printf("  backtrace:");
	for (uint32_t i = 0; i < res->nbt; i++) {
		const char *func = NULL;
		names_frame(n, res->bt[i].mod, res->bt[i].off, i > 0, site, sizeof site, &func);
		printf("%s %s %s", i ? " <-" : "", func ?: "??", site);
	}
	putchar('\n');
}

static void print_predicted(const struct replay *rp)
{
	const struct schedule *s = replay_schedule(rp);
	for (size_t i = 0; i < s->ncomments; i++)
		printf("  predicted: %s\n", s->comments[i]);
}

static void print_report(struct names *n, const struct replay *rp, const struct replay_result *res,
			 const char *sched_label)
{
	char a[512], b[512];
	switch (res->outcome) {
	case RO_PASS:
		printf("PASS: %s, %zu events, %.2f s\n", sched_label, res->nev, res->seconds);
		return;
	case RO_BUG:
		facts_headline(n, res, a, sizeof a);
		printf("%s\n", a);
		print_predicted(rp);
		print_interleaving(n, res);
		print_backtrace(n, res);
		return;
	case RO_DEADLOCK:
		facts_headline(n, res, a, sizeof a);
		printf("%s\n", a);
		print_predicted(rp);
		for (size_t i = 0; i < res->nwaits; i++) {
			const struct replay_wait *w = &res->waits[i];
			const char *func = NULL;
			if (!strcmp(w->what, "join"))
				snprintf(a, sizeof a, "T%llu", (unsigned long long)w->obj);
			else
				names_obj_or_addr(n, w->obj, a, sizeof a);
			b[0] = 0;
			if (w->has_last)
				names_site(n, &w->last, b, sizeof b, &func);
			if (w->holder != UINT32_MAX)
				printf("  T%u waits for %s %s at %s (held by T%u)\n", w->thread, w->what, a, b, w->holder);
			else
				printf("  T%u waits for %s %s at %s\n", w->thread, w->what, a, b);
		}
		print_interleaving(n, res);
		return;
	case RO_INFEASIBLE:
		printf("INFEASIBLE: %s\n", res->reason);
		if (res->has_divergence) {
			if (res->expected.kind) {
				event_words(n, &res->expected, a, sizeof a);
				printf("  expected: T%u %s\n", res->expected.thread, a);
			}
			if (!res->actual_missing) {
				event_words(n, &res->actual, b, sizeof b);
				printf("  actual:   T%u %s\n", res->actual.thread, b);
			}
		}
		return;
	case RO_ERROR:
		printf("ERROR: %s\n", res->reason);
		return;
	}
}

/* What the program wrote to stderr last (an assert's message, a
 * sanitizer's report), kept by the replay; true if it showed all of it. */
static bool print_stderr(const struct replay_result *res)
{
	if (!res->stderr_tail)
		return true;
	printf("  the program's stderr%s:\n", res->stderr_cut ? " (its last lines)" : "");
	for (const char *p = res->stderr_tail; *p;) {
		size_t len = strcspn(p, "\n");
		printf("    | %.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
	return !res->stderr_cut;
}

/* The last line of a bug's report: the command that re-enacts it (an
 * exploration's report names its run's directory, schedule 0). */
static void print_replay_cmd(const struct replay_opts *o)
{
	if (o->sched_path)
		printf("  replay: avtrace replay -d %s --file %s\n", o->dir, o->sched_path);
	else
		printf("  replay: avtrace replay -d %s --schedule %u\n", o->dir, o->schedule);
}

static int outcome_status(enum replay_outcome o)
{
	switch (o) {
	case RO_PASS: return 0;
	case RO_BUG:
	case RO_DEADLOCK: return 1;
	case RO_INFEASIBLE: return 3;
	default: return EXIT_USAGE;
	}
}

/* avtrace replay's command line. */
struct replay_cmd {
	struct replay_opts o;
	bool all, json, have;
	unsigned jobs;
	const char *timeout_arg;
};

/* One option; 1 if unknown, -1 if bad, 2 after --help. */
static int replay_option(struct replay_cmd *r, int c)
{
	struct replay_opts *o = &r->o;
	switch (c) {
	case 'd': o->dir = optarg; return 0;
	case 's':
		r->have = true;
		return arg_uint("replay", "--schedule", optarg, 0, UINT32_MAX, &o->schedule) < 0 ? -1 : 0;
	case 'F': o->sched_path = optarg; r->have = true; return 0;
	case 'A': r->all = true; return 0;
	case 'j': return arg_uint("replay", "-j", optarg, 1, 256, &r->jobs) < 0 ? -1 : 0;
	case 't':
		r->timeout_arg = optarg;
		return arg_seconds("replay", "--timeout", optarg, &o->timeout_s) < 0 ? -1 : 0;
	case 'M': return arg_seconds("replay", "--max-time", optarg, &o->run_timeout_s) < 0 ? -1 : 0;
	case 'O': o->oracle = optarg; return 0;
	case 'S': o->keep_stdout = true; return 0;
	case 'g': o->gdb = true; return 0;
	case 'n': o->no_agent = true; return 0;
	case 'J': r->json = true; return 0;
	case 'c': return arg_cpu("replay", "--cpu", optarg, &o->cpu) < 0 ? -1 : 0;
	case 'v': avt_verbose++; return 0;
	case 'h': fputs(replay_help, stdout); return 2;
	}
	return 1;
}

/* What the replay found, as --json (the results file) or a text report. */
static bool show_result(const struct replay_opts *o, bool json, const char *jpath, struct names *n,
			const struct replay *rp, const struct replay_result *res)
{
	bool shown = false;
	if (json) {
		FILE *f = fopen(jpath, "r");
		int ch;
		while (f && (ch = fgetc(f)) != EOF)
			putchar(ch);
		if (f)
			fclose(f);
		putchar('\n');
		return false;
	}
	char label[4200];
	if (o->sched_path)
		snprintf(label, sizeof label, "schedule file '%s'", o->sched_path);
	else
		snprintf(label, sizeof label, "schedule %u", o->schedule);
	print_report(n, rp, res, label);
	if (res->outcome == RO_BUG || res->outcome == RO_DEADLOCK) {
		shown = print_stderr(res);
		print_replay_cmd(o);
	}
	return shown;
}

/* Replays one schedule, keeps its results in DIR/replays and shows them;
 * the exit status. */
static int replay_one(const struct replay_opts *o, bool json)
{
	unsigned long nerr = avt_nerrors;
	struct replay *rp = replay_open(o);
	if (!rp) {
		if (avt_nerrors == nerr)
			avt_error("cannot replay schedule %u of '%s'", o->schedule, o->dir);
		return EXIT_USAGE;
	}
	if (replay_launch(rp) < 0) {
		if (avt_nerrors == nerr)
			avt_error("cannot replay: the recorded program did not start under ptrace");
		replay_free(rp);
		return EXIT_USAGE;
	}
	while (replay_step(rp))
		;
	struct replay_result res;
	replay_finish(rp, &res);
	char dir[4200], tpath[4300], jpath[4300];
	snprintf(dir, sizeof dir, "%s/replays", o->dir);
	mkdir(dir, 0777);
	snprintf(tpath, sizeof tpath, "%s/%04u.avt", dir, o->schedule);
	snprintf(jpath, sizeof jpath, "%s/%04u.json", dir, o->schedule);
	if (o->sched_path) {
		snprintf(tpath, sizeof tpath, "%s/custom.avt", dir);
		snprintf(jpath, sizeof jpath, "%s/custom.json", dir);
	}
	/* The outcome is still printed, but a result that could not be kept
	 * (a full disk) is an error: a caller reading replays/ must not take
	 * the missing files for a pass. */
	bool saved = replay_write(rp, &res, tpath, jpath, NULL) == 0;
	struct names n;
	names_open(&n, replay_trace(rp));
	if (saved && facts_add(jpath, &n, rp, &res) < 0) {
		/* results without their facts are taken for whole by a reader */
		unlink(jpath);
		saved = false;
	}
	if (!saved) {
		/* both or neither: a results file without its trace (or an
		 * older run's) would be read as this run's */
		unlink(tpath);
		unlink(jpath);
		avt_error("the replay's results are not saved in '%s'", dir);
	}
	/* and no verdict: a PASS whose results are missing reads as a pass */
	bool shown = saved && show_result(o, json, jpath, &n, rp, &res);
	/* the program's stderr was held back: pass on what no report showed */
	if (res.stderr_tail && !shown)
		replay_stderr_copy(rp, stderr);
	if (res.gdb_pid)
		printf("the program is stopped and detached: gdb -p %d  ('continue' in gdb re-runs the faulting instruction)\n",
		       (int)res.gdb_pid);
	names_close(&n);
	int status = res.outcome == RO_ERROR || !saved ? EXIT_USAGE : outcome_status(res.outcome);
	replay_result_release(&res);
	replay_free(rp);
	return status;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, 0, 'd' }, { "schedule", required_argument, 0, 's' },
		{ "file", required_argument, 0, 'F' }, { "timeout", required_argument, 0, 't' },
		{ "oracle", required_argument, 0, 'O' }, { "stdout", no_argument, 0, 'S' },
		{ "gdb", no_argument, 0, 'g' }, { "json", no_argument, 0, 'J' },
		{ "cpu", required_argument, 0, 'c' }, { "verbose", no_argument, 0, 'v' },
		{ "all", no_argument, 0, 'A' }, { "jobs", required_argument, 0, 'j' },
		{ "max-time", required_argument, 0, 'M' }, { "no-agent", no_argument, 0, 'n' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct replay_cmd r = { .o = { .dir = "avtrace-out", .timeout_s = 2.0, .cpu = default_cpu(),
				       .capture_stderr = true },
				.jobs = 1, .timeout_arg = "2" };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:t:j:vh", lo, NULL)) != -1) {
		int rc = replay_option(&r, c);
		if (rc == 2)
			return 0;
		if (rc == 1)
			return usage_error("replay", "bad option");
		if (rc < 0)
			return EXIT_USAGE;
	}
	if (r.all) {
		if (r.have || optind < argc)
			return usage_error("replay", "--all replays every schedule: no --schedule with it");
		return replay_all(r.o.dir, r.jobs, r.timeout_arg);
	}
	if (!r.have)
		return usage_error("replay", "which schedule? give --schedule N or --all");
	if (optind < argc)
		return usage_error("replay", "unexpected argument '%s'", argv[optind]);
	return replay_one(&r.o, r.json);
}

int cmd_schedule(int argc, char **argv)
{
	const char *dir = "avtrace-out";
	bool observed = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--observed"))
			observed = true;
		else if ((!strcmp(argv[i], "-d") || !strcmp(argv[i], "--dir")) && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--help")) {
			puts("usage: avtrace schedule --observed [-d DIR]\n\n"
			     "Prints schedule 0, the order the recording ran in (DIR/schedules/0000.sched).\n\n"
			     "options:\n"
			     "      --observed  the recorded order\n"
			     "  -d, --dir DIR   recording directory (default ./avtrace-out)");
			return 0;
		} else
			return usage_error("schedule", "unexpected argument '%s'", argv[i]);
	}
	if (!observed)
		return usage_error("schedule", "only --observed is supported");
	char path[4200];
	snprintf(path, sizeof path, "%s/schedules/0000.sched", dir);
	uint64_t size;
	FILE *f = avt_fopen_regular(path, AVT_SCHEDULE_MAX_BYTES, &size);
	if (!f && (errno == EINVAL || errno == EFBIG)) {
		char why[128];
		avt_error("cannot read schedule '%s': %s", path,
			  avt_file_error(errno, size, AVT_SCHEDULE_MAX_BYTES, why, sizeof why));
		return EXIT_USAGE;
	}
	if (!f) {
		avt_error("no observed schedule in '%s' (record first)", dir);
		return EXIT_USAGE;
	}
	int ch;
	while ((ch = fgetc(f)) != EOF)
		putchar(ch);
	fclose(f);
	return 0;
}
