/*
 * Reads-from reorderings of critical sections: the "order" detector.
 *
 * The lock-based detectors take two critical sections on one lock as
 * ordered the way they ran, and the access detectors look only at accesses
 * no common lock protects.  Neither asks what a read inside a critical
 * section would see if another thread's section on the same lock had run
 * first: a relay whose legs must run in one order (T2, T3, T1), a step
 * that assumes another has not happened yet.  This one does, for each
 * read in a critical section and the next few writes of the same variable
 * by other threads under a lock the read holds too: the prediction is
 * "this read takes its value from that write", and its schedule runs the
 * writer's section before the reader's (docs/predict.md, Order).
 *
 * Its predictions are ranked as every other's (variables, threads, context
 * switches, cut), after the others' on a tie; among themselves, the one
 * whose schedule moves the reader furthest first.
 */
#ifndef AVT_PREDICT_ORDER_H
#define AVT_PREDICT_ORDER_H

#include <stdint.h>

#include "model.h"
#include "rank.h"
#include "synth.h"
#include "trace/schedule.h"

/* Adds the candidates of t (ev[0] the write, ev[1] the read; at most 16 in
 * all).  0, or -1 after avt_error(). */
int pr_order(const struct pr_model *m, struct pr_cands *cs);

/* The schedule of candidate c into *out; plan gets what the prediction's
 * fields need (threads, cut).  1 on success, 0 if it cannot be scheduled
 * (or needs more than *budget events), -1 after avt_error(). */
int pr_order_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
		   struct pr_plan *plan, struct schedule **out);

#endif
