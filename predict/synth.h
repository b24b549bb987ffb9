/*
 * Schedule synthesis: from a candidate to a schedule replay can enforce.
 *
 * A plan says which events each involved thread must reach (the cut), which
 * recorded lock edges are reversed (dropped) and which new orderings the
 * violation needs (extra edges).  pr_synth() then builds the schedule as
 * PENELOPE's three regions, with PECAN's rule for moved events:
 *
 *   region I    every event recorded before the plan's first reordered
 *               event, in the recorded order, each thread cut back to the
 *               last point where it held no lock;
 *   region II/III the events the cut needs (the happens-before closure of
 *               the cut, minus the dropped edges), in an order that keeps
 *               each thread running as long as it can, switching to the
 *               thread whose next event was recorded first;
 *
 * never letting a thread acquire a lock another thread holds (replay's
 * rule), then `free`.  An event that depends on a moved event can only run
 * after it (its edges are kept), so dependents move with it, and an extra
 * edge that targets the start of the locked stretch around an event moves
 * the outermost lock with it.  A deadlock plan ends, when every other
 * thread is provably blocked there, with the request that closes the cycle.
 *
 * Ownership: the returned schedule belongs to the caller.
 */
#ifndef AVT_PREDICT_SYNTH_H
#define AVT_PREDICT_SYNTH_H

#include <stdint.h>

#include "model.h"
#include "rank.h"
#include "trace/schedule.h"

struct pr_edge {
	uint32_t from, to;  /* event from must run before event to */
};

/* A thread moved ahead of another may take a lock that the other released
 * many times after the cut: each of those acquisitions is a drop. */
#define PR_PLAN_DROPS 64

struct pr_plan {
	uint32_t nthr;
	uint32_t thr[4];
	uint32_t stop[4];    /* tindex of the last event thr[i] must run, or PR_NONE */
	uint32_t limit[4];   /* at most this many events of thr[i] (UINT32_MAX: any) */
	uint32_t ndrop;
	uint32_t drop[PR_PLAN_DROPS]; /* events that take their lock without its recorded edge */
	uint32_t nedge;
	struct pr_edge edge[4];
	uint32_t p0;         /* region I is the recorded order before event p0 */
	int final;           /* index in thr whose next event ends the schedule, or -1 */
	/* the variables of an access pattern: a thread outside thr whose region
	 * I writes one of them stops before that write unless the pattern
	 * needs it (synth.c, spare_bystanders) */
	uint32_t nvar;
	uint64_t var[4];
};

struct pr_cand;
/* Fills p->var with the variables of c's access events. */
void pr_plan_vars(const struct pr_model *m, const struct pr_cand *c, struct pr_plan *p);

/* The plan for a candidate.  0, or -1 if the candidate cannot be scheduled
 * (a critical section that never ends). */
int pr_plan_cand(const struct pr_model *m, const struct pr_cand *c, struct pr_plan *p);

/* Builds the schedule of plan p into *out.  1 on success; 0 if the plan
 * is infeasible (or would need more than *budget events, which it
 * decrements); -1 after an avt_error() (out of memory). */
int pr_synth(const struct pr_model *m, const struct pr_plan *p, uint64_t *budget,
	     struct schedule **out);

#endif
