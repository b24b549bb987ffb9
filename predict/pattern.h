/*
 * Access-anomaly patterns (PECAN, Huang and Zhang, ISSTA'11, Section 3):
 * a pattern is n equal-length sequences [E, T, SV, AR, AT]: event i is by
 * thread role T[i], accesses variable role SV[i] in atomic-region role
 * AR[i] with access type AT[i] (read or write), and the events happen in
 * the order E.  A match binds each thread role to a distinct thread, each
 * variable role to a distinct variable (address) and each region role to
 * one region of its thread (pecan.c: a stretch between synchronization,
 * and with call stacks between loop rounds; docs/predict.md, PECAN).
 *
 * Built-in patterns (docs/predict.md, "PECAN"):
 *   race-RW, race-WR, race-WW   2 events, 2 threads, 1 variable, the two
 *                               consecutive accesses of it
 *   atomicity-RWR, -RWW, -WWR, -WRW, -WWW   3 events: t1 t2 t1 on one
 *                               variable, t1's two in one region
 *   atomic-set-5 .. atomic-set-11   4 events, 2 threads, 2 variables: the
 *                               two-variable problematic interleavings of
 *                               Vaziri, Tip and Dolby (POPL'06); their 1-4
 *                               are the one-variable atomicity patterns
 *
 * User patterns come from a text file (pr_patterns_parse), one a line:
 *
 *     # comment
 *     NAME [consecutive]: AT THREAD VAR REGION, AT THREAD VAR REGION, ...
 *     asv-wrrw: w t1 x u1, r t2 x u2, r t2 y u2, w t1 y u1
 *
 * Limits: 2 to PR_PAT_MAX events, at most 4 thread and variable roles;
 * threads named t1, t2, ... in order of first use; a region belongs to
 * one thread and its events are consecutive in that thread's part; two
 * threads must conflict on some variable (one of them writing); every
 * thread but t1 must touch a variable some other thread touches (the
 * search reaches it through that variable); "consecutive" only for two
 * events on one variable.
 *
 * Ownership: struct pr_patterns owns its array (pr_patterns_release());
 * names live in the patterns.  pr_builtin_patterns() is static.
 */
#ifndef AVT_PREDICT_PATTERN_H
#define AVT_PREDICT_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PR_PAT_MAX 4
#define PR_PAT_NAME 40
#define PR_PAT_FILE_MAX 1024          /* patterns in one file */
#define PR_PAT_FILE_BYTES (1u << 20)  /* size of a pattern file */

struct pr_pat_ev {
	uint8_t thr;    /* thread role, 0-based */
	uint8_t var;    /* variable role */
	uint8_t reg;    /* region role (global numbering; one thread each) */
	uint8_t write;  /* 1: write, 0: read */
};

struct pr_pat {
	char name[PR_PAT_NAME];
	uint8_t n, nthr, nvar;
	bool consecutive;
	struct pr_pat_ev ev[PR_PAT_MAX];
	/* search order: each step extends a role already bound next to one
	 * of its events (dir -1: the event before, +1: after) or binds a new
	 * thread role through an event on a variable already bound */
	uint8_t order[PR_PAT_MAX];
};

struct pr_patterns {
	struct pr_pat *p;
	size_t n, cap;
};

/* The built-in patterns. */
const struct pr_patterns *pr_builtin_patterns(void);

/* Appends the patterns of FILE text (its name for messages) to ps.  0, or
 * -1 after an avt_error() naming file:line (syntax, limits, out of
 * memory); ps is then unchanged past its first n entries. */
int pr_patterns_parse(struct pr_patterns *ps, const char *text, const char *file);
/* Reads path (a regular file of at most PR_PAT_FILE_BYTES, no NUL byte)
 * and parses it.  0, or -1 after an avt_error() naming the file. */
int pr_patterns_load(struct pr_patterns *ps, const char *path);
void pr_patterns_release(struct pr_patterns *ps);

/* Fills p's search order; false if no such order exists (a thread role
 * shares no variable with the others). */
bool pr_pat_prepare(struct pr_pat *p);
#endif
