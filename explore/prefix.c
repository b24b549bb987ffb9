/*
 * Following a starting point (prefix.h).
 */
#include <stdlib.h>
#include <string.h>

#include "prefix.h"
#include "trace/log.h"

void xp_prefix_init(struct xp_prefix *p, const uint32_t *t, size_t n)
{
	memset(p, 0, sizeof *p);
	p->t = t;
	p->n = n;
}

static bool in_pattern(const struct xp_prefix *p, uint32_t lid)
{
	for (size_t i = 0; i < p->npattern; i++)
		if (p->pattern[i] == lid)
			return true;
	return false;
}

/* The prefix restricted to the pattern's threads; bystanders are placed
 * by follow_pick. */
int xp_prefix_init_pattern(struct xp_prefix *p, const uint32_t *t, size_t n, const uint32_t *pattern,
			   size_t npattern, const struct xp_rec *rec, uint64_t seed, uint64_t run_index)
{
	xp_prefix_init(p, t, n);
	p->pattern = pattern;
	p->npattern = npattern;
	p->proj = malloc((p->n ? p->n : 1) * sizeof *p->proj);
	if (!p->proj) {
		avt_error("explore: out of memory");
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		if (in_pattern(p, p->t[i]))
			p->proj[k++] = p->t[i];
	p->t = p->proj;
	p->n = k;
	p->rec = rec;
	xp_rng_seed_run(&p->rng, seed ^ 0x62797374616e6465ull, run_index); /* "bystande" */
	return 0;
}

void xp_prefix_release(struct xp_prefix *p)
{
	free(p->proj);
	free(p->made);
	p->proj = p->made = NULL;
}

bool xp_prefix_on(const struct xp_prefix *p)
{
	return !p->off && p->pos < p->n;
}

static int count_made(struct xp_prefix *p, uint32_t lid)
{
	if (lid >= p->nmade) {
		size_t ncap = p->nmade ? p->nmade : 16;
		while (ncap <= lid)
			ncap *= 2;
		uint32_t *nm = realloc(p->made, ncap * sizeof *nm);
		if (!nm) {
			avt_error("explore: out of memory");
			return -1;
		}
		memset(nm + p->nmade, 0, (ncap - p->nmade) * sizeof *nm);
		p->made = nm;
		p->nmade = ncap;
	}
	p->made[lid]++;
	return 0;
}

int xp_prefix_event(struct xp_prefix *p, uint32_t lid)
{
	if (p->pattern && count_made(p, lid) < 0)
		return -1;
	if (xp_prefix_on(p)) {
		if (p->t[p->pos] == lid)
			p->pos++;
		else if (!p->pattern || in_pattern(p, lid))
			p->off = true; /* off the prefix: it is over */
	}
	return 0;
}

static uint64_t remaining(const struct xp_prefix *p, uint32_t lid)
{
	size_t rec = p->rec ? xp_rec_count(p->rec, lid) : 0;
	uint32_t made = lid < p->nmade ? p->made[lid] : 0;
	return rec > made ? rec - made : 1; /* runnable: one at least */
}

static uint64_t follow_weight(const struct xp_prefix *p, uint32_t lid)
{
	if (lid == p->t[p->pos])
		return p->n - p->pos;
	return in_pattern(p, lid) ? 0 : remaining(p, lid);
}

/* While a pattern prefix is followed: the thread it names next, or a
 * bystander, drawn with probability proportional to what each has left
 * (the rest of the pattern's sequence for the one it names, a
 * bystander's remaining recorded events), so that every interleaving of
 * the bystanders with the pattern is equally likely.  A pattern thread
 * out of its turn waits.  n when no thread qualifies: the prefix ends. */
static size_t follow_pick(struct xp_prefix *p, const uint32_t *lids, size_t n)
{
	uint64_t total = 0, r;
	for (size_t i = 0; i < n; i++)
		total += follow_weight(p, lids[i]);
	if (!total)
		return n;
	r = xp_rng_below(&p->rng, total);
	for (size_t i = 0; i < n; i++) {
		uint64_t w = follow_weight(p, lids[i]);
		if (r < w)
			return i;
		r -= w;
	}
	return n;
}

size_t xp_prefix_find(const struct xp_prefix *p, const uint32_t *lids, size_t n)
{
	if (xp_prefix_on(p))
		for (size_t i = 0; i < n; i++)
			if (lids[i] == p->t[p->pos])
				return i;
	return n;
}

size_t xp_prefix_pick(struct xp_prefix *p, const uint32_t *lids, size_t n)
{
	size_t i;

	if (!xp_prefix_on(p))
		return n;
	/* a pattern: its thread or a bystander; else only its thread */
	i = p->pattern ? follow_pick(p, lids, n) : xp_prefix_find(p, lids, n);
	if (i == n)
		p->off = true; /* no thread it allows can run: the prefix ends */
	return i;
}
