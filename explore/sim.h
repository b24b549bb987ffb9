/*
 * The locks a look-ahead follows (sim.c): the tracer's lock model
 * (tracer/model.h) on the events the look-ahead runs ahead, filled from
 * the view of the next pick (tracer/view.h), for up to XP_SIM_LOCKS locks.
 */
#ifndef AVT_EXPLORE_SIM_H
#define AVT_EXPLORE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"
#include "tracer/model.h"

/* The locks followed: those the view lists or the threads wait for, and
 * those the events ahead take, up to this many (a walk stops following
 * more: its events on them end the draws, as on any lock it does not
 * know). */
#define XP_SIM_LOCKS 64

/* Zeroed: no lock followed; xp_sim_free releases its table. */
struct xp_sim {
	struct model m;
};

void xp_sim_free(struct xp_sim *s);
/* obj's entry, NULL if it is not followed. */
struct mlock *xp_sim_find(struct xp_sim *s, uint64_t obj);
/* obj's entry, followed (free) from now on if new; NULL when the table is
 * full. */
struct mlock *xp_sim_at(struct xp_sim *s, uint64_t obj);
/* A lock of the view (tracer_view_lock's owner and count; owner
 * TRACER_VIEW_READERS: read-held, count readers); false when full. */
bool xp_sim_hold(struct xp_sim *s, uint64_t obj, uint32_t owner, uint32_t count);
/* No one holds obj (or it is not followed). */
bool xp_sim_is_free(struct xp_sim *s, uint64_t obj);
/* An acquire or a release of t, taken as the tracer commits it
 * (model_acquire, model_release_lock): false, and nothing changed, when
 * the tracer would not commit it so (the lock held by another, or
 * read-held; a release of what t does not hold) or the table is full. */
bool xp_sim_step(struct xp_sim *s, uint32_t t, const struct xp_rev *r);

#endif
