/*
 * SURW, selectively uniform random walk (surw.c), and the state its
 * look-ahead (ahead.c) draws on.
 */
#ifndef AVT_EXPLORE_SURW_H
#define AVT_EXPLORE_SURW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"

/* A run's state: surw.c's, read and drawn on (on a copy) by ahead.c. */
/* Walks decided ahead (ahead.c, xp_surw_budget): at its event number
 * `done` (kind, obj) the thread `lid` wins; the state the pick leaves.
 * xp_surw_event applies each when its event comes. */
struct xp_ahead {
	uint32_t lid, done;
	uint16_t kind;
	uint64_t obj;
	struct xp_rng rng;
	uint64_t walks;
};

#define SURW_AHEAD 256

struct xp_surw {
	struct xp_look look;
	struct xp_rng rng;
	uint64_t seed, run_index;
	uint64_t *objs;        /* interesting objects in draw order (empty: every event) */
	size_t nobjs;
	uint64_t *sorted;      /* the same, in address order: xp_surw_interesting
	                          searches it (a run may draw thousands of objects,
	                          asked about at every event) */
	bool all;              /* no objects drawn: every event is interesting */
	uint32_t **suf;        /* per recorded thread: interesting events from index i on */
	uint32_t nrec;
	uint32_t exiting;      /* the thread at a process exit, UINT32_MAX none */
	int exit_waits;        /* drawn when an exit first comes: 1 it waits for
	                          every other thread, 0 it contends; -1 not yet */
	uint32_t cur;          /* last thread picked, UINT32_MAX before any */
	uint32_t cur_made;     /* its events made when it was picked */
	uint32_t committed_spins; /* slices it has run since, without its event */
	bool cur_spun;         /* and it was seen to spin since (xp_surw_spun) */
	uint64_t walks;        /* weighted choices made */
	size_t *idx, *sel;     /* scratch for picks */
	size_t idxcap;
	struct xp_ahead *ahead; /* walks decided ahead: SURW_AHEAD of them (not
	                           in the struct: a budget copies the struct to
	                           draw on) */
	size_t nahead, next_ahead;
};

struct xp_surw *xp_surw_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_surw_free(struct xp_surw *s);
int xp_surw_event(struct xp_surw *s, const struct avt_event *ev);
size_t xp_surw_pick(struct xp_surw *s, const uint32_t *lids, size_t n);
void xp_surw_yield(struct xp_surw *s, uint32_t lid);
/* lid, about to be yielded, spins: a decision for it no longer holds. */
void xp_surw_spun(struct xp_surw *s, uint32_t lid);
/* lid stands at a process exit.  The run's first exit draws, once, whether
 * exits wait for every other thread or are an interesting event of weight
 * 1, a contender of the walk like any other thread's next event. */
void xp_surw_exiting(struct xp_surw *s, uint32_t lid);
void xp_surw_describe(const struct xp_surw *s, char *buf, size_t len);
/* Whether events on obj are interesting in this run (for tests). */
bool xp_surw_interesting(const struct xp_surw *s, uint64_t obj);
/* Whether lid's recorded event i is on an interesting object (the same
 * answer as xp_surw_interesting on its obj, from the suffix counts). */
bool xp_surw_interesting_at(const struct xp_surw *s, uint32_t lid, uint32_t i);
/* lid's weight now: its remaining interesting events (for tests). */
uint64_t xp_surw_weight(const struct xp_surw *s, uint32_t lid);

/* The policy's verbs for policy.c's table. */
extern const struct xp_policy_ops xp_surw_ops;

#endif
