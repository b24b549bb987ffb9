/*
 * The results model of the commands that replay many schedules (avtrace
 * test, explore, summary, report): one row per replayed schedule
 * (replays/NNNN.json with the prediction it came from in
 * predictions.json) and the distinct bugs reproduced, by predictions and
 * by exploration (a run's own recording, explore/runs/NNNN, whose check
 * replay is replays/0000.json there).  Everything comes from replay's
 * JSON; no text report is read back.
 *
 * The one "same bug" rule (results_add_replay, results_add_explored): two
 * reproduced failures are the same bug when their replays' "headline"
 * (what failed and where, by source line) and their wait-for cycle
 * ("deadlock": thread, what it waits for, object, site) are equal.
 *
 * A command fills the model as its replays end (avtrace test, explore) or
 * reads a directory back (results_load: summary --sarif, report); the
 * table, the summary lines, --json and SARIF all print from it, so they
 * count the same bugs.  Formats: docs/json-output.md.
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

/* How many schedules (replays, exploration runs) ran to their end, and how
 * many did not (stuck until a time limit, or an error); a schedule that
 * diverged from what the program can do is an answer, counted apart. */
struct run_tally {
	unsigned ran, diverged, unfinished;
};

struct result_row {
	unsigned schedule;
	json_t *replay;     /* replays/NNNN.json, or NULL if unreadable */
	json_t *prediction; /* its entry of predictions.json, or NULL (schedule 0) */
	int bug;            /* index into bugs[] of the distinct bug it reproduced, or -1 */
	bool first;         /* the first row of that bug: its report is this row's */
	char where[512];    /* the table's "where" (the caller's words), or "" */
};

struct result_bug {
	char rule[160];     /* avtrace/DETECTOR/PATTERN, avtrace/explore/KIND, ... */
	char key[2048];     /* what makes it distinct: headline and wait-for cycle */
	char reproduce[4400]; /* the command that reproduces it */
	char report[4400];  /* its text report, or "" when none was written */
	char run_dir[4300]; /* the recording the reproduce command replays */
	unsigned schedule;
	unsigned run;       /* the exploration run that found it (explored) */
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
	struct run_tally tally; /* the schedules the run replayed and explored */
	unsigned unconfirmed;   /* failures seen in exploration that their
	                           replay did not show again: no bug */
};

/* An empty model of DIR (its meta.json and predictions.json read). */
void results_init(struct results *r, const char *dir);
/* Reads DIR back: its replays/NNNN.json, and the exploration runs whose
 * reports/explore-NNNN.txt was written; -1 on error. */
int results_load(struct results *r, const char *dir);
void results_release(struct results *r);

/* Adds schedule's replay (DIR/replays/NNNN.json) as a row, counted in the
 * tally; when it reproduced a bug, row->bug is its distinct bug and
 * row->first tells a new one.  NULL when out of memory. */
struct result_row *results_add_replay(struct results *r, unsigned schedule);
/* Adds the failure of exploration run `run` whose recording is run_dir,
 * as its check replay (run_dir/replays/0000.json) shows it: the index of
 * its distinct bug (*is_new: first seen), or -1 when the replay did not
 * fail (not confirmed) or on error. */
int results_add_explored(struct results *r, const char *run_dir, unsigned run, bool *is_new);
/* Takes out bug i, its report (X.txt and what was written beside it)
 * removed, its rows no bug's: a failure that is not counted
 * (cli/test.c, the program fails so on its own now). */
void results_drop(struct results *r, size_t i);
/* Numbers N of the files PREFIX-NNNN.EXT (prefix may be "") in path,
 * sorted, into a malloc'ed *out; how many. */
size_t results_scan_numbered(const char *path, const char *prefix, const char *ext, unsigned **out);
/* Did this replay (its JSON) reproduce a bug or a deadlock? */
bool results_reproduced(const json_t *replay);
/* The recording's "load" (trace and names) for the predicted events'
 * sites (results_event); done by results_load, and before --json. */
void results_open_trace(struct results *r);

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
/* The SARIF run of r's bugs (process: its automationDetails id, or NULL),
 * and a log of several runs written to path (runs taken); as above. */
json_t *sarif_run(struct results *r, const char *process);
int sarif_write_runs(json_t *runs, const char *path);

/* 'avtrace test --json' / '--sarif' (cli/output.c): set up before the run (quiet: the
 * table goes nowhere, stdout is kept for the document) and finish with
 * the run's model and exit status, which it returns (EXIT_USAGE if a file
 * cannot be written). */
struct test_output {
	const char *sarif;
	bool json;
	int saved_stdout;
	/* a process tree (cli/tree.c): each process's document and SARIF run
	 * are kept (test_output_process) until test_output_tree prints them */
	bool tree;
	const char *process;  /* the process being finished, named */
	json_t *docs, *runs;
};
void test_output_begin(struct test_output *o);
int test_output_finish(struct test_output *o, struct results *r, int status);
/* The tree's one document (the first process's, with "processes" and
 * every process's "bugs") and SARIF log, and the tree's exit status. */
int test_output_tree(struct test_output *o, const char *dir, int status);

#endif
