/*
 * Lock-order deadlock prediction (deadlock.h).
 *
 * Witnesses are kept once per (held lock, requested lock, thread, sites):
 * a loop that nests the same two locks a million times gives one edge.
 * Cycles are searched in the graph of locks, shortest first, with a budget
 * on the combinations of witnesses tried so that a trace with thousands
 * of nested pairs stays linear in practice.
 */
#include <stdlib.h>
#include <string.h>

#include "deadlock.h"
#include "hmap.h"
#include "trace/log.h"

#define DL_BUDGET 200000u /* witness combinations tried, all cycles together */

/* The witnesses of one (l1, l2) edge: w[begin .. end) once sorted. */
struct group {
	uint32_t l1, l2;
	uint32_t begin, end;
};

/* Later occurrences of a witness's (locks, thread, sites): a linked list
 * per witness, in trace order. */
struct occ {
	uint32_t hold, req;
	uint32_t next;           /* index in occ, or PR_NONE */
};

struct dl {
	const struct pr_model *m;
	struct pr_cands *cs;
	struct pr_dl_wit *w;     /* the first occurrence of each key */
	size_t nw, wcap;
	struct occ *occ;
	uint32_t *occtail;       /* per witness: last occurrence */
	size_t nocc, occcap;
	struct pr_hmap dedupe;   /* hash of a witness's key -> index */
	struct group *g;         /* sorted by (l1, l2) */
	size_t ng;
	uint32_t *gfirst;        /* per lock: its first group as l1, or PR_NONE */
	uint8_t *reach;          /* [r * nobjs + l]: l reaches the start in r + 1 edges */
	unsigned long budget;
	bool deadlocked;         /* the recorded run ended in a deadlock */
};

static uint64_t site_key(const struct avt_event *e)
{
	return pr_hash64(e->site_off ^ ((uint64_t)e->site_mod << 48));
}

static uint64_t wit_key(const struct pr_model *m, const struct pr_dl_wit *w)
{
	uint64_t h = pr_hash64((uint64_t)w->l1 << 32 | w->l2);
	h = pr_hash64(h ^ w->thread);
	h = pr_hash64(h ^ site_key(pr_ev(m, w->hold)));
	return pr_hash64(h ^ site_key(pr_ev(m, w->req)));
}

static bool same_wit(const struct pr_model *m, const struct pr_dl_wit *a,
		     const struct pr_dl_wit *b)
{
	const struct avt_event *ha = pr_ev(m, a->hold), *hb = pr_ev(m, b->hold);
	const struct avt_event *ra = pr_ev(m, a->req), *rb = pr_ev(m, b->req);
	return a->l1 == b->l1 && a->l2 == b->l2 && a->thread == b->thread &&
	       ha->site_mod == hb->site_mod && ha->site_off == hb->site_off &&
	       ra->site_mod == rb->site_mod && ra->site_off == rb->site_off;
}

static int add_occ(struct dl *d, uint32_t wi, const struct pr_dl_wit *w)
{
	if (d->nocc == d->occcap) {
		size_t ncap = d->occcap ? d->occcap * 2 : 256;
		struct occ *n = realloc(d->occ, ncap * sizeof *n);
		if (!n)
			return -1;
		d->occ = n;
		d->occcap = ncap;
	}
	uint32_t o = (uint32_t)d->nocc++;
	d->occ[o] = (struct occ){ w->hold, w->req, PR_NONE };
	if (d->w[wi].occ == PR_NONE)
		d->w[wi].occ = o;
	else
		d->occ[d->occtail[wi]].next = o;
	d->occtail[wi] = o;
	return 0;
}

static int add_wit(struct dl *d, const struct pr_dl_wit *w)
{
	uint64_t key = wit_key(d->m, w);
	size_t pos = 0;
	uint32_t i;
	while (pr_hmap_next(&d->dedupe, key, &pos, &i))
		if (same_wit(d->m, &d->w[i], w))
			return add_occ(d, i, w);
	if (d->nw == d->wcap) {
		size_t ncap = d->wcap ? d->wcap * 2 : 64;
		struct pr_dl_wit *n = realloc(d->w, ncap * sizeof *n);
		uint32_t *t = realloc(d->occtail, ncap * sizeof *t);
		if (n)
			d->w = n;
		if (t)
			d->occtail = t;
		if (!n || !t)
			return -1;
		d->wcap = ncap;
	}
	if (pr_hmap_add(&d->dedupe, key, (uint32_t)d->nw) < 0)
		return -1;
	d->w[d->nw] = *w;
	d->w[d->nw].occ = PR_NONE;
	return add_occ(d, (uint32_t)d->nw++, w);
}

/* Every acquisition made while holding other locks adds an edge from
 * each of them. */
static int collect(struct dl *d)
{
	const struct pr_model *m = d->m;
	for (uint32_t x = 0; x < m->nev; x++) {
		if (!pr_is_acquire(pr_ev(m, x)))
			continue;
		for (uint32_t n = pr_ls_before(m, x); n; n = m->lsn[n].parent) {
			if (m->lsn[n].lock == m->lock[x])
				continue;
			struct pr_dl_wit w = { m->lsn[n].lock, m->lock[x], pr_ev(m, x)->thread,
					       m->lsn[n].acq, x, PR_NONE };
			if (add_wit(d, &w) < 0)
				return -1;
		}
	}
	return 0;
}

static int wit_cmp(const void *pa, const void *pb)
{
	const struct pr_dl_wit *a = pa, *b = pb;
	if (a->l1 != b->l1)
		return a->l1 < b->l1 ? -1 : 1;
	if (a->l2 != b->l2)
		return a->l2 < b->l2 ? -1 : 1;
	return a->req < b->req ? -1 : a->req > b->req;
}

static int index_groups(struct dl *d)
{
	uint32_t nl = d->m->nobjs ? d->m->nobjs : 1;
	if (d->nw)
		qsort(d->w, d->nw, sizeof *d->w, wit_cmp);
	d->g = malloc((d->nw ? d->nw : 1) * sizeof *d->g);
	d->gfirst = malloc(nl * sizeof *d->gfirst);
	d->reach = malloc(3 * (size_t)nl);
	if (!d->g || !d->gfirst || !d->reach)
		return -1;
	for (uint32_t l = 0; l < nl; l++)
		d->gfirst[l] = PR_NONE;
	for (size_t i = 0; i < d->nw; i++) {
		struct group *last = d->ng ? &d->g[d->ng - 1] : NULL;
		if (last && last->l1 == d->w[i].l1 && last->l2 == d->w[i].l2) {
			last->end++;
			continue;
		}
		if (d->gfirst[d->w[i].l1] == PR_NONE)
			d->gfirst[d->w[i].l1] = (uint32_t)d->ng;
		d->g[d->ng++] = (struct group){ d->w[i].l1, d->w[i].l2, (uint32_t)i, (uint32_t)i + 1 };
	}
	return 0;
}

/* reach[r][l]: lock l has a path of r + 1 edges back to lock s, through
 * locks above s (a cycle is searched from its smallest lock). */
static void compute_reach(struct dl *d, uint32_t s)
{
	uint32_t nl = d->m->nobjs;
	memset(d->reach, 0, 3 * (size_t)nl);
	for (uint32_t r = 0; r < 3; r++)
		for (size_t i = 0; i < d->ng; i++) {
			const struct group *g = &d->g[i];
			bool to = r ? g->l2 > s && d->reach[(r - 1) * nl + g->l2] : g->l2 == s;
			if (to && g->l1 > s)
				d->reach[r * nl + g->l1] = 1;
		}
}

/* ---- feasibility ---- */

bool pr_dl_gate_free(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++) {
		/* the lock i holds must block the one who asks for it */
		const struct pr_dl_wit *asker = &w[(i + k - 1) % k];
		uint32_t held = pr_ls_find(m, pr_ls_before(m, w[i].req), w[i].l1);
		if (held && m->lsn[held].mode == PR_READ &&
		    pr_acq_mode(pr_ev(m, asker->req)) == PR_READ)
			return false;
		for (uint32_t j = i + 1; j < k; j++)
			if (pr_ls_conflict(m, pr_ls_before(m, w[i].req), pr_ls_before(m, w[j].req)))
				return false;
	}
	return true;
}

/* Whether w[i]'s hold must be taken without its recorded lock edge: the
 * edge comes from past another cycle thread's request. */
uint32_t pr_dl_drop(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k, uint32_t i)
{
	uint32_t src = m->in_lock[w[i].hold];
	for (uint32_t j = 0; j < k && src != PR_NONE; j++)
		if (j != i && pr_ref_at(m, src, w[j].thread) > pr_ev(m, w[j].req)->tindex)
			return w[i].hold;
	return PR_NONE;
}

bool pr_dl_concurrent(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k)
{
	uint32_t *c = malloc(m->nthreads * sizeof *c);
	bool ok = c != NULL;
	for (uint32_t i = 0; ok && i < k; i++) {
		const struct avt_event *req = pr_ev(m, w[i].req);
		pr_cut_clock(m, w[i].thread, req->tindex, pr_dl_drop(m, w, k, i), c);
		for (uint32_t j = 0; j < k; j++)
			if (j != i && c[w[j].thread] > pr_ev(m, w[j].req)->tindex)
				ok = false;
	}
	free(c);
	return ok;
}

static bool ah_ok(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k)
{
	struct pr_ah ah[4];
	uint32_t n = 0;
	bool ok = true;
	for (; n < k; n++)
		if (pr_ah_at(m, w[n].thread, pr_ev(m, w[n].req)->tindex, &ah[n]) < 0) {
			ok = false;
			break;
		}
	for (uint32_t i = 0; ok && i < n; i++)
		for (uint32_t j = i + 1; ok && j < n; j++)
			ok = pr_ah_disjoint(&ah[i], &ah[j]) && pr_ah_compatible(&ah[i], &ah[j]);
	for (uint32_t i = 0; i < n; i++)
		pr_ah_release(&ah[i]);
	return ok;
}

/* The recorded run deadlocked with every cycle thread still holding its
 * lock: the cycle was observed, not predicted. */
static bool observed(const struct dl *d, const struct pr_dl_wit *w, uint32_t k)
{
	const struct pr_model *m = d->m;
	if (!d->deadlocked)
		return false;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t u = w[i].thread;
		if (!m->tnev[u] || !pr_ls_find(m, m->ls[m->tev[u][m->tnev[u] - 1]], w[i].l1))
			return false;
	}
	return true;
}

bool pr_dl_feasible(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t j = i + 1; j < k; j++)
			if (w[i].thread == w[j].thread)
				return false;
	return pr_dl_gate_free(m, w, k) && pr_dl_concurrent(m, w, k) && ah_ok(m, w, k);
}

static void to_cand(const struct pr_dl_wit *w, uint32_t k, struct pr_cand *c)
{
	memset(c, 0, sizeof *c);
	c->det = PR_DET_DEADLOCK;
	c->pat = PR_PAT_CYCLE;
	c->nthr = c->nlock = k;
	c->nev = 2 * k;
	c->order = UINT32_MAX;
	for (uint32_t i = 0; i < k; i++) {
		c->thr[i] = w[i].thread;
		c->ev[i] = w[i].hold;
		c->ev[k + i] = w[i].req;
		c->lock[i] = w[i].l1;
		if (w[i].hold < c->order)
			c->order = w[i].hold;
	}
}

static int try_cycle(struct dl *d, const struct pr_dl_wit *w, uint32_t k)
{
	struct pr_cand c;
	to_cand(w, k, &c);
	if (!d->budget || pr_cands_has(d->cs, &c) || observed(d, w, k))
		return 0;
	d->budget--;
	if (!pr_dl_feasible(d->m, w, k)) {
		if (avt_verbose)
			avt_debug("lock-order cycle of T%u (request seq %llu) and T%u (seq %llu): "
				  "not feasible (gate %d, order %d)", w[0].thread,
				  (unsigned long long)pr_ev(d->m, w[0].req)->seq, w[1].thread,
				  (unsigned long long)pr_ev(d->m, w[1].req)->seq,
				  !pr_dl_gate_free(d->m, w, k), !pr_dl_concurrent(d->m, w, k));
		return 0;
	}
	return pr_cands_add(d->cs, &c) < 0 ? -1 : 0;
}

/* A two-thread cycle from witnesses a and b: the first occurrences, then
 * each occurrence of one with the latest occurrence of the other before it
 * (occurrences close in time are the ones other synchronization does not
 * order), until one is feasible or the budget is spent. */
/* A cheap necessary condition for occurrence x to reach its request while
 * the earlier occurrence y of another thread holds its lock: x's thread has
 * not heard of y's thread past y's request before taking its own lock. */
static bool may_overlap(const struct dl *d, const struct occ *x, const struct occ *y)
{
	const struct avt_event *ry = pr_ev(d->m, y->req);
	return pr_vc_pre_at(d->m, x->hold, ry->thread) <= ry->tindex;
}

static int try_pair(struct dl *d, const struct pr_dl_wit *a, const struct pr_dl_wit *b)
{
	struct pr_dl_wit w[2] = { *a, *b };
	const uint32_t first[2] = { a->occ, b->occ };
	uint32_t next[2] = { a->occ, b->occ }, last[2] = { PR_NONE, PR_NONE };
	size_t before = d->cs->n;
	struct pr_cand c;
	to_cand(w, 2, &c);
	if (pr_cands_has(d->cs, &c))
		return 0; /* the same code already makes a predicted cycle */
	if (try_cycle(d, w, 2) < 0)
		return -1;
	while (d->cs->n == before && d->budget && (next[0] != PR_NONE || next[1] != PR_NONE)) {
		/* advance the side whose next occurrence comes first */
		int s = next[1] == PR_NONE ||
			(next[0] != PR_NONE && d->occ[next[0]].req < d->occ[next[1]].req) ? 0 : 1;
		last[s] = next[s];
		next[s] = d->occ[next[s]].next;
		if (last[!s] == PR_NONE || (last[0] == first[0] && last[1] == first[1]))
			continue; /* nothing to pair with yet, or the pair tried above */
		if (!may_overlap(d, &d->occ[last[s]], &d->occ[last[!s]]))
			continue;
		for (int i = 0; i < 2; i++) {
			w[i].hold = d->occ[last[i]].hold;
			w[i].req = d->occ[last[i]].req;
		}
		if (try_cycle(d, w, 2) < 0)
			return -1;
	}
	return 0;
}

static bool thread_used(const struct pr_dl_wit *w, uint32_t n, uint32_t t)
{
	for (uint32_t j = 0; j < n; j++)
		if (w[j].thread == t)
			return true;
	return false;
}

static bool lock_used(const struct pr_dl_wit *w, uint32_t n, uint32_t l)
{
	for (uint32_t j = 0; j < n; j++)
		if (w[j].l1 == l)
			return true;
	return false;
}

/* Extends the path w[0..n) (w[n-1] requests lock `at`) by one witness
 * held at `at`, closing the cycle back to w[0].l1 at length k.  Only edges
 * to locks that can still get back to the start in the steps left are
 * followed. */
static int extend(struct dl *d, struct pr_dl_wit *w, uint32_t n, uint32_t k)
{
	uint32_t at = w[n - 1].l2, start = w[0].l1, left = k - n - 1, nl = d->m->nobjs;
	for (uint32_t gi = d->gfirst[at]; gi != PR_NONE && gi < d->ng && d->g[gi].l1 == at; gi++) {
		const struct group *g = &d->g[gi];
		if (left ? g->l2 <= start || !d->reach[(left - 1) * nl + g->l2] ||
			   lock_used(w, n, g->l2)
			 : g->l2 != start)
			continue;
		for (uint32_t i = g->begin; i < g->end && d->budget; i++) {
			if (thread_used(w, n, d->w[i].thread))
				continue;
			w[n] = d->w[i];
			if (!left && (k == 2 ? try_pair(d, &w[0], &w[1]) : try_cycle(d, w, k)) < 0)
				return -1;
			if (left) {
				d->budget--;
				if (extend(d, w, n + 1, k) < 0)
					return -1;
			}
		}
	}
	return 0;
}

static int search(struct dl *d)
{
	struct pr_dl_wit w[4];
	uint32_t nl = d->m->nobjs;
	for (uint32_t s = 0; s < nl && d->budget && !pr_stopped(); s++) {
		if (d->gfirst[s] == PR_NONE)
			continue;
		compute_reach(d, s);
		for (uint32_t k = 2; k <= 4; k++)
			for (uint32_t gi = d->gfirst[s]; gi < d->ng && d->g[gi].l1 == s; gi++) {
				const struct group *g = &d->g[gi];
				if (g->l2 <= s || !d->reach[(k - 2) * nl + g->l2])
					continue;
				for (uint32_t i = g->begin; i < g->end && d->budget; i++) {
					w[0] = d->w[i];
					if (extend(d, w, 1, k) < 0)
						return -1;
				}
			}
	}
	return 0;
}

static bool recorded_deadlock(const struct trace *t)
{
	for (size_t i = 0; i < t->nnotes; i++)
		if (t->notes[i].text && strstr(t->notes[i].text, "deadlock"))
			return true;
	return false;
}

int pr_deadlock(const struct pr_model *m, struct pr_cands *cs)
{
	struct dl d;
	int rc = -1;
	memset(&d, 0, sizeof d);
	d.m = m;
	d.cs = cs;
	d.budget = DL_BUDGET;
	d.deadlocked = recorded_deadlock(m->t);
	pr_hmap_init(&d.dedupe);
	if (collect(&d) < 0 || index_groups(&d) < 0) {
		avt_error("cannot predict: out of memory");
		goto out;
	}
	rc = search(&d);
	if (!d.budget)
		avt_warn("deadlock search stopped after %u combinations of lock-order edges",
			 DL_BUDGET);
out:
	pr_hmap_release(&d.dedupe);
	free(d.gfirst);
	free(d.g);
	free(d.reach);
	free(d.w);
	free(d.occ);
	free(d.occtail);
	return rc;
}
