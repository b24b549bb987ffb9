/*
 * POS, partial-order sampling (Yuan, Yang, Gu, "Partial Order Aware
 * Concurrency Sampling", CAV'18), over a serializing scheduler.
 *
 * Every pending event has a random priority; the runnable thread whose
 * pending event has the highest runs.  When an event has run, its thread's
 * next pending event gets a fresh priority, and so does every other
 * thread's pending event that *races* with it (same object, not both
 * reads: xp_conflict()).  Events that commute with what ran keep their
 * priorities, which is what makes POS sample partial orders rather than
 * interleavings: two independent events are not reordered for nothing,
 * while each race is decided afresh by a coin.
 *
 * A thread's pending event is the one the recording has at the index of
 * its next event (xp_look_next()); a thread past its recording has no
 * known pending event and races with nothing.  A thread that spins
 * (xp_look_yield) is parked: it runs only when nothing else can, until
 * its next event.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pos.h"
#include "trace/log.h"

struct xp_pos {
	struct xp_look look;
	struct xp_rng rng;
	uint64_t seed, run_index;
	uint64_t *prio;        /* by logical id: its pending event's priority */
	unsigned *reassigned;  /* by logical id: redrawn for a race */
	size_t n, cap;
	uint64_t races;        /* redraws for races in all */
	size_t *idx;           /* scratch for picks */
	size_t idxcap;
};

static int pos_reg(struct xp_pos *p, uint32_t lid)
{
	if (xp_look_reg(&p->look, lid) < 0)
		return -1;
	if (lid < p->n)
		return 0;
	if (lid >= p->cap) {
		size_t ncap = p->cap ? p->cap : 16;
		while (ncap <= lid)
			ncap *= 2;
		uint64_t *np = realloc(p->prio, ncap * sizeof *np);
		if (!np)
			goto oom;
		p->prio = np;
		unsigned *nr = realloc(p->reassigned, ncap * sizeof *nr);
		if (!nr)
			goto oom;
		p->reassigned = nr;
		p->cap = ncap;
	}
	/* in id order: a thread's first priority depends on its id only */
	while (p->n <= lid) {
		p->prio[p->n] = xp_rng_next(&p->rng) | 1;
		p->reassigned[p->n++] = 0;
	}
	return 0;
oom:
	avt_error("explore: out of memory");
	return -1;
}

struct xp_pos *xp_pos_new(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	struct xp_pos *p = calloc(1, sizeof *p);

	if (!p) {
		avt_error("explore: out of memory");
		return NULL;
	}
	xp_look_init(&p->look, c->rec, c->yield_limit);
	p->seed = seed;
	p->run_index = run_index;
	xp_rng_seed_run(&p->rng, seed, run_index);
	if (c->nthreads_est > 0 && pos_reg(p, c->nthreads_est - 1) < 0) {
		xp_pos_free(p);
		return NULL;
	}
	return p;
}

void xp_pos_free(struct xp_pos *p)
{
	if (!p)
		return;
	xp_look_release(&p->look);
	free(p->prio);
	free(p->reassigned);
	free(p->idx);
	free(p);
}

int xp_pos_event(struct xp_pos *p, const struct avt_event *ev)
{
	if (pos_reg(p, ev->thread) < 0)
		return -1;
	if (ev->kind == AVT_EV_CREATE && ev->obj < (1u << 20) && pos_reg(p, (uint32_t)ev->obj) < 0)
		return -1;
	if (xp_look_event(&p->look, ev) < 0)
		return -1;
	p->prio[ev->thread] = xp_rng_next(&p->rng) | 1;
	if (!xp_event_obj(ev->kind, ev->obj))
		return 0;
	for (uint32_t u = 0; u < p->n; u++) {
		const struct xp_rev *next;
		if (u == ev->thread || !(next = xp_look_next(&p->look, u)))
			continue;
		if (!xp_conflict(ev->kind, ev->obj, next->kind, next->obj))
			continue;
		p->prio[u] = xp_rng_next(&p->rng) | 1;
		p->reassigned[u]++;
		p->races++;
	}
	return 0;
}

size_t xp_pos_pick(struct xp_pos *p, const uint32_t *lids, size_t n)
{
	uint32_t max = 0;
	size_t k, best;

	BUG_ON(n == 0);
	for (size_t i = 0; i < n; i++)
		if (lids[i] > max)
			max = lids[i];
	if (pos_reg(p, max) < 0)
		return n;
	if (p->idxcap < n) {
		size_t *ni = realloc(p->idx, n * sizeof *ni);
		if (!ni) {
			avt_error("explore: out of memory");
			return n;
		}
		p->idx = ni;
		p->idxcap = n;
	}
	k = xp_look_candidates(&p->look, lids, n, p->idx);
	best = p->idx[0];
	for (size_t i = 1; i < k; i++)
		if (p->prio[lids[p->idx[i]]] > p->prio[lids[best]])
			best = p->idx[i];
	return best;
}

void xp_pos_yield(struct xp_pos *p, uint32_t lid)
{
	(void)xp_look_yield(&p->look, lid);
}

uint64_t xp_pos_priority(const struct xp_pos *p, uint32_t lid)
{
	return lid < p->n ? p->prio[lid] : 0;
}

unsigned xp_pos_reassigned(const struct xp_pos *p, uint32_t lid)
{
	return lid < p->n ? p->reassigned[lid] : 0;
}

void xp_pos_describe(const struct xp_pos *p, char *buf, size_t len)
{
	size_t used = 0;

	if (len > 0)
		buf[0] = '\0';
	xp_put(buf, len, &used, "pos seed=%" PRIu64 " run=%" PRIu64 " races=%" PRIu64, p->seed,
	       p->run_index, p->races);
	for (size_t i = 0; i < p->look.n; i++)
		if (p->look.t[i].parked)
			xp_put(buf, len, &used, " parked=T%zu", i);
}

/* ---- the policy's verbs (xp.h) */

static void *pos_new_op(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	return xp_pos_new(c, seed, run_index);
}

static int pos_event_op(void *run, const struct avt_event *ev)
{
	return xp_pos_event(run, ev);
}

static size_t pos_pick_op(void *run, const uint32_t *lids, size_t n)
{
	return xp_pos_pick(run, lids, n);
}

static void pos_yield_op(void *run, uint32_t lid)
{
	xp_pos_yield(run, lid);
}

static void pos_describe_op(const void *run, char *buf, size_t len)
{
	xp_pos_describe(run, buf, len);
}

static void pos_free_op(void *run)
{
	xp_pos_free(run);
}

const struct xp_policy_ops xp_pos_ops = {
	.new = pos_new_op,
	.event = pos_event_op,
	.pick = pos_pick_op,
	.yield = pos_yield_op,
	.describe = pos_describe_op,
	.target = NULL,
	.free = pos_free_op,
};
