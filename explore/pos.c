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
 *
 * The races of an event are found through an index of the pending
 * events by object (`struct pos_index`): each thread is in the bucket of
 * its pending event's object, kept in id order, so an event visits the
 * threads pending on its object, in the order a scan of every thread
 * visited them, and draws the same priorities.  A thread's pending event
 * changes only with its own events (xp_look_event) and when it is first
 * known (xp_look_reg), so those are the only updates.  (A scan of every
 * known thread at every event made POS runs of 5,000 threads spend twice
 * the user CPU and run into the run timeout: issues 29, 30,
 * docs/explore.md.)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pos.h"
#include "trace/log.h"

/* The threads whose pending event is on one object, in id order. */
struct pos_bucket {
	uint64_t obj; /* 0: a free slot of the table */
	uint32_t *lids;
	size_t n, cap;
};

/* Open addressing over the objects (a power of two of slots). */
struct pos_index {
	struct pos_bucket *b;
	size_t nslots, used;
};

struct xp_pos {
	struct xp_look look;
	struct pos_index ix;
	uint64_t *pend_obj;    /* by logical id: its pending event's object, or 0 */
	uint16_t *pend_kind;   /* and kind */
	struct xp_rng rng;
	uint64_t seed, run_index;
	uint64_t *prio;        /* by logical id: its pending event's priority */
	unsigned *reassigned;  /* by logical id: redrawn for a race */
	size_t n, cap;
	uint64_t races;        /* redraws for races in all */
	uint64_t visits;       /* threads looked at for races in all */
	size_t *idx;           /* scratch for picks */
	size_t idxcap;
};

static size_t slot_of(uint64_t obj, size_t nslots)
{
	uint64_t h = obj * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (nslots - 1);
}

static int index_grow(struct pos_index *ix)
{
	size_t n = ix->nslots ? ix->nslots * 2 : 64;
	struct pos_bucket *nb = calloc(n, sizeof *nb);
	if (!nb)
		return -1;
	for (size_t i = 0; i < ix->nslots; i++) {
		if (!ix->b[i].obj)
			continue;
		size_t j = slot_of(ix->b[i].obj, n);
		while (nb[j].obj)
			j = (j + 1) & (n - 1);
		nb[j] = ix->b[i];
	}
	free(ix->b);
	ix->b = nb;
	ix->nslots = n;
	return 0;
}

/* The bucket of obj (made if make), or NULL. */
static struct pos_bucket *index_find(struct pos_index *ix, uint64_t obj, bool make)
{
	if (make && (ix->used + 1) * 2 > ix->nslots && index_grow(ix) < 0)
		return NULL;
	if (!ix->nslots)
		return NULL;
	size_t j = slot_of(obj, ix->nslots);
	while (ix->b[j].obj && ix->b[j].obj != obj)
		j = (j + 1) & (ix->nslots - 1);
	if (ix->b[j].obj == obj)
		return &ix->b[j];
	if (!make)
		return NULL;
	ix->b[j].obj = obj;
	ix->used++;
	return &ix->b[j];
}

static void index_release(struct pos_index *ix)
{
	for (size_t i = 0; i < ix->nslots; i++)
		free(ix->b[i].lids);
	free(ix->b);
}

/* Where lid stands in b (or would be inserted): buckets are in id order. */
static size_t bucket_pos(const struct pos_bucket *b, uint32_t lid)
{
	size_t lo = 0, hi = b->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->lids[mid] < lid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* lid's pending event is now what xp_look_next says: move it to the
 * bucket of that event's object.  -1 out of memory. */
static int pos_repend(struct xp_pos *p, uint32_t lid)
{
	const struct xp_rev *next = xp_look_next(&p->look, lid);
	uint64_t obj = next ? xp_event_obj(next->kind, next->obj) : 0;
	if (p->pend_obj[lid] && p->pend_obj[lid] != obj) {
		struct pos_bucket *old = index_find(&p->ix, p->pend_obj[lid], false);
		BUG_ON(!old);
		size_t k = bucket_pos(old, lid);
		BUG_ON(k >= old->n || old->lids[k] != lid);
		memmove(old->lids + k, old->lids + k + 1, (old->n - k - 1) * sizeof *old->lids);
		old->n--;
	}
	p->pend_kind[lid] = next ? next->kind : 0;
	if (!obj || p->pend_obj[lid] == obj) {
		p->pend_obj[lid] = obj;
		return 0;
	}
	p->pend_obj[lid] = 0;
	struct pos_bucket *b = index_find(&p->ix, obj, true);
	if (!b)
		return -1;
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 4;
		uint32_t *nl = realloc(b->lids, ncap * sizeof *nl);
		if (!nl)
			return -1;
		b->lids = nl;
		b->cap = ncap;
	}
	size_t k = bucket_pos(b, lid);
	memmove(b->lids + k + 1, b->lids + k, (b->n - k) * sizeof *b->lids);
	b->lids[k] = lid;
	b->n++;
	p->pend_obj[lid] = obj;
	return 0;
}

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
		uint64_t *no = realloc(p->pend_obj, ncap * sizeof *no);
		if (!no)
			goto oom;
		p->pend_obj = no;
		uint16_t *nk = realloc(p->pend_kind, ncap * sizeof *nk);
		if (!nk)
			goto oom;
		p->pend_kind = nk;
		p->cap = ncap;
	}
	/* in id order: a thread's first priority depends on its id only */
	while (p->n <= lid) {
		p->prio[p->n] = xp_rng_next(&p->rng) | 1;
		p->reassigned[p->n] = 0;
		p->pend_obj[p->n] = 0;
		if (pos_repend(p, (uint32_t)p->n) < 0)
			goto oom;
		p->n++;
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
	index_release(&p->ix);
	free(p->prio);
	free(p->reassigned);
	free(p->pend_obj);
	free(p->pend_kind);
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
	if (pos_repend(p, ev->thread) < 0) {
		avt_error("explore: out of memory");
		return -1;
	}
	p->prio[ev->thread] = xp_rng_next(&p->rng) | 1;
	uint64_t obj = xp_event_obj(ev->kind, ev->obj);
	if (!obj)
		return 0;
	/* the threads pending on obj, in id order: the draws of a scan of
	 * every thread, without the scan */
	const struct pos_bucket *b = index_find(&p->ix, obj, false);
	for (size_t i = 0; b && i < b->n; i++) {
		uint32_t u = b->lids[i];
		p->visits += u != ev->thread;
		if (u == ev->thread || !xp_conflict(ev->kind, ev->obj, p->pend_kind[u], obj))
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

uint64_t xp_pos_visits(const struct xp_pos *p)
{
	return p->visits;
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
