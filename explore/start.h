/*
 * What explore has learnt so far, and where runs may start (start.c):
 * the reads-from pairs seen and the targets tried (guided's feedback),
 * and the starting points every policy may follow (prefix.c).
 *
 * Ownership: struct xp_guide copies what it is given; it borrows the
 * recording it was made from for its life.
 */
#ifndef AVT_EXPLORE_START_H
#define AVT_EXPLORE_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/rec.h"

/* What explore has learnt so far, and where runs may start.  Built and
 * changed by the parent between rounds; runs only read it. */
struct xp_guide;

/* rec gives the readers and writers a guided run can pair (borrowed, kept
 * alive by the caller).  NULL after avt_error(). */
struct xp_guide *xp_guide_new(const struct xp_rec *rec);
void xp_guide_free(struct xp_guide *g);
/* Adds keys (any order) to the pairs seen; returns how many were new, -1
 * after avt_error(). */
long xp_guide_add_rf(struct xp_guide *g, const uint64_t *keys, size_t n);
bool xp_guide_seen(const struct xp_guide *g, uint64_t key);
/* Targets (pair keys) a guided run has tried already: not drawn again.
 * xp_policy_target() gives a run's. */
bool xp_guide_tried(const struct xp_guide *g, uint64_t key);
int xp_guide_add_tried(struct xp_guide *g, uint64_t key);
size_t xp_guide_nseen(const struct xp_guide *g);
/* A starting point: the threads of a schedule's first events, in order
 * (the run steps of a prediction, or what a run did).  Starting points
 * from predictions come first: run i (from 1) of any policy follows the
 * i-th of them as far as it can, then goes on by its policy.  Seeds of
 * the corpus (from_prediction false) are guided's: a guided run may
 * follow a prefix of one.  The corpus keeps at most XP_GUIDE_CORPUS
 * seeds (the first ones).  -1 after avt_error(). */
#define XP_GUIDE_CORPUS 64u
/* Guided runs are forked in rounds of this many: a round sees the
 * feedback of every earlier round and none of its own (explore.c). */
#define XP_GUIDE_ROUND 4u
int xp_guide_add_start(struct xp_guide *g, const uint32_t *threads, size_t n, bool from_prediction);
/* The same, for a prediction whose pattern names the threads pattern[0..
 * npattern): a run that starts there keeps the order of those threads'
 * events in the prefix and places every other thread (a bystander) at
 * random among them, a uniform interleaving of the pattern's sequence
 * with each bystander's remaining recorded events, instead of where the
 * recording had it (prefix.c, xp_prefix_pick). */
int xp_guide_add_prediction(struct xp_guide *g, const uint32_t *threads, size_t n, bool from_prediction,
			    const uint32_t *pattern, size_t npattern);
size_t xp_guide_npredicted(const struct xp_guide *g);
size_t xp_guide_ncorpus(const struct xp_guide *g);

/* The threads of the i-th starting point from predictions. */
const uint32_t *xp_guide_predicted(const struct xp_guide *g, size_t i, size_t *n);
/* Its pattern threads (NULL, 0: not known; the prefix is then followed
 * as it is). */
const uint32_t *xp_guide_pattern(const struct xp_guide *g, size_t i, size_t *n);

/* The threads of the i-th seed of the corpus. */
const uint32_t *xp_guide_corpus(const struct xp_guide *g, size_t i, size_t *n);

/* A reads-from pair a guided run may aim at: a reader of the recording
 * and a writer of another thread on the same object, or the initial
 * value (wthread UINT32_MAX, wsite 0). */
struct xp_pair {
	uint64_t key, obj;
	uint32_t rthread, wthread;
	uint64_t rsite, wsite;
};
/* Draws one on rng, uniformly (a reader, then one of its writers or the
 * initial value), a few tries; with fresh, only a pair no run has shown
 * or tried.  false when none was found (or there are no readers). */
bool xp_guide_draw_pair(const struct xp_guide *g, struct xp_rng *rng, bool fresh, struct xp_pair *out);

#endif
