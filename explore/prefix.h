/*
 * Following a starting point (prefix.c): the threads of a schedule's
 * first events, in order, picked one after the other as long as the run
 * stays on them.  Used by policy.c for every policy (the starting points
 * from predictions, runs 1 .. xp_guide_npredicted) and by guided.c (the
 * prefix of a corpus seed).
 *
 * With a prediction's pattern threads known, only their part of the
 * schedule is followed; every other thread (a bystander) is placed at
 * random among them: a uniform interleaving of the pattern's sequence
 * with each bystander's remaining recorded events (xp_prefix_pick).
 *
 * Ownership: the threads and the pattern are borrowed (the guide keeps
 * them); the projection and the counts are the prefix's own,
 * xp_prefix_release() frees them.
 */
#ifndef AVT_EXPLORE_PREFIX_H
#define AVT_EXPLORE_PREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"

struct xp_prefix {
	const uint32_t *t;        /* the threads to follow */
	size_t n, pos;            /* their number, events of them followed */
	bool off;                 /* left it (or at its end) */
	/* with the pattern threads known: t is their part of the schedule
	 * (proj, owned), the others are bystanders */
	const uint32_t *pattern;
	size_t npattern;
	uint32_t *proj;
	const struct xp_rec *rec;
	uint32_t *made;           /* events per thread in this run */
	size_t nmade;
	struct xp_rng rng;        /* the bystanders' draws: their own stream */
};

/* Follows t[0..n) (borrowed) as it is. */
void xp_prefix_init(struct xp_prefix *p, const uint32_t *t, size_t n);
/* Follows the part of t[0..n) made by pattern[0..npattern) (both
 * borrowed), bystanders at random (drawn from seed and run_index, with
 * their remaining events counted in rec).  -1 after avt_error(). */
int xp_prefix_init_pattern(struct xp_prefix *p, const uint32_t *t, size_t n, const uint32_t *pattern,
			   size_t npattern, const struct xp_rec *rec, uint64_t seed, uint64_t run_index);
void xp_prefix_release(struct xp_prefix *p);
/* Still on it: the next pick is the prefix's. */
bool xp_prefix_on(const struct xp_prefix *p);
/* After every event of the run: lid made it.  A thread other than the
 * one named next (a pattern thread, when the pattern is known) leaves
 * the prefix.  -1 after avt_error() (out of memory). */
int xp_prefix_event(struct xp_prefix *p, uint32_t lid);
/* While on it, the index in lids[0..n) of the thread it names next (or,
 * with the pattern known, of that thread or a bystander, drawn); n when
 * none can run, and the prefix is then left. */
size_t xp_prefix_pick(struct xp_prefix *p, const uint32_t *lids, size_t n);
/* The same without leaving it: n when its thread cannot run now (the
 * event of another thread will leave it). */
size_t xp_prefix_find(const struct xp_prefix *p, const uint32_t *lids, size_t n);

#endif
