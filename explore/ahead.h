/*
 * SURW's look-ahead (ahead.c): how far the thread just picked may run
 * with no decision, as the tracer's view of the next pick shows it
 * (xp_policy_budget, policy.h, says what a budget is).
 */
#ifndef AVT_EXPLORE_AHEAD_H
#define AVT_EXPLORE_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"

/* The next pick as it stands while the thread just picked runs on alone
 * (from the tracer: tracer_pick_view): the threads it may offer, in order
 * (that thread among them), each as it is (lock 0) or while that lock is
 * free (held: the running thread's holds on it now; its acquires and
 * releases change that); and the objects the others wait for (any other
 * event on one, or on a lock above, may change who can run).
 *
 * A thread may also be one the agent can hand the run token to (park:
 * stopped at that request, an acquire or a release of park_obj, which it
 * can wait to make in-process); with locks_known, locks[] are all the
 * locks held now (owner UINT32_MAX - 1: readers), and a budget may then
 * go on through the walks such threads win (a hand-over script). */
struct xp_view_thread {
	uint32_t lid;
	uint32_t held;
	uint64_t lock;
	uint16_t park;
	uint64_t park_obj;
};
struct xp_view_lock {
	uint64_t obj;
	uint32_t owner, count;
};
struct xp_view {
	const struct xp_view_thread *thr;
	size_t n;
	const uint64_t *objs;
	size_t nobjs;
	const struct xp_view_lock *locks;
	size_t nlocks;
	bool locks_known;
};
struct xp_surw;

/* xp_policy_budget for SURW. */
size_t xp_surw_budget(struct xp_surw *s, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
		      uint32_t *who, bool *extras, size_t max);
/* The same behind the run's state as policy.c's table holds it. */
size_t xp_surw_budget_op(void *run, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
			 uint32_t *who, bool *extras, size_t max);

#endif
