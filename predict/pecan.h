/*
 * PECAN (Huang and Zhang, ISSTA'11) over the memory accesses of a trace:
 * pattern-directed search for access anomalies (pattern.h: races,
 * atomicity violations, atomic-set serializability violations, and user
 * patterns) that some feasible permutation of the trace shows, and their
 * schedules.
 *
 * Independence is PECAN's hybrid model: two events of different threads
 * may be reordered unless one happens before the other through thread
 * communication (create/join, condition signals, semaphores, barriers:
 * sclock.h, never lock edges, which a schedule may reverse) or, for the
 * two events of a race, they hold a common lock.  For an event placed
 * inside another thread's region, that thread must have a point between
 * its two events whose lockset is disjoint from the inserted events'
 * (Algorithm 2's cut-point).  An instance whose events were recorded in
 * pattern order already happened: not a prediction.
 *
 * The schedule (Algorithms 3 and 4, through synth.h): region I; then every
 * thread of the pattern runs to its last pattern event before the final
 * one, each pattern event after the one before it (an extra edge into the
 * start of the locked stretch around it: the outermost lock moves with
 * it); the thread of the final event stands before it, and `free` lets
 * the thread of the event before it go on first.  docs/predict.md,
 * "PECAN".
 *
 * Ownership: the model and the patterns are borrowed; candidates go to
 * cs (deduplicated there, pr_cand.pp points at their pattern); the
 * schedule pr_pecan_synth() builds belongs to the caller.
 */
#ifndef AVT_PREDICT_PECAN_H
#define AVT_PREDICT_PECAN_H

#include <stdint.h>

#include "model.h"
#include "pattern.h"
#include "rank.h"
#include "synth.h"

/* Finds the candidates of every pattern in pats[0 .. npats).  0, or -1
 * after an avt_error() (out of memory). */
int pr_pecan(const struct pr_model *m, struct pr_cands *cs,
	     const struct pr_patterns *const *pats, unsigned npats);

/* pr_pecan() with --atomic: with call stacks, regions are the calls of
 * the functions atomic() accepts (it is given a site inside the function,
 * as predict_opts.atomic); an access outside them is a region of its own.
 * atomic NULL: pr_pecan(). */
int pr_pecan_atomic(const struct pr_model *m, struct pr_cands *cs,
		    const struct pr_patterns *const *pats, unsigned npats,
		    bool (*atomic)(void *ctx, uint16_t mod, uint64_t off), void *atomic_ctx);

/* Plan number variant (0, 1, 2) of candidate c: the final event's thread
 * stands right before it (0), before the locked stretch around it (1), or
 * at its own last pattern event (2).  0, or -1 if there is no such plan
 * (the same as an earlier variant, more than four reversed lock edges). */
int pr_pecan_plan(const struct pr_model *m, const struct pr_cand *c, int variant,
		  struct pr_plan *p);

/* The schedule of the first plan that pr_synth() can build.  Returns as
 * pr_synth(); *plan is the plan of *out. */
int pr_pecan_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
		   struct pr_plan *plan, struct schedule **out);

#endif
