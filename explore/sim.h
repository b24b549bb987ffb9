/*
 * The locks a look-ahead follows (sim.c), as the tracer's model would
 * hold them: owner and count per lock, for up to XP_SIM_LOCKS locks.
 * Plain data; zeroed, it holds no lock.
 */
#ifndef AVT_EXPLORE_SIM_H
#define AVT_EXPLORE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"

#define XP_SIM_LOCKS 64
#define XP_SIM_FREE UINT32_MAX

struct xp_sim {
	struct { uint64_t obj; uint32_t owner, count; } l[XP_SIM_LOCKS];
	size_t n;
};

/* obj's entry, XP_SIM_LOCKS if it has none. */
size_t xp_sim_find(const struct xp_sim *m, uint64_t obj);
/* obj's entry, added free if new; XP_SIM_LOCKS when the table is full. */
size_t xp_sim_at(struct xp_sim *m, uint64_t obj);
/* No one holds obj (or it is not followed). */
bool xp_sim_is_free(const struct xp_sim *m, uint64_t obj);
/* An acquire or a release by t: false when the model would not take it
 * so (the lock held by another, a release of what t does not hold). */
bool xp_sim_step(struct xp_sim *m, uint32_t t, const struct xp_rev *r);

#endif
