/*
 * AVFilter (Zeng, Sun, Liu, He: "A Method for Improving the Precision and
 * Coverage of Atomicity Violation Predictions", Algorithm 1, Lemmas 1-2)
 * over the schedules predict writes: a prediction whose schedule makes a
 * *critical* read see another write than it saw in the recording is
 * likely infeasible (the reading thread may go elsewhere, and replay then
 * diverges).  Such predictions are marked, not removed: p->filtered is set
 * and p->filter_why says which read, which writer it loses or gains, and
 * which of the paper's five cases it is.  docs/avfilter.md.
 *
 * The pattern is (a_i, a_j, a_k) = the prediction's events[0..2]: a_i and
 * a_k of the window thread T1, a_j of the other thread T2 (sidetrack: the
 * three acquisitions; penelope: e1, e', e2).  Situation 1 is a_j recorded
 * after a_k, situation 2 a_j recorded before a_i.  The paper reasons about
 * an idealised predicted trace; we have the schedule itself, so a read
 * "breaks" exactly when, replaying the schedule's steps in order, the last
 * write to its address before it is not the one the recording had.  A
 * broken read is critical (r not one of a_i, a_j, a_k) in these cases:
 *
 *   1 (Lemma 1 (1))  T2 reads before a_j, recorded after a_k, and loses a
 *                    write of T1 made after a_k;
 *   2 (Lemma 1 (2))  T2 reads before a_j, recorded inside (a_i, a_k), and
 *                    loses a write of T1 made after a_i;
 *   3 (Lemma 1 (3))  T1 reads between a_i and a_k and gains a write T2
 *                    makes before a_j, recorded after the read, and a
 *                    branch may run between the read and a_k;
 *   4 (Lemma 2 (1))  T1 reads before a_i, recorded after a_j, and loses a
 *                    write of T2 made at or after a_j;
 *   5 (Lemma 2 (2))  T1 reads between a_i and a_k and loses a write of T2
 *                    made after a_j, and a branch may run between the
 *                    read and a_k.
 *
 * The pattern's own reads never count (a changed value there is the point
 * of the prediction), nor do T2's reads after a_j (they see the
 * interleaved state: the violation's effect), reads of other threads, or
 * events after the schedule's "free".  Deadlock predictions (no window)
 * and patterns recorded inside the window are never marked.
 *
 * Branches: the tracer records none today.  Cases 3 and 5 ask br(x) for
 * T1's events x after the read up to a_k: "may a conditional branch run
 * between x's thread's previous event and x" (the paper's br_x > 0).
 * pr_br_unknown, the default, answers false: see docs/avfilter.md for why
 * and for the risk that remains.
 *
 * Ownership: the model is borrowed.  For each prediction, a filter_why
 * left by an earlier call is freed and p->filtered reset first; a new
 * filter_why is malloc'ed and owned by the prediction
 * (prediction_set_release() frees it).
 */
#ifndef AVT_PREDICT_AVFILTER_H
#define AVT_PREDICT_AVFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "predict.h"

/* May a conditional branch run between the previous event of e's thread
 * and e (e: index into m->t->ev)?  ctx is the caller's. */
typedef bool (*pr_br_fn)(void *ctx, const struct pr_model *m, uint32_t e);

/* The default when the trace carries no branch information: false. */
bool pr_br_unknown(void *ctx, const struct pr_model *m, uint32_t e);

/* Marks the predictions p[0..n) whose schedules break a critical
 * read-after-write relation, with the branches answered by br(ctx, ...)
 * (br NULL: pr_br_unknown).  m must be the model of the trace the
 * predictions were made from.  0, or -1 after an avt_error() (out of
 * memory, or a schedule that runs a thread past its recorded events);
 * predictions checked so far keep their marks.
 *
 * Every prediction (deadlocks and two-event races too) is also checked
 * for a changed read *before* the violation: a read that runs before its
 * thread's first pattern event (or in a thread with no pattern event),
 * whose writer the schedule changes (to or from no event of the
 * pattern), and which would load another value: both values are known
 * only from reads the recording has with their values (AVT_F_VALUE:
 * access breakpoints' reads of 1-8 bytes), so a trace without values
 * never gets this mark.  Its thread may take another branch and never
 * reach the pattern, so replay would diverge; such a prediction gets
 * p->prefix_why (malloc'ed) and predict_run() drops it. */
int pr_avfilter_br(const struct pr_model *m, struct prediction *p, size_t n, pr_br_fn br,
		   void *ctx);

/* What pr_avfilter_use() asks of a read (pr_steers_fn, model.h):
 * predict_opts.read_steers. */
#define PR_STEERS_STORES 8

/* pr_avfilter_br(), and a changed read counts only if its value may steer
 * its thread (docs/avfilter.md, "Where a read's value goes"): steers()
 * says so for the read itself, or the value reaches a global whose
 * recorded reads (any thread, anywhere in the trace) may steer, or a
 * global no recorded access reads.  steers NULL: every read may steer. */
int pr_avfilter_use(const struct pr_model *m, struct prediction *p, size_t n, pr_br_fn br,
		    void *br_ctx, pr_steers_fn steers, void *steers_ctx);

/* pr_avfilter_br() with pr_br_unknown. */
int pr_avfilter(const struct pr_model *m, struct prediction *p, size_t n);

#endif
