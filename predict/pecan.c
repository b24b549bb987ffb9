/*
 * PECAN over the accesses of a trace (pecan.h).
 *
 * The compact PTG of the paper's Section 5.1: the accesses indexed by
 * thread (program order) and by variable (the temporal order: neighbours
 * in a variable's list are the dashed edges), each with its region and
 * lockset; the partial order is kept for communication events only
 * (sclock.h) and asked on demand.
 *
 * The search binds the pattern's events one at a time in the order
 * pr_pat_prepare() chose: an event of a thread role already bound is the
 * nearest matching access of that thread next to its bound neighbour (in
 * the same region, or a later one for another region role); an event of
 * a new thread role is an access of an already bound variable by another
 * thread near the bound event on that variable in the variable's order
 * (its immediate neighbour for a "consecutive" pattern).  Nearest is
 * enough: the dedupe key is (pattern, sites, variables), and the nearest
 * instance is the one most likely concurrent.  A new variable role is
 * bound to each of the first few distinct variables found.
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "pecan.h"
#include "sclock.h"
#include "trace/log.h"
#include "txn.h"

/* Accesses a thread-role step looks at, in its thread's order. */
#define WALK 32
/* Accesses a new thread role looks at, each way in the variable's order. */
#define TWALK 16
/* Distinct variables tried for a new variable role. */
#define NEWVARS 3
/* Events scanned for a cut-point. */
#define CUTSCAN 4096
/* Candidates kept per (pattern, sites), over different variables: the same
 * source-level anomaly on many variables (an array, a table of globals
 * written by one line) is one bug to the user, and synthesis keeps the
 * first feasible instance only; without a cap a trace of many variables
 * gives millions of candidates (docs/predict.md, PECAN, The search). */
#define SITE_CAP 4

struct pacc {
	uint32_t ev, thread, var, reg;
	uint32_t tpos, vpos;   /* position in its thread's / variable's list */
	uint8_t write;
};

/* The candidates of one (pattern, sites) key: the first one (its events
 * name the sites) and how many there are. */
struct site_grp {
	uint32_t ev[PR_PAT_MAX];
	const struct pr_pat *pp;
	uint32_t n;
};

struct pec {
	const struct pr_model *m;
	struct pr_cands *cs;
	struct pr_sclock sc;
	struct pacc *a;
	uint32_t na, nvar;
	uint32_t *toff, *tord; /* thread u: a[tord[toff[u] .. toff[u + 1])] */
	uint32_t *voff, *vord; /* variable v: a[vord[voff[v] .. voff[v + 1])] */
	uint8_t *vshared;      /* accessed by two threads or more */
	struct pr_hmap sites;  /* hash of (pattern, sites) -> index of a site group */
	struct site_grp *grp;  /* a candidate of each (pattern, sites) and their count */
	uint32_t ngrp, capgrp;
	/* the search's bindings */
	const struct pr_pat *p;
	uint32_t thr[PR_PAT_MAX], var[PR_PAT_MAX], pick[PR_PAT_MAX];
};

static bool is_access(const struct avt_event *e)
{
	return e->kind == AVT_EV_READ || e->kind == AVT_EV_WRITE;
}

/* ---- the index ---- */

/* Regions per thread: txn.h's boundaries, an atomic block's begin and end
 * (a block is a region of its own) and a change of module. */
struct rstate {
	uint32_t reg, lastmod, depth;
};

static void region_step(struct rstate *r, const struct avt_event *e)
{
	if (pr_txn_boundary(e))
		r->reg++;
	if (pr_txn_has_site(e)) {
		if (r->lastmod != PR_NONE && r->lastmod != e->site_mod)
			r->reg++;
		r->lastmod = e->site_mod;
	}
	if (e->kind == AVT_EV_BEGIN && r->depth++ == 0)
		r->reg++;
	if (e->kind == AVT_EV_END && r->depth > 0 && --r->depth == 0)
		r->reg++;
}

static int count_sort(uint32_t n, uint32_t nkeys, const struct pacc *a, bool by_thread,
		      uint32_t **off, uint32_t **ord)
{
	*off = calloc((size_t)nkeys + 1, sizeof **off);
	*ord = malloc((n ? n : 1) * sizeof **ord);
	if (!*off || !*ord)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		(*off)[(by_thread ? a[i].thread : a[i].var) + 1]++;
	for (uint32_t k = 0; k < nkeys; k++)
		(*off)[k + 1] += (*off)[k];
	uint32_t *fill = malloc(((size_t)nkeys + 1) * sizeof *fill);
	if (!fill)
		return -1;
	memcpy(fill, *off, ((size_t)nkeys + 1) * sizeof *fill);
	for (uint32_t i = 0; i < n; i++)
		(*ord)[fill[by_thread ? a[i].thread : a[i].var]++] = i;
	free(fill);
	return 0;
}

static int build(struct pec *c)
{
	const struct pr_model *m = c->m;
	struct pr_hmap vars;
	struct rstate *rs = calloc(m->nthreads ? m->nthreads : 1, sizeof *rs);
	uint32_t cap = 0;
	int rc = -1;
	pr_hmap_init(&vars);
	if (!rs)
		goto out;
	for (uint32_t u = 0; u < m->nthreads; u++)
		rs[u].lastmod = PR_NONE;
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		region_step(&rs[e->thread], e);
		if (!is_access(e))
			continue;
		uint32_t v = pr_hmap_get(&vars, e->obj);
		if (v == UINT32_MAX) {
			if (pr_hmap_add(&vars, e->obj, c->nvar) < 0)
				goto out;
			v = c->nvar++;
		}
		if (c->na == cap) {
			uint32_t nc = cap ? cap * 2 : 1024;
			struct pacc *n = realloc(c->a, nc * sizeof *n);
			if (!n)
				goto out;
			c->a = n;
			cap = nc;
		}
		c->a[c->na++] = (struct pacc){ x, e->thread, v, rs[e->thread].reg, 0, 0,
					       e->kind == AVT_EV_WRITE };
	}
	if (count_sort(c->na, m->nthreads, c->a, true, &c->toff, &c->tord) < 0 ||
	    count_sort(c->na, c->nvar, c->a, false, &c->voff, &c->vord) < 0)
		goto out;
	c->vshared = calloc(c->nvar ? c->nvar : 1, 1);
	if (!c->vshared)
		goto out;
	for (uint32_t u = 0; u < m->nthreads; u++)
		for (uint32_t k = c->toff[u]; k < c->toff[u + 1]; k++)
			c->a[c->tord[k]].tpos = k;
	for (uint32_t v = 0; v < c->nvar; v++)
		for (uint32_t k = c->voff[v]; k < c->voff[v + 1]; k++) {
			struct pacc *x = &c->a[c->vord[k]];
			x->vpos = k;
			if (c->a[c->vord[c->voff[v]]].thread != x->thread)
				c->vshared[v] = 1;
		}
	rc = 0;
out:
	pr_hmap_release(&vars);
	free(rs);
	return rc;
}

/* ---- checks of a complete match ---- */

/* Thread u can stand somewhere in [from, to) (tindices) with a lockset
 * that conflicts with none of the events ins[0 .. nins): only from and
 * the points after a release can be the first such place. */
static bool cut_exists(const struct pr_model *m, uint32_t u, uint32_t from, uint32_t to,
		       const uint32_t *ins, unsigned nins)
{
	for (uint32_t k = from; k < to && k - from < CUTSCAN; k++) {
		uint32_t e = m->tev[u][k];
		if (k != from && !pr_is_release(pr_ev(m, e)))
			continue;
		bool ok = true;
		for (unsigned i = 0; i < nins && ok; i++)
			ok = !pr_ls_conflict(m, m->ls[e], m->ls[ins[i]]);
		if (ok)
			return true;
	}
	return false;
}

/* The hybrid independence model on the match e[0 .. n) (pattern order). */
static bool feasible(const struct pec *c, const uint32_t *e)
{
	const struct pr_model *m = c->m;
	const struct pr_pat *p = c->p;
	bool reordered = false;
	for (unsigned i = 0; i + 1 < p->n; i++)
		reordered |= e[i] > e[i + 1];
	if (!reordered)
		return false; /* it happened in the recorded run */
	for (unsigned i = 0; i < p->n; i++)
		for (unsigned j = i + 1; j < p->n; j++) {
			if (p->ev[i].thr == p->ev[j].thr) {
				if (pr_ev(m, e[i])->tindex >= pr_ev(m, e[j])->tindex)
					return false;
			} else if (pr_sclock_hb(&c->sc, e[j], e[i])) {
				return false;
			}
		}
	if (p->consecutive && pr_ls_conflict(m, m->ls[e[0]], m->ls[e[1]]))
		return false;
	/* each thread's consecutive pattern events around other threads'
	 * events: it must be able to stand between them */
	for (unsigned i = 0; i < p->n; i++) {
		unsigned j = i + 1, nins = 0;
		uint32_t ins[PR_PAT_MAX];
		while (j < p->n && p->ev[j].thr != p->ev[i].thr)
			ins[nins++] = e[j++];
		if (j == p->n || !nins)
			continue;
		const struct avt_event *a = pr_ev(m, e[i]), *b = pr_ev(m, e[j]);
		if (!cut_exists(m, a->thread, a->tindex, b->tindex, ins, nins))
			return false;
	}
	return true;
}

static uint64_t sites_hash(const struct pec *c, const uint32_t *ev)
{
	uint64_t h = pr_hash64((uint64_t)(uintptr_t)c->p);
	for (unsigned i = 0; i < c->p->n; i++) {
		const struct avt_event *e = pr_ev(c->m, ev[i]);
		h = pr_hash64(h ^ e->site_off ^ ((uint64_t)e->site_mod << 48));
	}
	return h;
}

static bool same_sites(const struct pec *c, const struct site_grp *g, const uint32_t *ev)
{
	if (g->pp != c->p)
		return false;
	for (unsigned i = 0; i < c->p->n; i++) {
		const struct avt_event *a = pr_ev(c->m, g->ev[i]), *b = pr_ev(c->m, ev[i]);
		if (a->site_off != b->site_off || a->site_mod != b->site_mod)
			return false;
	}
	return true;
}

/* The site group of the match ev (pattern order), or PR_NONE if there is
 * none yet. */
static uint32_t site_group(const struct pec *c, const uint32_t *ev)
{
	size_t pos = 0;
	uint32_t i;
	while (pr_hmap_next(&c->sites, sites_hash(c, ev), &pos, &i))
		if (same_sites(c, &c->grp[i], ev))
			return i;
	return PR_NONE;
}

/* Counts a candidate just added in its site group.  0, or -1 if out of
 * memory. */
static int count_site(struct pec *c, uint32_t g, const uint32_t *ev)
{
	if (g != PR_NONE) {
		c->grp[g].n++;
		return 0;
	}
	if (c->ngrp == c->capgrp) {
		uint32_t nc = c->capgrp ? c->capgrp * 2 : 64;
		struct site_grp *n = realloc(c->grp, nc * sizeof *n);
		if (!n)
			return -1;
		c->grp = n;
		c->capgrp = nc;
	}
	if (pr_hmap_add(&c->sites, sites_hash(c, ev), c->ngrp) < 0)
		return -1;
	struct site_grp *n = &c->grp[c->ngrp++];
	memcpy(n->ev, ev, sizeof n->ev);
	n->pp = c->p;
	n->n = 1;
	return 0;
}

static int add_match(struct pec *c)
{
	const struct pr_pat *p = c->p;
	struct pr_cand k;
	memset(&k, 0, sizeof k);
	k.det = PR_DET_PECAN;
	k.pat = PR_PAT_PECAN;
	k.pp = p;
	k.nthr = p->nthr;
	memcpy(k.thr, c->thr, sizeof k.thr);
	k.nev = p->n;
	k.order = UINT32_MAX;
	for (unsigned i = 0; i < p->n; i++) {
		k.ev[i] = c->a[c->pick[i]].ev;
		if (k.ev[i] < k.order)
			k.order = k.ev[i];
	}
	uint32_t g = site_group(c, k.ev);
	if ((g != PR_NONE && c->grp[g].n >= SITE_CAP) || pr_cands_has(c->cs, &k) ||
	    !feasible(c, k.ev))
		return 0;
	if (pr_cands_add(c->cs, &k) < 0)
		return -1;
	if (count_site(c, g, k.ev) < 0) {
		avt_error("cannot predict: out of memory");
		return -1;
	}
	return 0;
}

/* ---- the search ---- */

static int step(struct pec *c, unsigned k);

static bool var_taken(const struct pec *c, uint32_t v)
{
	for (unsigned r = 0; r < c->p->nvar; r++)
		if (c->var[r] == v)
			return true;
	return false;
}

static bool thread_taken(const struct pec *c, uint32_t u)
{
	for (unsigned r = 0; r < c->p->nthr; r++)
		if (c->thr[r] == u)
			return true;
	return false;
}

/* A variable role used by two thread roles needs a shared variable. */
static bool var_ok(const struct pec *c, uint8_t role, uint32_t v)
{
	const struct pr_pat *p = c->p;
	int t = -1;
	for (unsigned i = 0; i < p->n; i++)
		if (p->ev[i].var == role) {
			if (t >= 0 && t != p->ev[i].thr)
				return c->vshared[v];
			t = p->ev[i].thr;
		}
	return true;
}

/* Binds event i to access x and goes on with step k + 1. */
static int bind(struct pec *c, unsigned k, unsigned i, uint32_t x)
{
	const struct pr_pat_ev *pe = &c->p->ev[i];
	uint32_t oldv = c->var[pe->var], oldt = c->thr[pe->thr];
	c->var[pe->var] = c->a[x].var;
	c->thr[pe->thr] = c->a[x].thread;
	c->pick[i] = x;
	int rc = step(c, k + 1);
	c->var[pe->var] = oldv;
	c->thr[pe->thr] = oldt;
	return rc;
}

/* Event i of a bound thread role, next to its bound neighbour j. */
static int step_thread(struct pec *c, unsigned k, unsigned i, unsigned j)
{
	const struct pr_pat_ev *pe = &c->p->ev[i];
	const struct pacc *nb = &c->a[c->pick[j]];
	bool same_reg = c->p->ev[j].reg == pe->reg;
	int dir = j < i ? 1 : -1;
	uint32_t u = nb->thread, tried[NEWVARS], ntried = 0;
	int64_t pos = (int64_t)nb->tpos + dir;
	for (unsigned n = 0; n < WALK && pos >= c->toff[u] && pos < c->toff[u + 1];
	     n++, pos += dir) {
		uint32_t x = c->tord[pos];
		const struct pacc *a = &c->a[x];
		if (same_reg && a->reg != nb->reg)
			break;
		if ((!same_reg && a->reg == nb->reg) || a->write != pe->write)
			continue;
		if (c->var[pe->var] != PR_NONE) {
			if (a->var != c->var[pe->var])
				continue;
			return bind(c, k, i, x); /* the nearest */
		}
		if (var_taken(c, a->var) || !var_ok(c, pe->var, a->var))
			continue;
		bool seen = false;
		for (uint32_t t = 0; t < ntried; t++)
			seen |= tried[t] == a->var;
		if (seen)
			continue;
		tried[ntried++] = a->var;
		if (bind(c, k, i, x) < 0)
			return -1;
		if (ntried == NEWVARS)
			break;
	}
	return 0;
}

/* Event i of a new thread role: another thread's access of a bound
 * variable near the bound event j on it. */
static int step_new(struct pec *c, unsigned k, unsigned i, unsigned j)
{
	const struct pr_pat_ev *pe = &c->p->ev[i];
	const struct pacc *nb = &c->a[c->pick[j]];
	uint32_t v = nb->var, reach = c->p->consecutive ? 1 : TWALK;
	for (int dir = -1; dir <= 1; dir += 2) {
		uint32_t seen[2], nseen = 0;
		int64_t pos = (int64_t)nb->vpos + dir;
		for (uint32_t n = 0; n < reach && nseen < 2 && pos >= c->voff[v] && pos < c->voff[v + 1];
		     n++, pos += dir) {
			uint32_t x = c->vord[pos];
			const struct pacc *a = &c->a[x];
			if (thread_taken(c, a->thread) || (nseen && seen[0] == a->thread))
				continue;
			if (a->write != pe->write)
				continue;
			seen[nseen++] = a->thread;
			if (bind(c, k, i, x) < 0)
				return -1;
		}
	}
	return 0;
}

static int step(struct pec *c, unsigned k)
{
	const struct pr_pat *p = c->p;
	if (k == p->n)
		return add_match(c);
	unsigned i = p->order[k];
	bool chosen[PR_PAT_MAX] = { false };
	for (unsigned s = 0; s < k; s++)
		chosen[p->order[s]] = true;
	if (c->thr[p->ev[i].thr] != PR_NONE) {
		for (int d = -1; d <= 1; d += 2)
			for (int j = (int)i + d; j >= 0 && j < p->n; j += d)
				if (p->ev[j].thr == p->ev[i].thr) {
					if (chosen[j])
						return step_thread(c, k, i, (unsigned)j);
					break;
				}
		BUG_ON(1); /* pr_pat_prepare() picked a neighbour */
	}
	for (unsigned s = 0; s < k; s++)
		if (p->ev[p->order[s]].var == p->ev[i].var)
			return step_new(c, k, i, p->order[s]);
	BUG_ON(1);
	return -1;
}

static int search(struct pec *c, const struct pr_pat *p)
{
	c->p = p;
	for (unsigned r = 0; r < PR_PAT_MAX; r++)
		c->thr[r] = c->var[r] = PR_NONE;
	for (uint32_t x = 0; x < c->na; x++) {
		const struct pacc *a = &c->a[x];
		if (a->write != p->ev[0].write || !var_ok(c, p->ev[0].var, a->var))
			continue;
		if (bind(c, 0, 0, x) < 0)
			return -1;
	}
	return 0;
}

static void pec_release(struct pec *c)
{
	pr_sclock_release(&c->sc);
	free(c->a);
	free(c->toff);
	free(c->tord);
	free(c->voff);
	free(c->vord);
	free(c->vshared);
	pr_hmap_release(&c->sites);
	free(c->grp);
}

int pr_pecan(const struct pr_model *m, struct pr_cands *cs,
	     const struct pr_patterns *const *pats, unsigned npats)
{
	struct pec c;
	int rc = -1;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.cs = cs;
	pr_hmap_init(&c.sites);
	if (build(&c) < 0)
		goto oom;
	if (!c.na) {
		rc = 0;
		goto out;
	}
	if (pr_sclock_build(&c.sc, m) < 0)
		goto oom;
	for (unsigned s = 0; s < npats; s++)
		for (size_t i = 0; pats[s] && i < pats[s]->n; i++)
			if (search(&c, &pats[s]->p[i]) < 0)
				goto out; /* pr_cands_add() said why */
	rc = 0;
	goto out;
oom:
	avt_error("cannot predict: out of memory");
out:
	pec_release(&c);
	return rc;
}

/* ---- schedules ---- */

/* The first event of the locked stretch holding e's predecessors. */
static uint32_t stretch_event(const struct pr_model *m, uint32_t e)
{
	const struct avt_event *ev = pr_ev(m, e);
	return m->tev[ev->thread][pr_stretch_start(m, ev->thread, ev->tindex)];
}

/* The tindex at which thread u leaves region I. */
static uint32_t region_end(const struct pr_model *m, uint32_t u, uint32_t p0)
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

/* Lock edges into a pattern thread's part that need another pattern
 * thread past its limit are reversed: dropped (PECAN moves the outermost
 * lock's section with the event). */
static int add_drops(const struct pr_model *m, struct pr_plan *p)
{
	for (uint32_t i = 0; i < p->nthr; i++) {
		uint32_t u = p->thr[i];
		if (p->stop[i] == PR_NONE)
			continue;
		for (uint32_t k = region_end(m, u, p->p0); k <= p->stop[i] && k < m->tnev[u]; k++) {
			uint32_t x = m->tev[u][k];
			bool beyond = false;
			if (!pr_is_acquire(pr_ev(m, x)) || m->in_lock[x] == PR_NONE)
				continue;
			for (uint32_t j = 0; j < p->nthr; j++)
				if (j != i && pr_ref_at(m, m->in_lock[x], p->thr[j]) > p->limit[j])
					beyond = true;
			if (!beyond)
				continue;
			if (p->ndrop == sizeof p->drop / sizeof p->drop[0])
				return -1;
			p->drop[p->ndrop++] = x;
		}
	}
	return 0;
}

static uint32_t role_of(const struct pr_cand *c, uint32_t thread)
{
	for (uint32_t r = 0; r < c->nthr; r++)
		if (c->thr[r] == thread)
			return r;
	return PR_NONE;
}

int pr_pecan_plan(const struct pr_model *m, const struct pr_cand *c, int variant,
		  struct pr_plan *p)
{
	uint32_t n = c->nev, fin = c->ev[n - 1];
	const struct avt_event *ef = pr_ev(m, fin);
	uint32_t rf = role_of(c, ef->thread), last[PR_PAT_MAX];
	memset(p, 0, sizeof *p);
	p->nthr = c->nthr;
	p->final = -1;
	p->p0 = PR_NONE;
	for (uint32_t r = 0; r < c->nthr; r++) {
		p->thr[r] = c->thr[r];
		p->stop[r] = last[r] = PR_NONE;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t s = stretch_event(m, c->ev[k]);
		if (s < p->p0)
			p->p0 = s;
		if (k + 1 < n)
			last[role_of(c, pr_ev(m, c->ev[k])->thread)] = pr_ev(m, c->ev[k])->tindex;
	}
	for (uint32_t r = 0; r < c->nthr; r++) {
		p->stop[r] = last[r];
		p->limit[r] = last[r] == PR_NONE ? 0 : last[r] + 1;
	}
	/* the final event's thread: how far it goes before standing */
	uint32_t want = PR_NONE, ss = pr_stretch_start(m, ef->thread, ef->tindex);
	if (variant == 0 && ef->tindex > 0)
		want = ef->tindex - 1;
	else if (variant == 1 && ss < ef->tindex && ss > 0)
		want = ss - 1;
	else if (variant != 2)
		return -1;
	if (want != PR_NONE && (last[rf] == PR_NONE || want > last[rf]))
		p->stop[rf] = want;
	else if (variant != 2)
		return -1; /* the same as variant 2 */
	p->limit[rf] = ef->tindex;
	/* each pattern event after the one before it: into the start of its
	 * locked stretch, unless that holds the thread's previous pattern
	 * event (then the event itself) */
	for (uint32_t k = 1; k + 1 < n; k++) {
		const struct avt_event *a = pr_ev(m, c->ev[k - 1]), *b = pr_ev(m, c->ev[k]);
		if (a->thread == b->thread)
			continue;
		uint32_t to = stretch_event(m, c->ev[k]);
		for (uint32_t j = 0; j < k; j++)
			if (pr_ev(m, c->ev[j])->thread == b->thread && c->ev[j] >= to)
				to = c->ev[k];
		if (p->nedge == sizeof p->edge / sizeof p->edge[0])
			return -1;
		p->edge[p->nedge++] = (struct pr_edge){ c->ev[k - 1], to };
	}
	return add_drops(m, p);
}

int pr_pecan_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
		   struct pr_plan *plan, struct schedule **out)
{
	*out = NULL;
	for (int v = 0; v < 3 && *budget; v++) {
		if (pr_pecan_plan(m, c, v, plan) < 0)
			continue;
		int rc = pr_synth(m, plan, budget, out);
		if (rc != 0)
			return rc;
	}
	return 0;
}
