/*
 * SideTrack over transactions (sidetrack.h).
 *
 * The paper's analysis state maps onto this pass as follows: C (current
 * clocks) is the model's clocks, compared one component at a time because
 * each test asks whether one event is in a clock's past; A (last acquire),
 * R (last release) and V (last window) are per-lock fields below; H and I
 * (locks held in, and interfering with, the current transaction) become
 * per-(thread, lock) state: the previous acquisition of the lock in the
 * same transaction and the concurrent acquisition seen when it was made.
 * Windows are consecutive acquisitions, so a transaction that takes a lock
 * three times has two windows, each checked on its own.
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "predict.h"
#include "sidetrack.h"
#include "trace/log.h"
#include "txn.h"

struct lockst {
	uint32_t acq;     /* A: last acquisition (any thread) */
	uint32_t rel;     /* R: last release */
	uint32_t relcs;   /* the acquisition that opened R's critical section */
	uint32_t w1, w3;  /* V: the last window's acquisitions, or PR_NONE */
	uint32_t nblame;
	struct predict_site blame[4];
};

/* One thread's dealings with one lock. */
struct tlst {
	uint32_t prev;    /* previous acquisition, or PR_NONE */
	uint32_t seg;     /* boundary count of the thread at prev */
	uint32_t modseg;  /* module-run count at prev */
	uint32_t block;   /* explicit atomic block at prev, 0 = none */
	uint32_t conc;    /* acquisition concurrent with prev, or PR_NONE */
	uint32_t open;    /* acquisition of the critical section now open */
};

struct thst {
	uint32_t seg, modseg, lastmod;
	uint32_t depth, block;   /* begin/end nesting, current block id */
	uint32_t begin;          /* begin event of the current block */
};

struct st {
	const struct pr_model *m;
	struct pr_txn *txn;
	struct pr_cands *cs;
	struct lockst *locks;
	struct thst *thr;
	struct tlst *tl;
	size_t ntl, tlcap;
	struct pr_hmap tlmap;    /* (thread, lock) -> index in tl */
	uint32_t nblocks;
};

static struct tlst *tl_get(struct st *s, uint32_t t, uint32_t l)
{
	uint64_t key = (uint64_t)t << 32 | l;
	uint32_t i = pr_hmap_get(&s->tlmap, key);
	if (i != UINT32_MAX)
		return &s->tl[i];
	if (s->ntl == s->tlcap) {
		size_t ncap = s->tlcap ? s->tlcap * 2 : 64;
		struct tlst *n = realloc(s->tl, ncap * sizeof *n);
		if (!n)
			goto oom;
		s->tl = n;
		s->tlcap = ncap;
	}
	if (pr_hmap_add(&s->tlmap, key, (uint32_t)s->ntl) < 0)
		goto oom;
	s->tl[s->ntl] = (struct tlst){ PR_NONE, 0, 0, 0, PR_NONE, PR_NONE };
	return &s->tl[s->ntl++];
oom:
	avt_error("cannot predict: out of memory");
	return NULL;
}

/* Two critical sections on an rwlock interfere unless all are reads. */
static bool conflict(const struct pr_model *m, uint32_t c, uint32_t a, uint32_t b)
{
	return pr_acq_mode(pr_ev(m, c)) == PR_EXCL || pr_acq_mode(pr_ev(m, a)) == PR_EXCL ||
	       pr_acq_mode(pr_ev(m, b)) == PR_EXCL;
}

static int report(struct st *s, enum pr_pattern pat, uint32_t e1, uint32_t e2, uint32_t e3,
		  const struct predict_site *blame, uint32_t nblame)
{
	const struct pr_model *m = s->m;
	struct pr_cand c;
	memset(&c, 0, sizeof c);
	c.det = PR_DET_SIDETRACK;
	c.pat = pat;
	c.nthr = 2;
	c.thr[0] = pr_ev(m, e1)->thread;
	c.thr[1] = pr_ev(m, e2)->thread;
	c.nev = 3;
	c.ev[0] = e1;
	c.ev[1] = e2;
	c.ev[2] = e3;
	c.nlock = 1;
	c.lock[0] = m->lock[e1];
	c.nblame = nblame;
	memcpy(c.blame, blame, nblame * sizeof *blame);
	c.order = e1 < e2 ? e1 : e2;
	return pr_cands_add(s->cs, &c) < 0 ? -1 : 0;
}

/* After-window: acquisition x by another thread than the last window's,
 * which the window does not happen before. */
static int check_after(struct st *s, uint32_t x)
{
	const struct pr_model *m = s->m;
	struct lockst *L = &s->locks[m->lock[x]];
	if (L->w3 == PR_NONE || pr_ev(m, L->w3)->thread == pr_ev(m, x)->thread)
		return 0;
	if (pr_hb_pre(m, L->w3, x) || !conflict(m, x, L->w1, L->w3))
		return 0;
	return report(s, PR_PAT_AFTER, L->w1, x, L->w3, L->blame, L->nblame);
}

/* A window (a, b) of thread t on lock l: before- and in-window checks,
 * then it becomes the lock's last window. */
static int window(struct st *s, const struct tlst *tl, uint32_t b,
		  const struct predict_site *blame, uint32_t nblame)
{
	const struct pr_model *m = s->m;
	uint32_t a = tl->prev, t = pr_ev(m, b)->thread;
	struct lockst *L = &s->locks[m->lock[b]];
	if (tl->conc != PR_NONE && conflict(m, tl->conc, a, b) &&
	    report(s, PR_PAT_BEFORE, a, tl->conc, b, blame, nblame) < 0)
		return -1;
	if (L->rel != PR_NONE && pr_ev(m, L->rel)->thread != t && L->relcs != PR_NONE &&
	    !pr_hb_pre(m, L->rel, b) && conflict(m, L->relcs, a, b) &&
	    report(s, PR_PAT_IN, a, L->relcs, b, blame, nblame) < 0)
		return -1;
	L->w1 = a;
	L->w3 = b;
	L->nblame = nblame;
	memcpy(L->blame, blame, nblame * sizeof *blame);
	return 0;
}

/* Are the thread's previous acquisition and b the ends of a window? */
static bool is_window(struct st *s, const struct tlst *tl, uint32_t b,
		      struct predict_site *blame, uint32_t *nblame)
{
	const struct thst *th = &s->thr[pr_ev(s->m, b)->thread];
	*nblame = 0;
	if (tl->prev == PR_NONE || tl->seg != th->seg)
		return false;
	if (th->block && tl->block == th->block) {
		const struct avt_event *bg = pr_ev(s->m, th->begin);
		blame[0].mod = bg->site_mod;
		blame[0].off = bg->site_off;
		*nblame = 1;
		return true;
	}
	if (!pr_txn_stacked(s->txn, tl->prev, b) && tl->modseg != th->modseg)
		return false;
	return pr_txn_window(s->txn, tl->prev, b, blame, nblame);
}

static int on_acquire(struct st *s, uint32_t x)
{
	const struct pr_model *m = s->m;
	uint32_t t = pr_ev(m, x)->thread, l = m->lock[x];
	struct lockst *L = &s->locks[l];
	struct tlst *tl = tl_get(s, t, l);
	struct predict_site blame[4];
	uint32_t nblame;
	if (!tl || check_after(s, x) < 0)
		return -1;
	uint32_t conc = PR_NONE;
	if (L->acq != PR_NONE && pr_ev(m, L->acq)->thread != t && !pr_hb_pre(m, L->acq, x))
		conc = L->acq;
	if (is_window(s, tl, x, blame, &nblame) && window(s, tl, x, blame, nblame) < 0)
		return -1;
	const struct thst *th = &s->thr[t];
	*tl = (struct tlst){ x, th->seg, th->modseg, th->depth ? th->block : 0, conc, x };
	L->acq = x;
	return 0;
}

static int on_release(struct st *s, uint32_t x)
{
	const struct pr_model *m = s->m;
	uint32_t t = pr_ev(m, x)->thread, l = m->lock[x];
	struct tlst *tl = tl_get(s, t, l);
	if (!tl)
		return -1;
	s->locks[l].rel = x;
	s->locks[l].relcs = tl->open;
	tl->open = PR_NONE;
	return 0;
}

/* Boundaries, module runs and explicit blocks of thread t at event x. */
static void track_thread(struct st *s, uint32_t x)
{
	const struct avt_event *e = pr_ev(s->m, x);
	struct thst *th = &s->thr[e->thread];
	if (pr_txn_boundary(e)) {
		th->seg++;
		th->modseg++;
	}
	if (pr_txn_has_site(e)) {
		if (th->lastmod != PR_NONE && th->lastmod != e->site_mod)
			th->modseg++;
		th->lastmod = e->site_mod;
	}
	if (e->kind == AVT_EV_BEGIN && th->depth++ == 0) {
		th->block = ++s->nblocks;
		th->begin = x;
	}
	if (e->kind == AVT_EV_END && th->depth > 0 && --th->depth == 0)
		th->block = 0;
}

static int pass(struct st *s)
{
	const struct pr_model *m = s->m;
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		if (!(x & PR_STOP_EVERY) && pr_stopped())
			return 0;
		track_thread(s, x);
		if (pr_is_acquire(e) && on_acquire(s, x) < 0)
			return -1;
		if (pr_is_release(e) && on_release(s, x) < 0)
			return -1;
	}
	return 0;
}

int pr_sidetrack(const struct pr_model *m, struct pr_cands *cs, const struct predict_opts *o)
{
	struct st s;
	int rc = -1;
	memset(&s, 0, sizeof s);
	s.m = m;
	s.cs = cs;
	pr_hmap_init(&s.tlmap);
	s.txn = pr_txn_new(m);
	if (!s.txn)
		goto out;
	if (o && o->atomic) {
		s.txn->atomic = o->atomic;
		s.txn->atomic_ctx = o->atomic_ctx;
	}
	s.locks = malloc((m->nobjs ? m->nobjs : 1) * sizeof *s.locks);
	s.thr = calloc(m->nthreads, sizeof *s.thr);
	if (!s.locks || !s.thr) {
		avt_error("cannot predict: out of memory");
		goto out;
	}
	for (uint32_t l = 0; l < m->nobjs; l++)
		s.locks[l] = (struct lockst){ PR_NONE, PR_NONE, PR_NONE, PR_NONE, PR_NONE, 0, { { 0, 0 } } };
	for (uint32_t u = 0; u < m->nthreads; u++)
		s.thr[u].lastmod = PR_NONE;
	rc = pass(&s);
out:
	pr_txn_free(s.txn);
	pr_hmap_release(&s.tlmap);
	free(s.locks);
	free(s.thr);
	free(s.tl);
	return rc;
}
