/*
 * The results of an output directory, read back from its files: one row per
 * replayed schedule (replays/NNNN.json with the prediction it came from in
 * predictions.json) and the distinct bugs reproduced, by predictions and
 * by exploration (reports/explore-NNNN.txt -> explore/runs/NNNN).  The
 * writers over it: SARIF 2.1.0 (cli/sarif.c) and the document of
 * 'avtrace test --json' (cli/results.c).  Formats: docs/json-output.md.
 *
 * Ownership: struct results owns every JSON value and string it holds
 * (results_release()).
 */
#ifndef AVT_CLI_RESULTS_H
#define AVT_CLI_RESULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct names;
struct trace;

struct result_row {
	unsigned schedule;
	json_t *replay;     /* replays/NNNN.json, or NULL if unreadable */
	json_t *prediction; /* its entry of predictions.json, or NULL (schedule 0) */
	int bug;            /* index into bugs[] of the distinct bug it reproduced, or -1 */
};

struct result_bug {
	char rule[160];     /* avtrace/DETECTOR/PATTERN, avtrace/explore/KIND, ... */
	char key[2048];     /* what makes it distinct: headline and wait-for cycle */
	char reproduce[4400]; /* the command that reproduces it */
	char report[4400];  /* its text report, or "" when none was written */
	char run_dir[4300]; /* the recording the reproduce command replays */
	unsigned schedule;
	bool explored;      /* found by exploration, not by a prediction */
	const json_t *replay;     /* borrowed from rows or owned in owned[] */
	const json_t *prediction; /* borrowed, or NULL */
};

struct results {
	char dir[4200];
	json_t *meta;        /* meta.json, or NULL */
	json_t *predictions; /* predictions.json, or NULL */
	struct result_row *rows;
	size_t nrows;
	struct result_bug *bugs;
	size_t nbugs;
	json_t *owned;       /* the explore runs' replay JSONs */
	struct trace *trace; /* the recording, for the predicted events' sites; or NULL */
	struct names *names;
};

/* Reads DIR; -1 after an avt_error() when DIR has no replay results. */
int results_load(struct results *r, const char *dir);
void results_release(struct results *r);

/* Site of event seq of the recording as JSON (cli/facts.h), with its
 * thread, kind and object; NULL if the recording cannot tell. */
json_t *results_event(struct results *r, unsigned long long seq);

/* The minimal failing schedule of bug b (cli/minimize.c), when one was
 * written beside its report: {"schedule": path, "switches": [...],
 * "reproduce": command}.  A new reference, or NULL. */
json_t *results_minimal(const struct result_bug *b);

/* Writes the SARIF 2.1.0 log of r's distinct bugs to path ("-": stdout);
 * -1 after an avt_error(). */
int sarif_write(struct results *r, const char *path);

/* 'avtrace test --json' / '--sarif': set up before the run (quiet: the
 * table goes nowhere, stdout is kept for the document) and finish with
 * the run's exit status, which it returns (EXIT_USAGE if a file cannot be
 * written). */
struct test_output {
	const char *sarif;
	bool json;
	int saved_stdout;
	/* the verdict's facts (cli/test.c): schedules that ran to their end,
	 * diverged, never ended; inconclusive (exit status 3) */
	unsigned ran, diverged, unfinished;
};
void test_output_begin(struct test_output *o);
int test_output_finish(struct test_output *o, const char *dir, int status);

#endif
