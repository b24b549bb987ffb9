/*
 * PENELOPE (Sorrentino, Farzan, Madhusudan, FSE'10, Sections 3-4) over
 * the memory accesses of a trace: two accesses e1, e2 of one variable by
 * thread T1 inside one transaction, and an access e' of the same variable
 * by another thread T2 that could run between them, such that e1 e' e2 is
 * not serializable:
 *
 *   RWR  T1 reads, T2 writes, T1 reads again (two reads disagree)
 *   RWW  T1 reads, T2 writes, T1 writes (T2's write is lost)
 *   WWR  T1 writes, T2 writes, T1 reads (T1 reads T2's value, not its own)
 *   WRW  T1 writes, T2 reads, T1 writes (T2 sees an intermediate value)
 *   WWW  T1 writes, T2 writes, T1 writes (T2's write is lost)
 *
 * e' must be able to run in the window: it is concurrent with it under
 * the synchronization that cannot be reordered (create/join, condition
 * signals, semaphores, barriers: not lock edges, which a schedule may
 * reverse), and some point e of the window (e1 <= e < e2, the cut-point)
 * has a lockset disjoint from e''s and a compatible acquisition history
 * (Kahlon et al.), so T1 can stand at e while T2 reaches e'; and it can
 * be planned (pr_penelope_plan).  Transactions are txn.h's, with begin/end
 * of atomic blocks as boundaries and a block one transaction, and the
 * loop of a thread's body is not one.  e' recorded inside the window (the
 * pattern happened in the recorded run) is not a prediction.
 * docs/predict.md, "PENELOPE".
 *
 * Ownership: the model is borrowed; candidates go to cs (deduplicated
 * there); the schedule pr_penelope_synth() builds belongs to the caller.
 */
#ifndef AVT_PREDICT_PENELOPE_H
#define AVT_PREDICT_PENELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "rank.h"
#include "synth.h"
#include "trace/schedule.h"

struct predict_opts;

/* The most memory the search's table of lock clocks may take (default
 * 64 MiB: threads x acquisitions x 4 bytes); past it the search uses a
 * smaller, slower index.  Tests set 0 to exercise that index. */
extern size_t pr_penelope_droptab_bytes;

/* Finds the candidates; o may be NULL (every function call is a
 * transaction).  0, or -1 after an avt_error() (out of memory). */
int pr_penelope(const struct pr_model *m, struct pr_cands *cs, const struct predict_opts *o);

/* The plan of candidate c: region I, then T1 up to its cut-point, T2 up to
 * e' (after e1), and with_e2 T2 on to the end of its critical sections
 * around e' and T1 on to e2.  park: a thread whose part would end right
 * before a watched access does that access too (replay can only park a
 * thread before its next request, and a watchpoint reports after the
 * access).  Lock edges into T1's or T2's events that come from beyond the
 * other thread's part are dropped.  0, or -1 if it cannot be planned
 * (more than PR_PLAN_DROPS drops). */
int pr_penelope_plan(const struct pr_model *m, const struct pr_cand *c, bool with_e2,
		     bool park, struct pr_plan *p);

/* Every read the schedule runs, except each thread's last scheduled
 * event, reads from the write it read from in the recording (else replay
 * would likely see the thread go elsewhere: a divergence).  1 if so, 0 if
 * not, -1 if out of memory (after avt_error()). */
int pr_penelope_reads_kept(const struct pr_model *m, const struct schedule *s);

/* The schedule of candidate c, into *out with *kept = true: the first of
 * with T1's e2 (if that schedule exists and keeps its reads), then ending
 * at e' (the paper's rule: then every thread runs free), each parked if
 * that works, else not.  If no schedule keeps its reads, the one that
 * forces the fewest events after a changed read, with *kept = false: a
 * read that sees a new value often changes nothing the replay checks.
 * Returns as pr_synth(); *plan is the plan of *out. */
int pr_penelope_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
		      struct pr_plan *plan, struct schedule **out, bool *kept);

/* Each candidate's sibling: the other variant of the same penelope bug
 * (pr_cands_same_bug), or SIZE_MAX (also for other detectors' candidates).
 * A malloc'ed array of cs->n, or NULL if out of memory. */
size_t *pr_penelope_siblings(const struct pr_model *m, const struct pr_cands *cs);

#endif
