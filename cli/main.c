/* avtrace: find concurrency bugs and replay them deterministically. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "trace/log.h"
#include "trace/version.h"

static const char usage[] =
	"usage: avtrace <command> [options]\n"
	"\n"
	"commands:\n"
	"  record [-o DIR] [--force] -- PROG [ARGS...]\n"
	"                     run PROG once, serialized under ptrace, and record its\n"
	"                     synchronization events and memory accesses (avtrace.h\n"
	"                     annotations, --watch, or watched globals) to DIR\n"
	"                     (default ./avtrace-out);\n"
	"                     exits with PROG's own status (128+N if killed by signal N)\n"
	"  test [-o DIR] [-j N] [--sarif FILE] [--json] -- PROG [ARGS...]\n"
	"                     record, predict, replay every prediction; report only\n"
	"                     the bugs reproduced (exit 1 if any, 0 if none), also\n"
	"                     as SARIF 2.1.0 or one JSON document\n"
	"  explore [-n RUNS] [--depth D] [--vars V] [--threads T] [--seed S] -- PROG\n"
	"                     run PROG many times under random priority schedules\n"
	"                     (PCT, variable and thread bounding); report the\n"
	"                     failures that replay confirms\n"
	"  predict [-d DIR]   write schedules that would expose atomicity violations\n"
	"                     (from locks and from accesses), data races, atomic-set\n"
	"                     violations and deadlocks\n"
	"                     (DIR/schedules/NNNN.sched)\n"
	"  dump [-d DIR] [--json]\n"
	"                     print the recorded events, one per line\n"
	"  schedule --observed [-d DIR]\n"
	"                     print schedule 0, the recorded order\n"
	"  replay [-d DIR] --schedule N [--timeout S] [--json]\n"
	"                     re-run the program forcing schedule N; exit 0 pass,\n"
	"                     1 bug or deadlock reproduced, 3 infeasible, 2 error\n"
	"  replay [-d DIR] --all [-j N]\n"
	"                     replay every schedule, N at a time, and print a table\n"
	"  minimize [-d DIR] --schedule N | --file SCHED\n"
	"                     reduce a reproduced bug's schedule to the fewest\n"
	"                     context switches that still fail the same way\n"
	"  summary [-d DIR] [--sarif FILE]\n"
	"                     the table of DIR/replays/*.json (e.g. after a cluster\n"
	"                     run); the reproduced bugs as SARIF 2.1.0\n"
	"  report [-d DIR] --html FILE [--schedule N | --report X]\n"
	"                     a reproduced bug as one self-contained HTML page:\n"
	"                     threads as lanes, switches, failure, backtrace\n"
	"  verify [-d DIR] [-- PROG [ARGS...]]\n"
	"                     re-enact every reported bug's interleaving on the\n"
	"                     rebuilt program: still fails (exit 1), fixed (0), no\n"
	"                     longer possible (3)\n"
	"\n"
	"'avtrace <command> --help' describes each command's options; so does\n"
	"'man avtrace' (docs/avtrace.1).\n";

/* Standard output redirected to a file (a replay worker's text report,
 * `avtrace test > out.txt`) that could not be written in full. */
static void check_stdout(void)
{
	struct stat st;
	errno = 0;
	bool bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno ? errno : EIO;
	if (!bad || fstat(STDOUT_FILENO, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	char path[4096] = "standard output";
	ssize_t n = readlink("/proc/self/fd/1", path, sizeof path - 1);
	if (n > 0)
		path[n] = 0;
	avt_write_error("cannot write '%s': %s", path, strerror(e));
}

/* A result that could not be written (avt_write_error) is an error
 * (exit 2), never a pass nor a bug found: what a caller reads from the
 * output directory is missing.  A stop signal's 128+N stays. */
static int with_writes_checked(int rc)
{
	check_stdout();
	return avt_nwrite_errors && rc < 128 ? EXIT_USAGE : rc;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "record", cmd_record },
		{ "dump", cmd_dump },
		{ "schedule", cmd_schedule },
		{ "replay", cmd_replay },
		{ "summary", cmd_summary },
		{ "predict", cmd_predict },
		{ "test", cmd_test },
		{ "explore", cmd_explore },
		{ "report", cmd_report },
		{ "verify", cmd_verify },
		{ "minimize", cmd_minimize },
	};
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("avtrace %s\n", AVT_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		if (cmds[i].fn != cmd_dump && cmds[i].fn != cmd_predict && cmds[i].fn != cmd_schedule)
			cli_catch_stop_signals();
		return with_writes_checked(cmds[i].fn(argc - 1, argv + 1));
	}
	avt_error("unknown command '%s' (see 'avtrace --help')", argv[1]);
	return EXIT_USAGE;
}
