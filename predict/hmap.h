/*
 * A small open-addressing multimap from 64-bit keys to 32-bit values, for
 * the detectors' per-(thread, lock) state and dedupe tables.  A key may be
 * stored several times (callers that hash a larger key compare the rest
 * themselves), or once and replaced (pr_hmap_set: a map); entries are
 * never removed.
 *
 * Ownership: struct pr_hmap owns its arrays (pr_hmap_release()).
 */
#ifndef AVT_PREDICT_HMAP_H
#define AVT_PREDICT_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pr_hmap {
	uint64_t *key;
	uint32_t *val;   /* value + 1; 0 marks a free slot */
	size_t cap, n;
};

void pr_hmap_init(struct pr_hmap *h);
void pr_hmap_release(struct pr_hmap *h);
/* Adds (key, val); val must be below UINT32_MAX.  0, or -1 if out of
 * memory. */
int pr_hmap_add(struct pr_hmap *h, uint64_t key, uint32_t val);
/* Sets the first value under key to val (below UINT32_MAX), or adds
 * (key, val).  0, or -1 if out of memory. */
int pr_hmap_set(struct pr_hmap *h, uint64_t key, uint32_t val);
/* Values stored under key, one per call: start with *pos = 0; false when
 * there are no more. */
bool pr_hmap_next(const struct pr_hmap *h, uint64_t key, size_t *pos, uint32_t *val);
/* The first value under key, or UINT32_MAX. */
uint32_t pr_hmap_get(const struct pr_hmap *h, uint64_t key);
/* A well-mixed hash of a 64-bit value (for composing keys); inline, as
 * most look-ups are a hash and one probe. */
static inline uint64_t pr_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
