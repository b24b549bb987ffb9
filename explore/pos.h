/*
 * POS, partial-order sampling (pos.c): its run, also the baseline a guided
 * run (guided.c) falls back on.
 */
#ifndef AVT_EXPLORE_POS_H
#define AVT_EXPLORE_POS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"

struct xp_pos;
struct xp_pos *xp_pos_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_pos_free(struct xp_pos *p);
int xp_pos_event(struct xp_pos *p, const struct avt_event *ev);
size_t xp_pos_pick(struct xp_pos *p, const uint32_t *lids, size_t n);
void xp_pos_yield(struct xp_pos *p, uint32_t lid);
void xp_pos_describe(const struct xp_pos *p, char *buf, size_t len);
/* The current priority of lid's pending event; 0 if unknown (guided
 * breaks its ties with it). */
uint64_t xp_pos_priority(const struct xp_pos *p, uint32_t lid);
/* Times lid's priority was drawn again because another thread's event
 * raced with its pending one (for tests). */
unsigned xp_pos_reassigned(const struct xp_pos *p, uint32_t lid);
/* How many other threads' pending events the events so far were compared
 * with (the index's: those on the event's object alone). */
uint64_t xp_pos_visits(const struct xp_pos *p);

/* The policy's verbs for policy.c's table. */
extern const struct xp_policy_ops xp_pos_ops;

#endif
