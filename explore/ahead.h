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
#include "tracer/view.h"

struct xp_surw;

/* xp_policy_budget for SURW.  v: the next pick as it stands while the
 * thread just picked runs on alone, the tracer's view (tracer/view.h)
 * as the tracer filled it (replay.h's budget callback), or NULL. */
size_t xp_surw_budget(struct xp_surw *s, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev,
		      uint32_t *who, bool *extras, size_t max);
/* The same behind the run's state as policy.c's table holds it. */
size_t xp_surw_budget_op(void *run, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev,
			 uint32_t *who, bool *extras, size_t max);

#endif
