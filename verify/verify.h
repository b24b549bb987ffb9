/*
 * Verify: re-enact a reported bug's interleaving on a rebuilt program
 * (docs/verify.md).
 *
 * An old schedule names events by per-thread index, which a rebuild
 * keeps only by luck.  Here every event is also described in source terms
 * (struct vf_event: thread by creation order, kind, function, object
 * name, and its occurrence count among its thread's events of the same
 * kind class, function and object); vf_plan_make() finds each old
 * event's counterpart among the new recording's events by that key,
 * decides whether the interleaving can still be re-enacted, and if so
 * turns the old schedule into a plan of steps over the new recording
 * ("T1 runs until it has made 5 events").  The plan is enacted by a
 * replay picker (vf_enact): a step's thread runs; when it cannot (a lock
 * the fix now holds across the switch), the thread the plan needs next
 * among those that can run goes first, as a replay waits for a holder.
 *
 * Pure logic on plain data: the CLI (cli/verify.c) does the symbolizing
 * and the files.  Ownership: struct vf_desc owns its events and their
 * strings (vf_desc_release); a plan owns its steps and copies of what it
 * reports; struct vf_enact owns nothing it was given.
 */
#ifndef AVT_VERIFY_VERIFY_H
#define AVT_VERIFY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/replay.h"
#include "trace/schedule.h"
#include "trace/trace.h"

/* One event in source terms. */
struct vf_event {
	uint32_t thread;   /* logical id: T0 main, Tk the k-th thread created */
	uint32_t tindex;   /* index among its thread's events */
	uint16_t kind;     /* enum avt_kind */
	char *func;        /* function of the site, "" if unknown */
	char *file;        /* file of the site, "" if unknown */
	unsigned line;     /* 0 if unknown: shown, never matched on */
	char *obj;         /* variable/lock name, "T2" for a thread, "" none */
	/* 1-based occurrence of (thread, class, func, obj) in its thread,
	 * computed by vf_desc_number(); an atomic read-modify-write is of
	 * both the read and the write class (occ as a read, occ_w as a write) */
	uint32_t occ, occ_w;
	/* the same over every function of the thread: (thread, class, obj),
	 * for counterparts of an event whose function changed */
	uint32_t occ_any, occ_any_w;
};

/* The described events of one recording, sorted by (thread, tindex). */
struct vf_desc {
	struct vf_event *ev;
	size_t nev, cap;
};

/* Appends a copy of e (its strings duplicated; NULL strings are ""). */
int vf_desc_add(struct vf_desc *d, const struct vf_event *e);
/* Sorts by (thread, tindex) and computes the occurrence counts. */
void vf_desc_number(struct vf_desc *d);
void vf_desc_release(struct vf_desc *d);
/* The event (thread, tindex), or NULL. */
const struct vf_event *vf_desc_find(const struct vf_desc *d, uint32_t thread, uint32_t tindex);

/* Lock operations: a fix may merge, move or drop them, so they are never
 * essential (the enactment honours the new locking instead). */
bool vf_kind_is_lock(unsigned kind);

/* Step of a plan: thread runs until it has made `target` events. */
struct vf_step {
	uint32_t thread;
	uint32_t target;
};

struct vf_plan {
	struct vf_step *steps;
	size_t nsteps;
	bool possible;
	/* when not possible: the first essential old event with no
	 * counterpart, and what the new recording's thread does instead at
	 * that point (has_instead), or why */
	struct vf_event parted, instead; /* strings point into the descs */
	bool has_instead;
	char why[256];
	size_t essential, matched, vanished; /* old events: essential, with a counterpart, without */
};

/* Old events of the schedule are those its steps cover (per thread, in
 * order); essential are the pattern's events (pattern[0..npattern) as
 * (thread, tindex) pairs of the old recording) and the events on both
 * sides of each context switch, lock operations excepted.  -1 on error
 * (out of memory, an old event not described: why says which). */
struct vf_ref {
	uint32_t thread, tindex;
};
int vf_plan_make(const struct vf_desc *old, const struct schedule *s, const struct vf_ref *pattern,
		 size_t npattern, const struct vf_desc *nw, struct vf_plan *out);
void vf_plan_release(struct vf_plan *p);

/* The enactment: a replay picker following plan over a recording of the
 * new program (rec: each run event is compared with the recording's at
 * its thread and index; the first that differs, before the plan's end,
 * is a deviation). */
struct vf_enact {
	const struct vf_plan *plan;
	size_t step;
	uint32_t *count;           /* events made, per thread */
	bool *gone, *spun;         /* exited; spun through a slice */
	size_t nthreads;
	const struct trace *rec;
	const struct avt_event ***texp; /* rec's events per thread */
	size_t *ntexp;
	uint32_t last;             /* last picked, UINT32_MAX none */
	unsigned held;             /* picks where the plan's thread could not run */
	size_t seen;               /* events of the run so far */
	size_t done_at;            /* events when the last step was done */
	bool deviated;
	struct avt_event dev_actual, dev_expected;
	bool dev_has_expected;
};

int vf_enact_init(struct vf_enact *e, const struct vf_plan *plan, const struct trace *rec);
void vf_enact_release(struct vf_enact *e);
/* Fills pk to drive replay_opts.picker with e. */
void vf_enact_picker(struct vf_enact *e, struct replay_picker *pk);
/* Every step done. */
bool vf_enact_done(const struct vf_enact *e);

#endif
