/*
 * A schedule: the order in which replay lets threads run, as plain data.
 *
 * A schedule is a list of steps "thread T runs its next N recorded events",
 * optionally ending in "free" (from there on every thread may run).  predict
 * writes one per prediction, replay enforces it.  The text form is in
 * docs/schedule-format.md:
 *
 *     avtrace-schedule 1
 *     # 7: RWR on src.n ...
 *     run T0 5
 *     run T1 3
 *     free
 *
 * Ownership: struct schedule owns its steps array, its comments array and
 * every comment string; schedule_free() frees them all and the struct.  The
 * arrays are malloc'ed; code that builds a schedule by hand may fill them
 * itself (then leave the cap fields 0 or correct) or use the helpers below.
 */
#ifndef AVT_TRACE_SCHEDULE_H
#define AVT_TRACE_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"

#define AVT_SCHEDULE_VERSION 1u

struct sched_step {
	uint32_t thread; /* logical thread id */
	uint32_t count;  /* events of that thread, > 0 */
};

struct schedule {
	struct sched_step *steps;
	size_t nsteps;
	int has_free;     /* ends in "free": afterwards any thread may run */
	char **comments;  /* whole-line comments, without the "# " */
	size_t ncomments;
	size_t stepcap, commentcap; /* allocated lengths of the two arrays */
};

/* An empty schedule (no steps, no free); NULL if out of memory. */
struct schedule *schedule_new(void);
void schedule_free(struct schedule *s);

/* Largest schedule file read: one step per event of a long recording
 * fits many times over; /dev/zero does not. */
#define AVT_SCHEDULE_MAX_BYTES (256u << 20)

/* Reads a schedule file.  On error returns NULL and writes "PATH:LINE:
 * reason" (or "cannot open 'PATH': ...", "cannot read schedule 'PATH':
 * ...") into err, without the "avtrace: " prefix.  Only a regular file of
 * at most AVT_SCHEDULE_MAX_BYTES is read; a NUL byte is an error. */
struct schedule *schedule_read(const char *path, char *err, size_t errlen);

/* Writes the canonical text: header, comments, steps, free.  schedule_write
 * replaces PATH atomically (PATH.tmp, then rename), so readers never see half
 * a schedule.  Both report with avt_error() and return -1 on failure. */
int schedule_write(const struct schedule *s, const char *path);
int schedule_write_fp(const struct schedule *s, FILE *fp);

/* Appends "run T<thread> <count>", extending the last step instead when it
 * is the same thread (unless its count would overflow).  -1 if count is 0,
 * s already ends in free, or out of memory. */
int schedule_append_run(struct schedule *s, uint32_t thread, uint32_t count);
/* Appends a copy of text; line breaks become spaces so the comment stays
 * one line.  -1 if out of memory. */
int schedule_add_comment(struct schedule *s, const char *text);

/* The schedule the events were observed in: each maximal run of
 * consecutive events of one thread is one step; ends in free.  ev is
 * borrowed.  NULL if out of memory. */
struct schedule *schedule_from_events(const struct avt_event *ev, size_t n);

/* Sum of the counts of all steps. */
uint64_t schedule_total_events(const struct schedule *s);

#endif
