/*
 * Schedule synthesis (synth.h).
 *
 * The closure: tgt[u] is how many of thread u's events the schedule runs.
 * It starts from region I and the plan's stops and grows to a fixpoint:
 * every event run needs its predecessors run.  For a thread with a dropped
 * edge, the clocks recorded after the drop include that edge, so only the
 * clock before the drop and each later event's own incoming edges are used
 * (pr_cut_clock's reasoning).
 *
 * The order: Kahn's algorithm over the needed events with the kept edges,
 * the extra edges and the lock state as readiness, in recorded order
 * inside region I and "keep the current thread" after it.
 */
#include <stdlib.h>
#include <string.h>

#include "deadlock.h"
#include "penelope.h"
#include "synth.h"
#include "trace/log.h"

struct syn {
	const struct pr_model *m;
	const struct pr_plan *p;
	uint32_t *tgt, *done, *covered, *need;
	uint32_t *cdone;             /* per chain (model.h): its events run */
	uint32_t *owner, *readers;   /* per lock: exclusive holder, readers */
	struct schedule *s;
	uint64_t *budget;
};

static bool is_drop(const struct pr_plan *p, uint32_t e)
{
	for (uint32_t i = 0; i < p->ndrop; i++)
		if (p->drop[i] == e)
			return true;
	return false;
}

static uint32_t first_drop(const struct syn *y, uint32_t u)
{
	uint32_t best = PR_NONE;
	for (uint32_t i = 0; i < y->p->ndrop; i++) {
		const struct avt_event *e = pr_ev(y->m, y->p->drop[i]);
		if (e->thread == u && e->tindex < best)
			best = e->tindex;
	}
	return best;
}

static void join_ref(struct syn *y, uint32_t ref)
{
	pr_ref_join(y->m, ref, y->need);
}

/* Joins into need what thread u's first tgt[u] events require. */
static void cover(struct syn *y, uint32_t u)
{
	const struct pr_model *m = y->m;
	uint32_t fd = first_drop(y, u), k = y->covered[u];
	if (fd == PR_NONE || y->tgt[u] <= fd) {
		uint32_t *tmp = y->need;
		uint32_t e = m->tev[u][y->tgt[u] - 1];
		for (uint32_t v = 0; v < m->nthreads; v++) {
			uint32_t c = pr_vc_at(m, e, v);
			if (c > tmp[v])
				tmp[v] = c;
		}
	} else {
		if (k < fd) {
			if (fd > 0)
				join_ref(y, m->tev[u][fd - 1]);
			k = fd;
		}
		for (; k < y->tgt[u]; k++) {
			uint32_t e = m->tev[u][k];
			if (!is_drop(y->p, e))
				join_ref(y, m->in_lock[e]);
			join_ref(y, m->in_sync[e]);
		}
	}
	if (y->tgt[u] > y->need[u])
		y->need[u] = y->tgt[u];
	y->covered[u] = y->tgt[u];
}

/* Events of u recorded before event p0, cut back to where u held nothing. */
static uint32_t region1(const struct pr_model *m, uint32_t u, uint32_t p0)
{
	uint32_t lo = 0, hi = m->tnev[u];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (m->tev[u][mid] < p0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pr_stretch_start(m, u, lo);
}

static bool raise_edges(struct syn *y)
{
	bool changed = false;
	for (uint32_t i = 0; i < y->p->nedge; i++) {
		const struct avt_event *f = pr_ev(y->m, y->p->edge[i].from);
		const struct avt_event *t = pr_ev(y->m, y->p->edge[i].to);
		if (y->tgt[t->thread] > t->tindex && y->tgt[f->thread] <= f->tindex) {
			y->tgt[f->thread] = f->tindex + 1;
			changed = true;
		}
	}
	return changed;
}

void pr_plan_vars(const struct pr_model *m, const struct pr_cand *c, struct pr_plan *p)
{
	p->nvar = 0;
	for (uint32_t k = 0; k < c->nev; k++) {
		const struct avt_event *e = pr_ev(m, c->ev[k]);
		bool dup = false;
		if (!avt_kind_is_access(e->kind))
			continue;
		for (uint32_t i = 0; i < p->nvar; i++)
			dup |= p->var[i] == e->obj;
		if (!dup && p->nvar < sizeof p->var / sizeof *p->var)
			p->var[p->nvar++] = e->obj;
	}
}

static bool in_plan(const struct pr_plan *p, uint32_t u)
{
	for (uint32_t i = 0; i < p->nthr; i++)
		if (p->thr[i] == u)
			return true;
	return false;
}

static bool plan_var(const struct pr_plan *p, uint64_t obj)
{
	for (uint32_t i = 0; i < p->nvar; i++)
		if (p->var[i] == obj)
			return true;
	return false;
}

/* Whether an event of another thread than u, in region I (recorded before
 * p0) and after event x, reads obj: it saw what u wrote at x (or later),
 * and would see something else without it. */
static bool read_later(const struct syn *y, uint32_t u, uint32_t x, uint64_t obj)
{
	const struct pr_model *m = y->m;
	for (uint32_t e = x + 1; e < y->p->p0 && e < m->nev; e++) {
		const struct avt_event *ev = pr_ev(m, e);
		if (ev->thread != u && ev->obj == obj && avt_kind_reads(ev->kind))
			return true;
	}
	return false;
}

/* A thread outside the pattern (a bystander) runs its region I only up to
 * its first write of a pattern variable that no later event of region I
 * reads: a write the pattern's reads would see in place of the pattern's
 * own (N setters of a and b, one checker: the pattern "T5 writes a, the
 * checker reads a and b, T5 writes b" shows nothing if T1..T4 wrote b
 * before it).  The closure puts the write back when a needed event
 * depends on it.  A write that a later event of region I read stays (that
 * read would see another value), and the search goes on past it: N
 * writers in two stages, where every stage 2 reads stage 1's variable,
 * stop before their stage 2 (acc_twostage). */
/* Writes of a pattern variable a bystander's search looks at, each a pass
 * over region I (read_later): the search stays linear in region I. */
#define SPARE_WRITES 8

static void spare_bystanders(struct syn *y)
{
	const struct pr_model *m = y->m;
	if (!y->p->nvar)
		return;
	for (uint32_t u = 0; u < m->nthreads; u++) {
		if (in_plan(y->p, u))
			continue;
		unsigned looked = 0;
		for (uint32_t k = 0; k < y->tgt[u] && looked < SPARE_WRITES; k++) {
			uint32_t x = m->tev[u][k];
			const struct avt_event *e = pr_ev(m, x);
			if (!avt_kind_writes(e->kind) || !plan_var(y->p, e->obj))
				continue;
			looked++;
			if (!read_later(y, u, x, e->obj)) {
				y->tgt[u] = pr_stretch_start(m, u, k);
				break;
			}
		}
	}
}

#define SPARE_JOIN_PASSES 4

/* A bystander that joins a thread cut short (one that will not have
 * exited) stops before the join: main joining the workers in region I
 * would otherwise pull every spared bystander back whole (100 writers in
 * two stages, main joining the first 50 of them before the pattern).
 * Cuts only shorten; the closure puts a join back when a needed event
 * comes after it. */
static void spare_joiners(struct syn *y)
{
	const struct pr_model *m = y->m;
	bool changed = true;
	/* each pass is linear in region I; a cut joiner that another thread
	 * joins needs one more: a few passes, and the closure keeps what a
	 * longer chain of joiners still needs */
	for (unsigned pass = 0; changed && pass < SPARE_JOIN_PASSES; pass++) {
		changed = false;
		for (uint32_t u = 0; u < m->nthreads; u++) {
			if (in_plan(y->p, u))
				continue;
			for (uint32_t k = 0; k < y->tgt[u]; k++) {
				const struct avt_event *e = pr_ev(m, m->tev[u][k]);
				if (e->kind != AVT_EV_JOIN || e->obj >= m->nthreads ||
				    y->tgt[e->obj] >= m->tnev[e->obj])
					continue;
				y->tgt[u] = pr_stretch_start(m, u, k);
				changed = true;
				break;
			}
		}
	}
}

/* The closure; false if it makes a thread run past its limit. */
static bool closure(struct syn *y)
{
	const struct pr_model *m = y->m;
	const struct pr_plan *p = y->p;
	bool changed = true;
	for (uint32_t u = 0; u < m->nthreads; u++)
		y->tgt[u] = region1(m, u, p->p0);
	spare_bystanders(y);
	spare_joiners(y);
	for (uint32_t i = 0; i < p->nthr; i++)
		if (p->stop[i] != PR_NONE && y->tgt[p->thr[i]] <= p->stop[i])
			y->tgt[p->thr[i]] = p->stop[i] + 1;
	while (changed) {
		changed = raise_edges(y);
		for (uint32_t u = 0; u < m->nthreads; u++)
			if (y->tgt[u] > y->covered[u])
				cover(y, u);
		for (uint32_t u = 0; u < m->nthreads; u++)
			if (y->need[u] > y->tgt[u]) {
				y->tgt[u] = y->need[u];
				changed = true;
			}
	}
	for (uint32_t i = 0; i < p->nthr; i++)
		if (y->tgt[p->thr[i]] > p->limit[i])
			return false;
	return true;
}

/* ---- ordering ---- */

static bool ref_done(const struct syn *y, uint32_t ref)
{
	const struct pr_model *m = y->m;
	if (ref == PR_NONE)
		return true;
	if (!(ref & PR_REF_SNAP)) {
		const struct avt_event *e = pr_ev(m, ref);
		return y->done[e->thread] > e->tindex;
	}
	/* by chains, not threads: a schedule runs a chain's threads in chain
	 * order (a thread's start waits for its create, which comes after the
	 * join of the chain's thread before it, which waits for its exit) */
	for (uint32_t s = 0; s < m->nslots; s++)
		if (pr_ref_slot(m, ref, s) > y->cdone[s])
			return false;
	return true;
}

/* Held by a thread other than u, in a mode that excludes mode. */
static bool held_against(const struct syn *y, uint32_t l, uint32_t u, enum pr_mode mode)
{
	if (y->owner[l] != PR_NONE && y->owner[l] != u)
		return true;
	return mode == PR_EXCL && y->readers[l] > 0;
}

static bool lock_ready(const struct syn *y, uint32_t u, uint32_t x)
{
	const struct avt_event *e = pr_ev(y->m, x);
	if (pr_is_acquire(e))
		return !held_against(y, y->m->lock[x], u, pr_acq_mode(e));
	if (e->kind == AVT_EV_TRYLOCK_FAIL)
		return held_against(y, y->m->lock[x], u, PR_EXCL);
	return true;
}

static bool ready(const struct syn *y, uint32_t u)
{
	const struct pr_model *m = y->m;
	if (y->done[u] >= y->tgt[u])
		return false;
	uint32_t x = m->tev[u][y->done[u]];
	if (!is_drop(y->p, x) && !ref_done(y, m->in_lock[x]))
		return false;
	if (!ref_done(y, m->in_sync[x]))
		return false;
	for (uint32_t i = 0; i < y->p->nedge; i++)
		if (y->p->edge[i].to == x && !ref_done(y, y->p->edge[i].from))
			return false;
	return lock_ready(y, u, x);
}

static int apply(struct syn *y, uint32_t u)
{
	const struct pr_model *m = y->m;
	uint32_t x = m->tev[u][y->done[u]];
	const struct avt_event *e = pr_ev(m, x);
	if (pr_is_acquire(e)) {
		if (pr_acq_mode(e) == PR_EXCL)
			y->owner[m->lock[x]] = u;
		else
			y->readers[m->lock[x]]++;
	} else if (pr_is_release(e)) {
		uint32_t l = m->lock[x];
		if (y->owner[l] == u)
			y->owner[l] = PR_NONE;
		else if (y->readers[l])
			y->readers[l]--;
	}
	y->done[u]++;
	uint32_t s = m->slot[u], c = m->sbase[u] + y->done[u];
	if (c > y->cdone[s])
		y->cdone[s] = c;
	return schedule_append_run(y->s, u, 1);
}

/* The thread whose next needed event is ready and was recorded first. */
static uint32_t pick(const struct syn *y)
{
	uint32_t best = PR_NONE, bestev = PR_NONE;
	for (uint32_t u = 0; u < y->m->nthreads; u++) {
		if (y->done[u] >= y->tgt[u] || y->m->tev[u][y->done[u]] >= bestev)
			continue;
		if (ready(y, u)) {
			best = u;
			bestev = y->m->tev[u][y->done[u]];
		}
	}
	return best;
}

/* 1 when every needed event ran, 0 if stuck or over budget, -1 on error. */
static int order(struct syn *y)
{
	const struct pr_model *m = y->m;
	uint32_t cur = PR_NONE;
	for (uint32_t x = 0; x < y->p->p0 && x < m->nev; x++) {
		uint32_t u = pr_ev(m, x)->thread;
		if (pr_ev(m, x)->tindex != y->done[u] || y->done[u] >= y->tgt[u])
			continue;
		if (!*y->budget || !ready(y, u) || (!(*y->budget & PR_STOP_EVERY) && pr_stopped()))
			return 0;
		--*y->budget;
		if (apply(y, u) < 0)
			return -1;
		cur = u;
	}
	for (;;) {
		if (cur == PR_NONE || !ready(y, cur))
			cur = pick(y);
		if (cur == PR_NONE)
			break;
		if (!*y->budget || (!(*y->budget & PR_STOP_EVERY) && pr_stopped()))
			return 0;
		--*y->budget;
		if (apply(y, cur) < 0)
			return -1;
	}
	for (uint32_t u = 0; u < m->nthreads; u++)
		if (y->done[u] < y->tgt[u])
			return 0;
	return 1;
}

/* ---- the deadlocking request ---- */

/* Thread u certainly cannot take a step in replay now. */
static bool blocked(const struct syn *y, uint32_t u)
{
	const struct pr_model *m = y->m;
	if (y->done[u] >= m->tnev[u])
		return true;
	uint32_t x = m->tev[u][y->done[u]];
	const struct avt_event *e = pr_ev(m, x);
	if (e->kind == AVT_EV_START)
		return u != 0 && m->in_sync[x] != PR_NONE && !ref_done(y, m->in_sync[x]);
	if (pr_is_acquire(e) && held_against(y, m->lock[x], u, pr_acq_mode(e)))
		return true;
	if (e->kind == AVT_EV_JOIN || (e->flags & AVT_F_COND_WAKE))
		return m->in_sync[x] != PR_NONE && !ref_done(y, m->in_sync[x]);
	return false;
}

static int final_request(struct syn *y)
{
	const struct pr_plan *p = y->p;
	if (p->final < 0)
		return 0;
	uint32_t t = p->thr[p->final];
	if (!blocked(y, t) || y->done[t] >= y->m->tnev[t])
		return 0;
	for (uint32_t u = 0; u < y->m->nthreads; u++)
		if (u != t && !blocked(y, u))
			return 0; /* `free` will reach the deadlock instead */
	return schedule_append_run(y->s, t, 1);
}

static void syn_release(struct syn *y)
{
	free(y->tgt);
	free(y->done);
	free(y->covered);
	free(y->need);
	free(y->cdone);
	free(y->owner);
	free(y->readers);
}

static int syn_init(struct syn *y, const struct pr_model *m, const struct pr_plan *p)
{
	uint32_t n = m->nthreads, nl = m->nobjs ? m->nobjs : 1;
	memset(y, 0, sizeof *y);
	y->m = m;
	y->p = p;
	y->tgt = calloc(n, sizeof *y->tgt);
	y->done = calloc(n, sizeof *y->done);
	y->covered = calloc(n, sizeof *y->covered);
	y->need = calloc(n, sizeof *y->need);
	y->cdone = calloc(m->nslots, sizeof *y->cdone);
	y->owner = malloc(nl * sizeof *y->owner);
	y->readers = calloc(nl, sizeof *y->readers);
	if (!y->tgt || !y->done || !y->covered || !y->need || !y->cdone || !y->owner ||
	    !y->readers)
		return -1;
	for (uint32_t l = 0; l < nl; l++)
		y->owner[l] = PR_NONE;
	return 0;
}

int pr_synth(const struct pr_model *m, const struct pr_plan *p, uint64_t *budget,
	     struct schedule **out)
{
	struct syn y;
	int rc = -1;
	*out = NULL;
	if (syn_init(&y, m, p) < 0)
		goto out;
	y.budget = budget;
	if (!closure(&y)) {
		rc = 0;
		goto out;
	}
	y.s = schedule_new();
	if (!y.s)
		goto out;
	rc = order(&y);
	if (rc == 1 && final_request(&y) < 0)
		rc = -1;
	if (rc == 1) {
		y.s->has_free = 1;
		*out = y.s;
		y.s = NULL;
	}
out:
	if (rc < 0)
		avt_error("cannot predict: out of memory");
	schedule_free(y.s);
	syn_release(&y);
	return rc;
}

/* ---- plans ---- */

/* The first release of lock l by thread u after tindex i, before tindex
 * end; PR_NONE if none. */
static uint32_t release_after(const struct pr_model *m, uint32_t u, uint32_t i, uint32_t l,
			      uint32_t end)
{
	for (uint32_t k = i + 1; k < end && k < m->tnev[u]; k++) {
		uint32_t e = m->tev[u][k];
		if (pr_is_release(pr_ev(m, e)) && m->lock[e] == l)
			return e;
	}
	return PR_NONE;
}

/* The first event of the locked stretch that contains event e's
 * predecessors (e itself if its thread held nothing before it). */
static uint32_t stretch_event(const struct pr_model *m, uint32_t e)
{
	const struct avt_event *ev = pr_ev(m, e);
	return m->tev[ev->thread][pr_stretch_start(m, ev->thread, ev->tindex)];
}

static int plan_sidetrack(const struct pr_model *m, const struct pr_cand *c, struct pr_plan *p)
{
	uint32_t e1 = c->ev[0], e2 = c->ev[1], e3 = c->ev[2], l = m->lock[e1];
	const struct avt_event *a = pr_ev(m, e1), *b = pr_ev(m, e2), *d = pr_ev(m, e3);
	uint32_t r1 = release_after(m, a->thread, a->tindex, l, d->tindex);
	uint32_t r2 = release_after(m, b->thread, b->tindex, l, UINT32_MAX);
	if (r1 == PR_NONE || r2 == PR_NONE)
		return -1;
	uint32_t s1 = stretch_event(m, e1), s2 = stretch_event(m, e2), s3 = stretch_event(m, e3);
	if (s3 <= r1)
		s3 = e3; /* the lock held around e3 was taken before the window */
	p->nthr = 2;
	p->thr[0] = a->thread;
	p->thr[1] = b->thread;
	p->stop[0] = d->tindex;
	p->limit[0] = d->tindex + 1;
	p->stop[1] = pr_ev(m, r2)->tindex;
	p->limit[1] = UINT32_MAX;
	p->nedge = 2;
	p->edge[0] = (struct pr_edge){ r1, s2 };
	p->edge[1] = (struct pr_edge){ r2, s3 };
	p->ndrop = 0;
	if (c->pat == PR_PAT_BEFORE)
		p->drop[p->ndrop++] = e1;
	if (c->pat == PR_PAT_AFTER)
		p->drop[p->ndrop++] = e2;
	p->p0 = s1 < s2 ? s1 : s2;
	p->final = -1;
	return 0;
}

static int plan_deadlock(const struct pr_model *m, const struct pr_cand *c, struct pr_plan *p)
{
	uint32_t k = c->nthr;
	struct pr_dl_wit w[4];
	for (uint32_t i = 0; i < k; i++)
		w[i] = (struct pr_dl_wit){ c->lock[i], c->lock[(i + 1) % k], c->thr[i], c->ev[i],
					   c->ev[k + i], PR_NONE };
	p->nthr = k;
	p->ndrop = p->nedge = 0;
	p->p0 = PR_NONE;
	p->final = 0;
	for (uint32_t i = 1; i < k; i++)
		if (w[i].hold < w[p->final].hold)
			p->final = (int)i; /* its hold runs first, its request last */
	for (uint32_t i = 0; i < k; i++) {
		const struct avt_event *req = pr_ev(m, w[i].req);
		if (!req->tindex)
			return -1;
		p->thr[i] = w[i].thread;
		p->stop[i] = req->tindex - 1;
		p->limit[i] = req->tindex;
		uint32_t d = pr_dl_drop(m, w, k, i);
		if (d != PR_NONE)
			p->drop[p->ndrop++] = d;
		uint32_t s = stretch_event(m, w[i].req);
		if (s < p->p0)
			p->p0 = s;
	}
	return 0;
}

int pr_plan_cand(const struct pr_model *m, const struct pr_cand *c, struct pr_plan *p)
{
	memset(p, 0, sizeof *p);
	if (c->det == PR_DET_DEADLOCK)
		return plan_deadlock(m, c, p);
	if (c->det == PR_DET_PENELOPE)
		return pr_penelope_plan(m, c, false, true, p);
	return plan_sidetrack(m, c, p);
}
