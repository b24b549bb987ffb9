/*
 * Reads-from guided search (after RFF, "Greybox Fuzzing for Concurrency
 * Testing", ASPLOS'24), over a serializing scheduler.
 *
 * Feedback.  A run's reads-from relation is, for each event that reads an
 * object, the last event that wrote it (xp_rf_keys(); locks count: an
 * acquire reads the lock from the release before it).  Events are
 * abstracted to (thread, site, object), so a pair says "T2's read at
 * vec.c:40 of n saw T1's write at vec.c:17", or "saw the initial value".
 * The parent keeps every pair seen (the recording's and every finished
 * run's) in struct xp_guide, and a corpus of runs that showed a pair for
 * the first time.
 *
 * A run.  Each guided run draws a *target*: a reader of the recording and
 * a writer of another thread on the same object (or none: the initial
 * value).  From scratch, a pair no run has shown or tried (a few tries;
 * none found: no target); after the prefix of a corpus seed, any pair, so
 * that the seed's new pair and the target combine (a lost update needs
 * two reads of the same value).  The run then prefers, in this order:
 *   1. the prefix of a corpus seed (a uniformly drawn seed, a uniformly
 *      drawn length; only if the corpus is not empty and a coin says so),
 *      thread by thread, as long as the run stays on it;
 *   2. the target: a thread about to make the target write while the
 *      reader has not read yet is boosted, and so is the reader once that
 *      write is the last one; the reader is delayed while another write is
 *      the last, and so is any other writer of the object once the target
 *      write is the last (it would overwrite it before the read);
 *   3. otherwise POS (pos.c) decides, so that the rest of the run is
 *      sampled as a baseline run would be.
 * A delayed thread still runs when nothing else can.  The target holds
 * until the reader has made its read, whatever it saw.
 *
 * Rounds.  explore.c forks runs in rounds of XP_GUIDE_ROUND and folds the
 * feedback of a round into the guide, in run order, before the next round
 * starts, so run i depends only on the seed and on runs of earlier
 * rounds: -j does not change what a run does.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "guided.h"
#include "pos.h"
#include "prefix.h"
#include "rf.h"
#include "start.h"
#include "trace/log.h"

/* ---- kinds and keys */

/* ---- a guided run */

enum { G_DELAY, G_NORMAL, G_BOOST };

struct xp_guided {
	struct xp_pos *pos;       /* the baseline that decides the rest */
	struct xp_look look;
	struct xp_rng rng;
	uint64_t seed, run_index;
	struct xp_prefix prefix;  /* of a corpus seed */
	long seed_no;             /* -1: none */
	/* the target */
	bool has_target, target_done;
	uint64_t target;          /* its key */
	uint64_t obj;
	uint32_t rthread, wthread;
	uint64_t rsite, wsite;    /* wthread UINT32_MAX: the initial value */
	uint64_t last_w;          /* abs_id of obj's last writer in this run, 0 none */
	size_t *idx;
	size_t idxcap;
};

/* A reader and a writer of another thread of the same object (or the
 * initial value): from scratch, a pair no run has shown or tried; after a
 * seed's prefix any pair, to combine with the seed's (the pair it showed
 * first may need a second one beside it). */
static void draw_target(struct xp_guided *gr, const struct xp_guide *g)
{
	struct xp_pair p;

	if (!xp_guide_draw_pair(g, &gr->rng, gr->seed_no < 0, &p))
		return;
	gr->target = p.key;
	gr->has_target = true;
	gr->obj = p.obj;
	gr->rthread = p.rthread;
	gr->rsite = p.rsite;
	gr->wthread = p.wthread;
	gr->wsite = p.wsite;
}

struct xp_guided *xp_guided_new(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	struct xp_guided *gr = calloc(1, sizeof *gr);
	const struct xp_guide *g = c->guide;

	if (!gr) {
		avt_error("explore: out of memory");
		return NULL;
	}
	xp_look_init(&gr->look, c->rec, c->yield_limit);
	gr->seed = seed;
	gr->run_index = run_index;
	gr->seed_no = -1;
	/* its own stream, apart from the POS baseline's */
	xp_rng_seed_run(&gr->rng, seed ^ 0x6775696465640000ull, run_index);
	gr->pos = xp_pos_new(c, seed, run_index);
	if (!gr->pos) {
		xp_guided_free(gr);
		return NULL;
	}
	if (xp_guide_ncorpus(g) && xp_rng_below(&gr->rng, 2)) {
		size_t s = (size_t)xp_rng_below(&gr->rng, xp_guide_ncorpus(g)), n;
		const uint32_t *t = xp_guide_corpus(g, s, &n);
		gr->seed_no = (long)s;
		xp_prefix_init(&gr->prefix, t, (size_t)xp_rng_below(&gr->rng, n + 1));
	}
	draw_target(gr, g);
	return gr;
}

void xp_guided_free(struct xp_guided *gr)
{
	if (!gr)
		return;
	xp_pos_free(gr->pos);
	xp_look_release(&gr->look);
	xp_prefix_release(&gr->prefix);
	free(gr->idx);
	free(gr);
}

int xp_guided_event(struct xp_guided *gr, const struct avt_event *ev)
{
	(void)xp_prefix_event(&gr->prefix, ev->thread); /* no pattern: never fails */
	uint64_t obj = xp_event_obj(ev->kind, ev->obj);
	if (gr->has_target && obj == gr->obj) {
		uint64_t site = xp_site(ev);
		if (!gr->target_done && ev->thread == gr->rthread && site == gr->rsite &&
		    xp_kind_reads(ev->kind))
			gr->target_done = true;
		if (xp_kind_writes(ev->kind))
			gr->last_w = xp_rf_event(ev->thread, site);
	}
	if (xp_look_event(&gr->look, ev) < 0)
		return -1;
	return xp_pos_event(gr->pos, ev);
}

static int klass(const struct xp_guided *gr, uint32_t lid)
{
	const struct xp_rev *next = xp_look_next(&gr->look, lid);
	uint64_t want = gr->wthread == UINT32_MAX ? 0 : xp_rf_event(gr->wthread, gr->wsite);

	if (!gr->has_target || gr->target_done || !next || next->obj != gr->obj)
		return G_NORMAL;
	bool is_reader = lid == gr->rthread && next->site == gr->rsite && xp_kind_reads(next->kind);
	bool is_writer = want && lid == gr->wthread && next->site == gr->wsite &&
			 xp_kind_writes(next->kind);
	if (is_reader)
		return gr->last_w == want ? G_BOOST : G_DELAY;
	if (is_writer && gr->last_w != want)
		return G_BOOST;
	if (xp_kind_writes(next->kind) && gr->last_w == want)
		return G_DELAY;
	return G_NORMAL;
}

size_t xp_guided_pick(struct xp_guided *gr, const uint32_t *lids, size_t n)
{
	uint32_t max = 0;
	size_t k, best = n;
	int bestk = -1;

	BUG_ON(n == 0);
	for (size_t i = 0; i < n; i++)
		if (lids[i] > max)
			max = lids[i];
	if (xp_look_reg(&gr->look, max) < 0)
		return n;
	if ((best = xp_prefix_find(&gr->prefix, lids, n)) < n)
		return best;
	if (gr->idxcap < n) {
		size_t *ni = realloc(gr->idx, n * sizeof *ni);
		if (!ni) {
			avt_error("explore: out of memory");
			return n;
		}
		gr->idx = ni;
		gr->idxcap = n;
	}
	k = xp_look_candidates(&gr->look, lids, n, gr->idx);
	/* the best class present; POS's priorities decide inside it */
	for (size_t i = 0; i < k; i++) {
		int c = klass(gr, lids[gr->idx[i]]);
		if (c > bestk ||
		    (c == bestk && xp_pos_priority(gr->pos, lids[gr->idx[i]]) >
				   xp_pos_priority(gr->pos, lids[best]))) {
			bestk = c;
			best = gr->idx[i];
		}
	}
	return best;
}

void xp_guided_yield(struct xp_guided *gr, uint32_t lid)
{
	(void)xp_look_yield(&gr->look, lid);
	xp_pos_yield(gr->pos, lid);
}

uint64_t xp_guided_target(const struct xp_guided *gr)
{
	return gr->has_target ? gr->target : 0;
}

void xp_guided_describe(const struct xp_guided *gr, char *buf, size_t len)
{
	size_t used = 0;

	if (len > 0)
		buf[0] = '\0';
	xp_put(buf, len, &used, "guided seed=%" PRIu64 " run=%" PRIu64, gr->seed, gr->run_index);
	if (gr->seed_no >= 0)
		xp_put(buf, len, &used, " from corpus#%ld/%zu", gr->seed_no, gr->prefix.n);
	if (!gr->has_target) {
		xp_put(buf, len, &used, " target none");
		return;
	}
	xp_put(buf, len, &used, " target %#" PRIx64 " T%u@%#" PRIx64 "<-", gr->obj, gr->rthread,
	       gr->rsite);
	if (gr->wthread == UINT32_MAX)
		xp_put(buf, len, &used, "init");
	else
		xp_put(buf, len, &used, "T%u@%#" PRIx64, gr->wthread, gr->wsite);
	xp_put(buf, len, &used, gr->target_done ? " reached" : " pending");
}

/* ---- the policy's verbs (xp.h) */

static void *guided_new_op(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	return xp_guided_new(c, seed, run_index);
}

static int guided_event_op(void *run, const struct avt_event *ev)
{
	return xp_guided_event(run, ev);
}

static size_t guided_pick_op(void *run, const uint32_t *lids, size_t n)
{
	return xp_guided_pick(run, lids, n);
}

static void guided_yield_op(void *run, uint32_t lid)
{
	xp_guided_yield(run, lid);
}

static void guided_describe_op(const void *run, char *buf, size_t len)
{
	xp_guided_describe(run, buf, len);
}

static uint64_t guided_target_op(const void *run)
{
	return xp_guided_target(run);
}

static void guided_free_op(void *run)
{
	xp_guided_free(run);
}

const struct xp_policy_ops xp_guided_ops = {
	.new = guided_new_op,
	.event = guided_event_op,
	.pick = guided_pick_op,
	.yield = guided_yield_op,
	.describe = guided_describe_op,
	.target = guided_target_op,
	.free = guided_free_op,
};
