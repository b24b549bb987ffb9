/*
 * Reads-from guided search (guided.c).
 */
#ifndef AVT_EXPLORE_GUIDED_H
#define AVT_EXPLORE_GUIDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"
#include "explore/start.h"

struct xp_guided;
struct xp_guided *xp_guided_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_guided_free(struct xp_guided *g);
int xp_guided_event(struct xp_guided *g, const struct avt_event *ev);
size_t xp_guided_pick(struct xp_guided *g, const uint32_t *lids, size_t n);
void xp_guided_yield(struct xp_guided *g, uint32_t lid);
void xp_guided_describe(const struct xp_guided *g, char *buf, size_t len);
uint64_t xp_guided_target(const struct xp_guided *g);

/* The policy's verbs for policy.c's table. */
extern const struct xp_policy_ops xp_guided_ops;

#endif
