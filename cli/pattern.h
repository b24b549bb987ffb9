/* The predicted pattern's events in a replay's interleaving: which events
 * the text report (cli/minimize.c) stars and the minimiser's phrases name.
 *
 * A prediction's comment (schedules/NNNN.sched, replays/NNNN.json
 * "predicted") reads "N: detector pattern — T1 read a[3093] at
 * acc_qsort.c:61, T0 write a[3093] at acc_qsort.c:56; not atomic: sort
 * (acc_qsort.c:84)".  Each "T<n> KIND OBJECT at FILE:LINE" is one event of
 * the pattern; the "not atomic" calls are context, not events.  An event of
 * the run is a pattern event when its thread, kind, object and site are
 * those of one such element: a site alone (the rule before issue 30) names
 * every hit of a loop's line.  pattern_mark() then keeps one occurrence per
 * element, the nearest the switches, so the stars stay a handful.
 *
 * struct pattern owns its elements; pattern_release() frees them. */
#ifndef AVTRACE_CLI_PATTERN_H
#define AVTRACE_CLI_PATTERN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct pattern_ev {
	long long thread;  /* -1: any (a comment that names only sites) */
	char kind[32];     /* "": any; else a kind ("read") or a raw verb ("reads") */
	char object[512];  /* "": any (the comment names an address, not an object) */
	char site[512];    /* "file.c:LINE" */
	char text[1100];   /* the element as the comment says it */
};

struct pattern {
	struct pattern_ev *ev;
	size_t n;
};

/* Parses the comments of predicted (a JSON array of strings, may be NULL).
 * A comment with no "T<n> ... at SITE" element (a schedule of your own)
 * gives one any-thread element per "FILE:LINE" it names.  0, -1 when out
 * of memory. */
int pattern_init(struct pattern *p, const json_t *predicted);
void pattern_release(struct pattern *p);

/* Does event e (an interleaving entry: thread, kind, object, file, line)
 * match element pe? */
bool pattern_ev_matches(const struct pattern_ev *pe, const json_t *e);

/* Does e match any element? */
bool pattern_matches(const struct pattern *p, const json_t *e);

/* The pattern's events in interleaving il: mark[i] is 1 + the element
 * event i stands for, 0 for the others.  Each element marks at most one
 * event (an element the comment repeats, once per repetition): of those
 * that match, the one nearest an anchor (anchors: positions in il, the
 * switches; none: the end of il, the failure), the earlier on a tie.
 * NULL when out of memory. */
int *pattern_mark(const struct pattern *p, const json_t *il, const long long *anchors, size_t nanchors);

#endif
