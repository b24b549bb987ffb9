/* avtrace report: the picture of a reproduced bug as one HTML page
 * (cli/html.c, docs/html-report.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cli.h"
#include "html.h"
#include "results.h"
#include "trace/log.h"

static const char report_help[] =
	"usage: avtrace report [-d DIR] --html FILE [--schedule N | --report X]\n"
	"\n"
	"Draws a reproduced bug of DIR (after 'avtrace test' or 'replay') as one\n"
	"self-contained HTML page (no network, no script): the threads as lanes on\n"
	"a time axis, the schedule's context switches, the predicted events and the\n"
	"failing event highlighted, each event with its file:line, the backtrace,\n"
	"and the replay and verify commands.  When DIR/reports/X.min.sched (the\n"
	"minimal schedule) exists, the page shows it and its replay.\n"
	"\n"
	"options:\n"
	"  -d, --dir DIR        output directory (default ./avtrace-out)\n"
	"      --html FILE      write the page to FILE ('-': stdout); when FILE is a\n"
	"                       directory (existing, or named with a final '/'), one\n"
	"                       page per bug goes into it as X.html\n"
	"      --schedule N     the bug schedule N reproduced (replays/NNNN.json)\n"
	"      --report X       the bug of report X: 0001, explore-0003 or\n"
	"                       DIR/reports/0001.txt\n"
	"  -h, --help           this text\n"
	"\n"
	"With several distinct bugs in DIR and neither --schedule nor --report,\n"
	"FILE must be a directory.  'avtrace test' writes the same page beside each\n"
	"report: DIR/reports/X.html.  Exit 0 when every page was written, 2 on error.\n";

static bool is_dir_arg(const char *p)
{
	struct stat st;
	size_t n = strlen(p);
	return (n && p[n - 1] == '/') || (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

/* The bug of report X ("0001", "explore-0003", ".../0001.txt"). */
static const struct result_bug *bug_by_report(const struct results *r, const char *x)
{
	const char *s = strrchr(x, '/');
	s = s ? s + 1 : x;
	size_t n = strlen(s);
	if (n > 4 && !strcmp(s + n - 4, ".txt"))
		n -= 4;
	char name[64];
	for (size_t i = 0; i < r->nbugs; i++) {
		html_bug_name(&r->bugs[i], name, sizeof name);
		if (strlen(name) == n && !strncmp(name, s, n))
			return &r->bugs[i];
	}
	return NULL;
}

static int write_one(struct results *r, const struct result_bug *b, const char *out)
{
	char path[4400], name[64];
	if (is_dir_arg(out)) {
		mkdir(out, 0777);
		html_bug_name(b, name, sizeof name);
		snprintf(path, sizeof path, "%s%s%s.html", out, out[strlen(out) - 1] == '/' ? "" : "/", name);
		out = path;
	}
	if (html_write(r, b, out) < 0)
		return -1;
	if (strcmp(out, "-"))
		printf("%s\n", out);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, 0, 'd' }, { "html", required_argument, 0, 'H' },
		{ "schedule", required_argument, 0, 's' }, { "report", required_argument, 0, 'r' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *dir = "avtrace-out", *html = NULL, *rep = NULL;
	unsigned sched = 0;
	bool have_sched = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'H': html = optarg; break;
		case 's':
			if (arg_uint("report", "--schedule", optarg, 0, 1000000000, &sched) < 0)
				return EXIT_USAGE;
			have_sched = true;
			break;
		case 'r': rep = optarg; break;
		case 'h': fputs(report_help, stdout); return 0;
		default: return usage_error("report", "bad option");
		}
	}
	if (optind < argc)
		return usage_error("report", "unexpected argument '%s'", argv[optind]);
	if (!html)
		return usage_error("report", "no output: give --html FILE");
	if (have_sched && rep)
		return usage_error("report", "give --schedule or --report, not both");
	struct results r;
	if (results_load(&r, dir) < 0)
		return EXIT_USAGE;
	int rc = 0;
	if (!r.nbugs) {
		avt_error("no reproduced bug in '%s' (run 'avtrace test' or 'avtrace replay' first)", dir);
		rc = EXIT_USAGE;
	} else if (rep) {
		const struct result_bug *b = bug_by_report(&r, rep);
		if (!b) {
			avt_error("no reproduced bug with report '%s' in '%s'", rep, dir);
			rc = EXIT_USAGE;
		} else {
			rc = write_one(&r, b, html) < 0 ? EXIT_USAGE : 0;
		}
	} else if (have_sched) {
		/* that schedule's own replay, even when another schedule
		 * reproduced the same bug first */
		const struct result_row *row = NULL;
		for (size_t i = 0; i < r.nrows; i++)
			if (r.rows[i].schedule == sched && r.rows[i].bug >= 0)
				row = &r.rows[i];
		if (!row) {
			avt_error("schedule %u of '%s' reproduced no bug", sched, dir);
			rc = EXIT_USAGE;
		} else {
			struct result_bug b = r.bugs[row->bug];
			b.schedule = sched;
			b.replay = row->replay;
			b.prediction = row->prediction;
			b.explored = false;
			snprintf(b.run_dir, sizeof b.run_dir, "%s", dir);
			char report[4400];
			struct stat st;
			snprintf(report, sizeof report, "%s/reports/%04u.txt", dir, sched);
			snprintf(b.report, sizeof b.report, "%s", stat(report, &st) == 0 ? report : "");
			rc = write_one(&r, &b, html) < 0 ? EXIT_USAGE : 0;
		}
	} else if (r.nbugs > 1 && !is_dir_arg(html)) {
		avt_error("'%s' has %zu distinct bugs: choose one with --schedule N or --report X, or give --html a directory (one page per bug)",
			  dir, r.nbugs);
		rc = EXIT_USAGE;
	} else {
		for (size_t i = 0; i < r.nbugs; i++)
			if (write_one(&r, &r.bugs[i], html) < 0)
				rc = EXIT_USAGE;
	}
	results_release(&r);
	return rc;
}
