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
/* Accesses in thread order per Bloom filter (struct pec): a walk spans
 * WALK / BLOCK + 1 blocks, and skips those whose filter rules its
 * variable out, so smaller blocks skip more of it (and are more often
 * right: fewer variables in each). */
#define BLOCK 8
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
/* Slots of struct pec's cache of full site groups (a power of 2). */
#define FULL_CACHE 4096
/* Patterns searched together (see struct pec). */
#define GROUP_MAX 32

/* The accesses are numbered in thread order (thread u's are toff[u] ..
 * toff[u + 1]); the walks read these small records in order. */
struct tacc {
	uint32_t vw;  /* variable << 1 | write */
	uint32_t reg; /* region */
};

/* An access in its variable's list (variables in turn, each in trace
 * order). */
struct vacc {
	uint32_t tw;  /* thread << 1 | write */
	uint32_t x;   /* the access (thread order) */
};

/* The candidates of one (pattern, sites) key: the sites, and how many
 * candidates there are.  A slot of struct pec's open-addressing table
 * (pp NULL: empty): the key and the count in one cache line, since most
 * look-ups find a full group and go no further. */
struct site_grp {
	uint32_t site[PR_PAT_MAX]; /* site ids (struct pec tsite); 0 past the pattern's n */
	const struct pr_pat *pp;
	uint32_t n;
};

/*
 * Patterns that differ only in their access types (atomic-set-5, -6, -8
 * and -10; the five atomicity patterns; the races) are searched together:
 * one walk serves them all, each access binding the patterns whose event
 * wants its type (mask bits).  Each pattern still binds the accesses it
 * would bind alone, in the same order, so its candidates and its site cap
 * are the same as in a search of its own.
 */
struct pec {
	const struct pr_model *m;
	struct pr_cands *cs;
	struct pr_sclock sc;
	uint32_t na, nvar;
	struct tacc *ta;       /* the accesses in thread order */
	uint32_t *tev;         /* their events */
	uint32_t *tsite;       /* their sites: ids, one per (module, offset) */
	uint32_t *tvpos;       /* their positions in va */
	uint32_t *trace;       /* the accesses in trace order (search starts) */
	uint32_t *toff;
	/* per block of BLOCK accesses in thread order, a Bloom filter of the
	 * variables accessed: a walk for a bound variable that is in neither
	 * block its reach spans is skipped (most find nothing) */
	uint64_t (*bloom)[4];
	/* per access of va (vwin[pos], in va's order: step_new() reads it
	 * along with va, not at the access's own random place), a 64-bit
	 * Bloom filter of the variables of the WALK accesses after it
	 * ([0]) and before it ([1]) in its thread: what a walk from it can
	 * meet, asked before anything else of the access is read */
	uint64_t (*vwin)[2];
	struct vacc *va;       /* variable v's: va[voff[v] .. voff[v + 1]) */
	uint32_t *voff;
	uint8_t *vshared;      /* accessed by two threads or more */
	struct site_grp *grp;  /* the (pattern, sites) groups: a linear-probing table */
	size_t ngrp, capgrp;   /* capgrp a power of 2 (or 0), ngrp <= capgrp / 2 */
	/* groups found full lately, by hash: a group never stops being
	 * full, and the same sites come back in runs (threads running one
	 * code path), so most look-ups end in this table (4,096 slots,
	 * 128 KB: it stays in the cache where the group table of a long
	 * trace does not; 256 slots missed 58 % of the look-ups) */
	struct site_grp *full; /* FULL_CACHE slots (pp NULL: empty) */
	/* the search: its patterns (roles as p's), and per event the mask of
	 * those that want a write there */
	const struct pr_pat *p, *gp[GROUP_MAX];
	unsigned ngp;
	uint32_t wmask[PR_PAT_MAX];
	/* the search plan of c->p, fixed per search (search_plan()): step k
	 * binds event order[k] next to event nb[k], along a bound thread
	 * (thrstep[k]) or as a new thread role on nb[k]'s variable; and
	 * whether each variable role is used by two thread roles */
	uint8_t nb[PR_PAT_MAX];
	bool thrstep[PR_PAT_MAX], vshared_role[PR_PAT_MAX];
	/* for walk_may_find(), per step k along a bound thread: the
	 * variable role it walks for, whether that is nb[k]'s own, and
	 * the walk's direction (1: after nb[k]) */
	uint8_t wrole[PR_PAT_MAX];
	bool wsame[PR_PAT_MAX];
	int8_t wdir[PR_PAT_MAX];
	/* the bindings */
	uint32_t thr[PR_PAT_MAX], var[PR_PAT_MAX], pick[PR_PAT_MAX], pthr[PR_PAT_MAX];
};

static bool is_access(const struct avt_event *e)
{
	return e->kind == AVT_EV_READ || avt_kind_writes(e->kind);
}

/* ---- the index ---- */

static unsigned bloom_bit(uint32_t v)
{
	return (v * 0x9e3779b1u) >> 24;
}

static unsigned win_bit(uint32_t v)
{
	return (v * 0x9e3779b1u) >> 26;
}

/* Variable v may be accessed in block b. */
static bool bloom_has(const struct pec *c, uint32_t b, uint32_t v)
{
	unsigned h = bloom_bit(v);
	return c->bloom[b][h / 64] >> (h % 64) & 1;
}

/* Regions per thread: txn.h's boundaries, an atomic block's begin and end
 * (a block is a region of its own) and a change of module. */
struct rstate {
	uint32_t reg, lastmod, depth;
	uint32_t lastacc; /* the thread's last access, or PR_NONE */
};
/* Consecutive accesses a, b of a thread with call stacks, outside atomic
 * blocks: in one region?  With --atomic, when txn.h takes them for one
 * transaction (a call of a named function holds both); else when no loop
 * went round between them (pr_txn_one_pass()). */
static bool same_region(const struct pr_txn *x, uint32_t a, uint32_t b)
{
	struct predict_site blame[4];
	uint32_t nblame;
	if (x->atomic)
		return pr_txn_window(x, a, b, blame, &nblame);
	return pr_txn_one_pass(x, a, b);
}

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

/* The filters of struct pec vwin, in thread order (win[x]), thread by
 * thread: a window of WALK accesses slides along with a count per filter
 * bit. */
static void build_windows(const struct pec *c, uint64_t (*win)[2])
{
	for (uint32_t u = 0; u < c->m->nthreads; u++) {
		uint32_t lo = c->toff[u], hi = c->toff[u + 1];
		uint32_t cnt[2][64];
		uint64_t bits[2] = { 0, 0 };
		memset(cnt, 0, sizeof cnt);
		/* the window after lo: lo + 1 .. lo + WALK */
		for (uint32_t y = lo + 1; y < hi && y <= lo + WALK; y++) {
			unsigned b = win_bit(c->ta[y].vw >> 1);
			cnt[0][b]++;
			bits[0] |= (uint64_t)1 << b;
		}
		for (uint32_t x = lo; x < hi; x++) {
			win[x][0] = bits[0];
			win[x][1] = bits[1];
			/* slide: x + 1 leaves the window after, x joins the one
			 * before; x + 1 + WALK joins, x - WALK + 1 - 1 leaves */
			if (x + 1 < hi) {
				unsigned b = win_bit(c->ta[x + 1].vw >> 1);
				if (!--cnt[0][b])
					bits[0] &= ~((uint64_t)1 << b);
			}
			if (x + 1 + WALK < hi) {
				unsigned b = win_bit(c->ta[x + 1 + WALK].vw >> 1);
				cnt[0][b]++;
				bits[0] |= (uint64_t)1 << b;
			}
			unsigned b = win_bit(c->ta[x].vw >> 1);
			cnt[1][b]++;
			bits[1] |= (uint64_t)1 << b;
			if (x >= lo + WALK) {
				b = win_bit(c->ta[x - WALK].vw >> 1);
				if (!--cnt[1][b])
					bits[1] &= ~((uint64_t)1 << b);
			}
		}
	}
}

/* Offsets from counts: off[k + 1] holds key k's count; fill = a copy. */
static uint32_t *prefix(uint32_t *off, uint32_t nkeys)
{
	for (uint32_t k = 0; k < nkeys; k++)
		off[k + 1] += off[k];
	uint32_t *fill = malloc(((size_t)nkeys + 1) * sizeof *fill);
	if (fill)
		memcpy(fill, off, ((size_t)nkeys + 1) * sizeof *fill);
	return fill;
}

/* Two passes over the trace: variable ids and counts, then the arrays
 * (and the regions, txn deciding with call stacks). */
static int build(struct pec *c, const struct pr_txn *txn)
{
	const struct pr_model *m = c->m;
	uint32_t n = m->nthreads ? m->nthreads : 1, *avar = NULL, *tfill = NULL, *vfill = NULL;
	struct pr_hmap vars, sites;
	uint32_t nsite = 0, *sitev = NULL; /* each site id's first event */
	uint64_t (*win)[2] = NULL;         /* vwin in thread order */
	struct rstate *rs = calloc(n, sizeof *rs);
	size_t cap = 0;
	int rc = -1;
	pr_hmap_init(&vars);
	pr_hmap_init(&sites);
	c->toff = calloc((size_t)n + 1, sizeof *c->toff);
	if (!rs || !c->toff)
		goto out;
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		if (!is_access(e))
			continue;
		uint32_t v = pr_hmap_get(&vars, pr_var(m, x));
		if (v == UINT32_MAX) {
			if (c->nvar == UINT32_MAX >> 1 || pr_hmap_add(&vars, pr_var(m, x), c->nvar) < 0)
				goto out;
			v = c->nvar++;
		}
		if (c->na == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			uint32_t *a = realloc(avar, nc * sizeof *a);
			if (!a)
				goto out;
			avar = a;
			cap = nc;
		}
		avar[c->na++] = v;
		c->toff[e->thread + 1]++;
	}
	c->voff = calloc((size_t)c->nvar + 1, sizeof *c->voff);
	if (!c->voff)
		goto out;
	for (uint32_t i = 0; i < c->na; i++)
		c->voff[avar[i] + 1]++;
	tfill = prefix(c->toff, m->nthreads);
	vfill = prefix(c->voff, c->nvar);
	size_t na = c->na ? c->na : 1;
	c->ta = malloc(na * sizeof *c->ta);
	c->tev = malloc(na * sizeof *c->tev);
	c->tsite = malloc(na * sizeof *c->tsite);
	sitev = malloc(na * sizeof *sitev);
	c->tvpos = malloc(na * sizeof *c->tvpos);
	c->trace = malloc(na * sizeof *c->trace);
	c->va = malloc(na * sizeof *c->va);
	c->vshared = calloc(c->nvar ? c->nvar : 1, 1);
	c->bloom = calloc(na / BLOCK + 1, sizeof *c->bloom);
	c->vwin = malloc(na * sizeof *c->vwin);
	win = malloc(na * sizeof *win);
	if (!tfill || !vfill || !c->ta || !c->tev || !c->tsite || !sitev || !c->tvpos ||
	    !c->trace || !c->va || !c->vshared || !c->bloom || !c->vwin || !win)
		goto out;
	for (uint32_t u = 0; u < m->nthreads; u++)
		rs[u].lastmod = rs[u].lastacc = PR_NONE;
	for (uint32_t ev = 0, i = 0; ev < m->nev; ev++) {
		const struct avt_event *e = pr_ev(m, ev);
		uint32_t u = e->thread;
		region_step(&rs[u], e);
		if (!is_access(e))
			continue;
		/* with call stacks, a loop going round ends a region (outside
		 * atomic blocks): docs/predict.md, PECAN, regions */
		if (txn && rs[u].depth == 0 && rs[u].lastacc != PR_NONE &&
		    pr_txn_stacked(txn, rs[u].lastacc, ev) && !same_region(txn, rs[u].lastacc, ev))
			rs[u].reg++;
		rs[u].lastacc = ev;
		uint32_t v = avar[i], w = avt_kind_writes(e->kind), x = tfill[u]++, y = vfill[v]++;
		c->ta[x] = (struct tacc){ v << 1 | w, rs[u].reg };
		c->bloom[x / BLOCK][bloom_bit(v) / 64] |= (uint64_t)1 << (bloom_bit(v) % 64);
		c->tev[x] = ev;
		uint64_t sh = pr_hash64(e->site_off ^ ((uint64_t)e->site_mod << 48));
		size_t pos = 0;
		uint32_t s = PR_NONE, t;
		while (s == PR_NONE && pr_hmap_next(&sites, sh, &pos, &t))
			if (pr_ev(m, sitev[t])->site_off == e->site_off &&
			    pr_ev(m, sitev[t])->site_mod == e->site_mod)
				s = t;
		if (s == PR_NONE) {
			if (pr_hmap_add(&sites, sh, nsite) < 0)
				goto out;
			sitev[nsite] = ev;
			s = nsite++;
		}
		c->tsite[x] = s;
		c->tvpos[x] = y;
		c->trace[i++] = x;
		c->va[y] = (struct vacc){ u << 1 | w, x };
		if (c->va[c->voff[v]].tw >> 1 != u)
			c->vshared[v] = 1;
	}
	build_windows(c, win);
	for (uint32_t y = 0; y < c->na; y++)
		memcpy(c->vwin[y], win[c->va[y].x], sizeof c->vwin[y]);
	rc = 0;
out:
	pr_hmap_release(&vars);
	pr_hmap_release(&sites);
	free(sitev);
	free(win);
	free(rs);
	free(avar);
	free(tfill);
	free(vfill);
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

/* An instance whose events were recorded in pattern order happened in the
 * recorded run: nothing to predict. */
static bool reordered(const struct pr_pat *p, const uint32_t *e)
{
	bool r = false;
	for (unsigned i = 0; i + 1 < p->n; i++)
		r |= e[i] > e[i + 1];
	return r;
}

/* The hybrid independence model on the match e[0 .. n) (pattern order),
 * reordered. */
static bool feasible(const struct pec *c, const uint32_t *e)
{
	const struct pr_model *m = c->m;
	const struct pr_pat *p = c->p;
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

/* The hash of a site group: one multiply per site and one mix (it runs
 * for most matches; only the group table and its cache use it). */
static uint64_t sites_hash(const struct pr_pat *pp, const uint32_t *site)
{
	uint64_t h = (uint64_t)(uintptr_t)pp;
	for (unsigned i = 0; i < pp->n; i++)
		h = (h ^ site[i]) * 0x9e3779b97f4a7c15ULL;
	return pr_hash64(h);
}

/* The slot of pattern pp's site group site[] (hash h) in table t of cap
 * slots: the group's, or the empty slot where it would go. */
static size_t grp_slot(const struct site_grp *t, size_t cap, const struct pr_pat *pp,
		       const uint32_t *site, uint64_t h)
{
	size_t i = h & (cap - 1);
	while (t[i].pp && (t[i].pp != pp || memcmp(t[i].site, site, sizeof t[i].site)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* The site group of the match (its events' site ids), or NULL if there
 * is none yet. */
static struct site_grp *site_group(const struct pec *c, const uint32_t *site, uint64_t h)
{
	if (!c->capgrp)
		return NULL;
	struct site_grp *g = &c->grp[grp_slot(c->grp, c->capgrp, c->p, site, h)];
	return g->pp ? g : NULL;
}

static int grow_groups(struct pec *c)
{
	size_t nc = c->capgrp ? c->capgrp * 2 : 1024;
	struct site_grp *t = calloc(nc, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < c->capgrp; i++)
		if (c->grp[i].pp)
			t[grp_slot(t, nc, c->grp[i].pp, c->grp[i].site, sites_hash(c->grp[i].pp, c->grp[i].site))] = c->grp[i];
	free(c->grp);
	c->grp = t;
	c->capgrp = nc;
	return 0;
}

/* Counts a candidate just added in its site group g (NULL: a new one).
 * 0, or -1 if out of memory. */
static int count_site(struct pec *c, struct site_grp *g, const uint32_t *site, uint64_t h)
{
	if (g) {
		g->n++;
		return 0;
	}
	if ((c->ngrp + 1) * 2 > c->capgrp && grow_groups(c) < 0)
		return -1;
	g = &c->grp[grp_slot(c->grp, c->capgrp, c->p, site, h)];
	memcpy(g->site, site, sizeof g->site);
	g->pp = c->p;
	g->n = 1;
	c->ngrp++;
	return 0;
}

/* An empty PECAN candidate of pattern pp. */
static struct pr_cand pecan_cand(const struct pr_pat *pp)
{
	struct pr_cand k;
	memset(&k, 0, sizeof k);
	k.det = PR_DET_PECAN;
	k.pat = PR_PAT_PECAN;
	k.pp = pp;
	return k;
}

/* Candidate k into the table, counted in its site group g (NULL: the
 * group of site, hash h, new). */
static int add_counted(struct pec *c, const struct pr_cand *k, struct site_grp *g,
		       const uint32_t *site, uint64_t h)
{
	if (pr_cands_add(c->cs, k) < 0)
		return -1;
	if (count_site(c, g, site, h) < 0) {
		avt_error("cannot predict: out of memory");
		return -1;
	}
	return 0;
}

/* The match of the bindings for pattern c->p: events ev[] (reordered),
 * their sites site[].  Most matches fall in a site group that is full:
 * those are told first, from the small arrays.  *feas caches feasible()
 * for the patterns of one search group (-1: not asked yet): it depends on
 * the roles and the events only, which they share. */
static int add_match(struct pec *c, const uint32_t *ev, const uint32_t *site, int *feas)
{
	const struct pr_pat *p = c->p;
	uint64_t h = sites_hash(p, site);
	struct site_grp *f = &c->full[(h >> 32) & (FULL_CACHE - 1)];
	if (f->pp == p && !memcmp(f->site, site, sizeof f->site))
		return 0;
	struct site_grp *g = site_group(c, site, h);
	if (g && g->n >= SITE_CAP) {
		*f = *g;
		return 0;
	}
	/* feasibility first: most matches that get here are not, and it
	 * reads fewer events than the candidate table's key (both are pure) */
	if (*feas < 0)
		*feas = feasible(c, ev);
	if (!*feas)
		return 0;
	struct pr_cand k = pecan_cand(p);
	k.nthr = p->nthr;
	memcpy(k.thr, c->thr, sizeof k.thr);
	k.nev = p->n;
	k.order = UINT32_MAX;
	for (unsigned i = 0; i < p->n; i++) {
		k.ev[i] = ev[i];
		if (ev[i] < k.order)
			k.order = ev[i];
	}
	/* one look-up: pr_cands_add() adds nothing when the key is there */
	int added = pr_cands_add(c->cs, &k);
	if (added <= 0)
		return added;
	if (count_site(c, g, site, h) < 0) {
		avt_error("cannot predict: out of memory");
		return -1;
	}
	return 0;
}

/* ---- the search ---- */

static int step(struct pec *c, unsigned k, uint32_t mask);

/* step_thread() and step_new() tell a variable or thread taken by its
 * role by comparing all four roles, without a loop: those past the
 * pattern's nvar and nthr stay unbound (PR_NONE, no variable's or
 * thread's id). */
_Static_assert(PR_PAT_MAX == 4, "step_thread() and step_new() compare four roles");

/* A variable role used by two thread roles needs a shared variable. */
static bool var_ok(const struct pec *c, uint8_t role, uint32_t v)
{
	return !c->vshared_role[role] || c->vshared[v];
}

/* The patterns of mask whose event i wants access type w. */
static uint32_t want(const struct pec *c, uint32_t mask, unsigned i, uint32_t w)
{
	return mask & (w ? c->wmask[i] : ~c->wmask[i]);
}

/* Whether step k, after event i is bound to access x (of variable xv;
 * win: x's vwin filters, or NULL), can bind anything: false when it is a
 * walk along x's thread for a bound variable (step_bound()) and x's
 * window filter or the Bloom filters of every block of its reach rule
 * the variable out (it would bind nothing; most such walks are empty, and
 * this spares the binding and the step). */
static bool walk_may_find(const struct pec *c, unsigned k, unsigned i, uint32_t x, uint32_t xv,
			  const uint64_t *win)
{
	if (k >= c->p->n || !c->thrstep[k] || c->nb[k] != i)
		return true;
	uint32_t v = c->wsame[k] ? xv : c->var[c->wrole[k]];
	if (v == PR_NONE)
		return true; /* a new variable: step_thread()'s own walk */
	int dir = c->wdir[k];
	if (win && !(win[dir < 0] >> win_bit(v) & 1))
		return false;
	int64_t pos = (int64_t)x + dir, end = (int64_t)x + WALK * dir;
	uint32_t b0 = (uint32_t)(pos / BLOCK), b1 = end < 0 ? 0 : (uint32_t)(end / BLOCK);
	if (b1 > (c->na - 1) / BLOCK)
		b1 = (c->na - 1) / BLOCK;
	if (b0 > b1) {
		uint32_t t = b0;
		b0 = b1;
		b1 = t;
	}
	for (uint32_t b = b0; b <= b1; b++)
		if (bloom_has(c, b, v))
			return true;
	return false;
}

/* Binds event i to access x (of variable xv; win: its vwin filters, or
 * NULL) of thread u for the patterns of mask and goes on with step k + 1.
 * Nothing of x's own records is read before the filters pass. */
static int bind(struct pec *c, unsigned k, unsigned i, uint32_t x, uint32_t xv, const uint64_t *win,
		uint32_t u, uint32_t mask)
{
	if (!walk_may_find(c, k + 1, i, x, xv, win))
		return 0;
	const struct pr_pat_ev *pe = &c->p->ev[i];
	uint32_t oldv = c->var[pe->var], oldt = c->thr[pe->thr];
	c->var[pe->var] = xv;
	c->thr[pe->thr] = u;
	c->pick[i] = x;
	c->pthr[i] = u;
	int rc = step(c, k + 1, mask);
	c->var[pe->var] = oldv;
	c->thr[pe->thr] = oldt;
	return rc;
}

/* Event i of a bound thread role and a bound variable, next to its bound
 * neighbour j: for each pattern, the nearest access of the variable of
 * the type it wants within WALK, in j's region or (for another region
 * role) out of it.  Regions only grow along a thread, so the accesses of
 * the variable alone tell where j's region ends. */
static int step_bound(struct pec *c, unsigned k, unsigned i, unsigned j, uint32_t mask)
{
	uint32_t nx = c->pick[j], u = c->pthr[j], nreg = c->ta[nx].reg;
	uint32_t bound = c->var[c->p->ev[i].var];
	bool same_reg = c->p->ev[j].reg == c->p->ev[i].reg;
	int dir = j < i ? 1 : -1;
	int64_t pos = (int64_t)nx + dir, end = (int64_t)nx + WALK * dir;
	if (end < (int64_t)c->toff[u])
		end = (int64_t)c->toff[u];
	if (end > (int64_t)c->toff[u + 1] - 1)
		end = (int64_t)c->toff[u + 1] - 1;
	uint32_t left[2] = { want(c, mask, i, 0), want(c, mask, i, 1) };
	/* a block of the reach whose Bloom filter rules the variable out is
	 * skipped whole */
	while ((left[0] | left[1]) && (dir > 0 ? pos <= end : pos >= end)) {
		int64_t b = pos / BLOCK, bend = dir > 0 ? (b + 1) * BLOCK - 1 : b * BLOCK;
		if (dir > 0 ? bend > end : bend < end)
			bend = end;
		if (!bloom_has(c, (uint32_t)b, bound)) {
			pos = bend + dir;
			continue;
		}
		/* most of the block is other variables: one compare each */
		for (int64_t stop = bend + dir; pos != stop; pos += dir) {
			const struct tacc *a = &c->ta[pos];
			if (a->vw >> 1 != bound)
				continue;
			if (same_reg && a->reg != nreg)
				return 0;
			uint32_t w = a->vw & 1, now = left[w]; /* the nearest */
			if ((!same_reg && a->reg == nreg) || !now)
				continue;
			left[w] = 0;
			if (bind(c, k, i, (uint32_t)pos, bound, NULL, u, now) < 0)
				return -1;
			if (!(left[0] | left[1]))
				return 0;
		}
	}
	return 0;
}

/* Event i of a bound thread role and a new variable role, next to its
 * bound neighbour j: the first NEWVARS distinct variables within WALK, per
 * access type (the patterns wanting one type see the same accesses). */
static int step_thread(struct pec *c, unsigned k, unsigned i, unsigned j, uint32_t mask)
{
	const struct pr_pat_ev *pe = &c->p->ev[i];
	uint32_t nx = c->pick[j], u = c->pthr[j], nreg = c->ta[nx].reg;
	bool same_reg = c->p->ev[j].reg == pe->reg;
	int dir = j < i ? 1 : -1;
	uint32_t left[2] = { want(c, mask, i, 0), want(c, mask, i, 1) };
	uint32_t tried[2][NEWVARS], ntried[2] = { 0, 0 };
	if (c->var[pe->var] != PR_NONE)
		return step_bound(c, k, i, j, mask);
	/* WALK accesses of u's, from nx on; bind() puts back every role it
	 * binds: the bound variables stay these */
	int64_t pos = (int64_t)nx + dir, stop = (int64_t)nx + dir * (WALK + 1);
	if (dir < 0 && stop < (int64_t)c->toff[u] - 1)
		stop = (int64_t)c->toff[u] - 1;
	if (dir > 0 && stop > (int64_t)c->toff[u + 1])
		stop = c->toff[u + 1];
	const uint32_t v0 = c->var[0], v1 = c->var[1], v2 = c->var[2], v3 = c->var[3];
	for (; pos != stop && (left[0] | left[1]); pos += dir) {
		const struct tacc *a = &c->ta[pos];
		uint32_t w = a->vw & 1, v = a->vw >> 1;
		if (same_reg && a->reg != nreg)
			break;
		if ((!same_reg && a->reg == nreg) || !left[w])
			continue;
		if (v == v0 || v == v1 || v == v2 || v == v3 || !var_ok(c, pe->var, v))
			continue;
		bool seen = false;
		for (uint32_t t = 0; t < ntried[w]; t++)
			seen |= tried[w][t] == v;
		if (seen)
			continue;
		tried[w][ntried[w]++] = v;
		if (bind(c, k, i, (uint32_t)pos, v, NULL, u, left[w]) < 0)
			return -1;
		if (ntried[w] == NEWVARS)
			left[w] = 0;
	}
	return 0;
}

/* Event i of a new thread role: another thread's access of a bound
 * variable near the bound event j on it, the first two threads each way
 * (per access type, as in step_thread()). */
static int step_new(struct pec *c, unsigned k, unsigned i, unsigned j, uint32_t mask)
{
	uint32_t vp = c->tvpos[c->pick[j]], v = c->ta[c->pick[j]].vw >> 1;
	int64_t reach = c->p->consecutive ? 1 : TWALK, lo = c->voff[v], hi = c->voff[v + 1];
	/* bind() puts back every role it binds: the bound threads stay these */
	const uint32_t t0 = c->thr[0], t1 = c->thr[1], t2 = c->thr[2], t3 = c->thr[3];
	const struct vacc *va = c->va;
	for (int dir = -1; dir <= 1; dir += 2) {
		uint32_t left[2] = { want(c, mask, i, 0), want(c, mask, i, 1) };
		uint32_t seen[2][2], nseen[2] = { 0, 0 };
		/* reach accesses each way, within v's list */
		int64_t pos = (int64_t)vp + dir, stop = (int64_t)vp + dir * (reach + 1);
		if (dir < 0 && stop < lo - 1)
			stop = lo - 1;
		if (dir > 0 && stop > hi)
			stop = hi;
		for (; pos != stop && (left[0] | left[1]); pos += dir) {
			const struct vacc *a = &va[pos];
			uint32_t w = a->tw & 1, u = a->tw >> 1;
			/* one branch, not six: which way it goes is the data's */
			if (!left[w] | (u == t0) | (u == t1) | (u == t2) | (u == t3) |
			    ((nseen[w] != 0) & (seen[w][0] == u)))
				continue;
			seen[w][nseen[w]++] = u;
			if (bind(c, k, i, a->x, v, c->vwin[pos], u, left[w]) < 0)
				return -1;
			if (nseen[w] == 2)
				left[w] = 0;
		}
	}
	return 0;
}

static int step(struct pec *c, unsigned k, uint32_t mask)
{
	const struct pr_pat *p = c->p;
	if (k == p->n) {
		/* the events, whether they were recorded in pattern order and
		 * their sites are the same for every pattern of the group (one
		 * set of roles): once per match */
		uint32_t ev[PR_PAT_MAX], site[PR_PAT_MAX] = { 0 };
		for (unsigned i = 0; i < p->n; i++)
			ev[i] = c->tev[c->pick[i]];
		if (!reordered(p, ev))
			return 0;
		for (unsigned i = 0; i < p->n; i++)
			site[i] = c->tsite[c->pick[i]];
		int feas = -1;
		/* mask's patterns in turn (its bits are below ngp) */
		for (uint32_t left = mask; left; left &= left - 1) {
			unsigned b = (unsigned)__builtin_ctz(left);
			c->p = c->gp[b];
			int rc = add_match(c, ev, site, &feas);
			c->p = p;
			if (rc < 0)
				return -1;
		}
		return 0;
	}
	unsigned i = p->order[k];
	if (c->thrstep[k])
		return step_thread(c, k, i, c->nb[k], mask);
	return step_new(c, k, i, c->nb[k], mask);
}

/* The plan of pattern c->p (struct pec): which bound event each step
 * starts from.  Whether a step's thread role is bound depends on the
 * order only: the roles of the events order[0 .. k) are. */
static void search_plan(struct pec *c)
{
	const struct pr_pat *p = c->p;
	for (unsigned r = 0; r < PR_PAT_MAX; r++) {
		int t = -1;
		c->vshared_role[r] = false;
		for (unsigned i = 0; i < p->n; i++)
			if (p->ev[i].var == r) {
				if (t >= 0 && t != p->ev[i].thr)
					c->vshared_role[r] = true;
				t = p->ev[i].thr;
			}
	}
	for (unsigned k = 1; k < p->n; k++) {
		unsigned i = p->order[k];
		bool chosen[PR_PAT_MAX] = { false }, thr_bound = false;
		for (unsigned s = 0; s < k; s++) {
			chosen[p->order[s]] = true;
			thr_bound |= p->ev[p->order[s]].thr == p->ev[i].thr;
		}
		c->thrstep[k] = thr_bound;
		c->nb[k] = PR_PAT_MAX;
		for (int d = -1; thr_bound && d <= 1 && c->nb[k] == PR_PAT_MAX; d += 2)
			for (int j = (int)i + d; j >= 0 && j < p->n; j += d)
				if (p->ev[j].thr == p->ev[i].thr) {
					if (chosen[j])
						c->nb[k] = (uint8_t)j;
					break;
				}
		for (unsigned s = 0; !thr_bound && s < k && c->nb[k] == PR_PAT_MAX; s++)
			if (p->ev[p->order[s]].var == p->ev[i].var)
				c->nb[k] = p->order[s];
		BUG_ON(c->nb[k] == PR_PAT_MAX); /* pr_pat_prepare() picked a neighbour */
		c->wrole[k] = p->ev[i].var;
		c->wsame[k] = p->ev[i].var == p->ev[c->nb[k]].var;
		c->wdir[k] = c->nb[k] < i ? 1 : -1;
	}
}

/* Patterns a and b have the same roles and search order. */
static bool same_roles(const struct pr_pat *a, const struct pr_pat *b)
{
	if (a->n != b->n || a->nthr != b->nthr || a->nvar != b->nvar ||
	    a->consecutive != b->consecutive)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (a->ev[i].thr != b->ev[i].thr || a->ev[i].var != b->ev[i].var ||
		    a->ev[i].reg != b->ev[i].reg || a->order[i] != b->order[i])
			return false;
	return true;
}

/* Searches the group c->gp[0 .. ngp): every access in trace order starts
 * its first event. */
static int search(struct pec *c)
{
	c->p = c->gp[0];
	search_plan(c);
	memset(c->wmask, 0, sizeof c->wmask);
	for (unsigned b = 0; b < c->ngp && b < GROUP_MAX; b++)
		for (unsigned i = 0; i < c->p->n; i++)
			c->wmask[i] |= (uint32_t)c->gp[b]->ev[i].write << b;
	for (unsigned r = 0; r < PR_PAT_MAX; r++)
		c->thr[r] = c->var[r] = PR_NONE;
	uint32_t all = c->ngp == 32 ? UINT32_MAX : (1u << c->ngp) - 1;
	for (uint32_t i = 0; i < c->na; i++) {
		uint32_t x = c->trace[i], vw = c->ta[x].vw, mask = want(c, all, 0, vw & 1);
		if (!(i & 255) && pr_stopped())
			return 0;
		if (!mask || !var_ok(c, c->p->ev[0].var, vw >> 1))
			continue;
		uint32_t lo = 0, hi = c->m->nthreads; /* x's thread: the last u with toff[u] <= x */
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (c->toff[mid] <= x)
				lo = mid;
			else
				hi = mid;
		}
		if (bind(c, 0, 0, x, vw >> 1, NULL, lo, mask) < 0)
			return -1;
	}
	return 0;
}

/* ---- site pairs ---- */

/*
 * The race pattern pairs neighbours in a variable's order only: a read
 * with twenty other accesses between it and the other thread's write
 * (explore_nullpub's USE and CLOSE) is no race to it.  Here every pair of
 * sites that conflict (two threads, one writing, no communication orders
 * them, no common lock) gets one race candidate: the first access b, in
 * trace order, with such a partner, and the partner a the latest access
 * of that thread and site before b (if it happens before b, so do the
 * earlier ones; and the nearest is the least to move), reversed.
 * docs/predict.md, PECAN, "Site pairs".
 */

/* (thread, site, access type) of a variable remembered at once, the most
 * recently seen first: the work per access is bounded by this. */
#define PAIR_SLOTS 8
/* Pair candidates per variable (the same code racing on one variable
 * through many sites is few bugs), and per trace. */
#define PAIR_VAR_CAP 2
#define PAIR_MAX 64

struct pair_slot {
	uint32_t thr, site, w;
	uint32_t x;     /* its latest access (thread order) */
	uint32_t after; /* a thread x happens before (at the access seen), or PR_NONE */
};

/* Site pairs found in a candidate already (the pattern's group or the
 * covered set, for good): a direct-mapped cache of their keys in front of
 * those two hash look-ups, which loops bring back again and again (most
 * of the site pairs' time on the benchmark's trace before it). */
#define KNOWN_CACHE 4096

static uint64_t known_key(uint32_t sb, uint32_t wb, uint32_t sa, uint32_t wa)
{
	return ((uint64_t)sb << 33 | (uint64_t)wb << 32) ^ ((uint64_t)sa << 1 | wa);
}

static size_t known_slot(uint64_t k)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 52) & (KNOWN_CACHE - 1);
}

/* The race of access xb (the later) and xa reversed, if its sites have no
 * candidate of that pattern yet (pecan's own, or an earlier pair): 1 if
 * added, 0 if not, -1 if out of memory. */
static int pair_add(struct pec *c, const struct pr_pat *pp, const struct vacc *b,
		    const struct pair_slot *a)
{
	uint32_t site[PR_PAT_MAX] = { c->tsite[b->x], a->site };
	c->p = pp;
	uint64_t h = sites_hash(pp, site);
	if (site_group(c, site, h))
		return 0;
	struct pr_cand k = pecan_cand(pp);
	k.pair = true;
	k.nthr = k.nev = 2;
	k.thr[0] = b->tw >> 1;
	k.thr[1] = a->thr;
	k.ev[0] = c->tev[b->x];
	k.ev[1] = k.order = c->tev[a->x];
	return add_counted(c, &k, NULL, site, h) < 0 ? -1 : 1;
}

/* Access b of variable v, now the latest of its (thread, site, type):
 * first in s[0 .. *ns), the least recent dropped when full. */
static void slot_note(struct pair_slot *s, uint32_t *ns, uint32_t u, uint32_t site, uint32_t w,
		      uint32_t x)
{
	uint32_t i = 0;
	while (i < *ns && (s[i].thr != u || s[i].site != site || s[i].w != w))
		i++;
	if (i == *ns && *ns < PAIR_SLOTS)
		(*ns)++;
	if (i == *ns)
		i--;
	memmove(&s[1], &s[0], i * sizeof *s);
	s[0] = (struct pair_slot){ u, site, w, x, PR_NONE };
}

/* Events x then y as a key of the covered set: their sites and types. */
static uint64_t pair_key(const struct avt_event *x, const struct avt_event *y)
{
	uint64_t h = pr_hash64(x->site_off ^ ((uint64_t)x->site_mod << 48) ^ ((uint64_t)x->kind << 40));
	return pr_hash64(h ^ y->site_off ^ ((uint64_t)y->site_mod << 48) ^ ((uint64_t)y->kind << 40));
}

/* The site pairs other candidates run one way round already (cs->c[0 ..
 * n), PENELOPE's and the patterns'): two accesses of different threads,
 * in the candidate's order.  Keyed by a 64-bit hash of the sites and
 * types (a collision only drops a pair).  0, or -1 if out of memory. */
static int covered_pairs(const struct pec *c, const struct pr_pat *const race[2][2],
			 struct pr_hmap *h)
{
	for (size_t k = 0; k < c->cs->n; k++) {
		const struct pr_cand *d = &c->cs->c[k];
		if (d->det == PR_DET_PECAN && (d->pp == race[0][1] || d->pp == race[1][0] ||
					       d->pp == race[1][1]))
			continue; /* its site group tells (pair_open()) */
		for (uint32_t i = 0; i < d->nev; i++)
			for (uint32_t j = i + 1; j < d->nev; j++) {
				const struct avt_event *x = pr_ev(c->m, d->ev[i]), *y = pr_ev(c->m, d->ev[j]);
				if (d->det == PR_DET_DEADLOCK || !is_access(x) || !is_access(y) ||
				    x->thread == y->thread)
					continue;
				if (pr_hmap_get(h, pair_key(x, y)) == UINT32_MAX &&
				    pr_hmap_add(h, pair_key(x, y), 0) < 0)
					return -1;
			}
	}
	return 0;
}

/* Whether b's partner a in slot can run after b, in no candidate yet:
 * checks cheapest first (a memo of the last thread a happens before, the
 * pair's group, the covered set, then the clocks and locksets). */
static bool pair_open(struct pec *c, const struct pr_hmap *covered, uint64_t *known,
		      const struct pr_pat *pp, const struct vacc *b, struct pair_slot *a)
{
	uint32_t ub = b->tw >> 1, ea = c->tev[a->x], eb = c->tev[b->x];
	if (a->thr == ub || !((b->tw & 1) | a->w) || a->after == ub)
		return false;
	uint64_t k = known_key(c->tsite[b->x], b->tw & 1, a->site, a->w);
	if (known[known_slot(k)] == k)
		return false;
	uint32_t site[PR_PAT_MAX] = { c->tsite[b->x], a->site };
	c->p = pp;
	if (site_group(c, site, sites_hash(pp, site)) ||
	    pr_hmap_get(covered, pair_key(pr_ev(c->m, eb), pr_ev(c->m, ea))) != UINT32_MAX) {
		known[known_slot(k)] = k;
		return false;
	}
	if (pr_sclock_hb(&c->sc, ea, eb)) {
		a->after = ub; /* so does every later access of ub */
		return false;
	}
	return !pr_ls_conflict(c->m, c->m->ls[ea], c->m->ls[eb]);
}

/* The pair candidates of variable v; *made counts them over the trace. */
static int pairs_var(struct pec *c, const struct pr_hmap *covered, uint64_t *known,
		     const struct pr_pat *const race[2][2], uint32_t v, uint32_t *made)
{
	struct pair_slot s[PAIR_SLOTS];
	uint32_t ns = 0, nv = 0;
	for (uint32_t pos = c->voff[v]; pos < c->voff[v + 1]; pos++) {
		const struct vacc *b = &c->va[pos];
		uint32_t wb = b->tw & 1;
		for (uint32_t i = 0; i < ns; i++) {
			const struct pr_pat *pp = race[wb][s[i].w];
			if (!pair_open(c, covered, known, pp, b, &s[i]))
				continue;
			int rc = pair_add(c, pp, b, &s[i]);
			if (rc < 0)
				return -1;
			if (rc && (++nv == PAIR_VAR_CAP || ++*made == PAIR_MAX))
				return 0;
		}
		slot_note(s, &ns, b->tw >> 1, c->tsite[b->x], wb, b->x);
	}
	return 0;
}

/* The built-in race patterns in pats, by the types of the event run first
 * and second: false if the built-ins are not searched. */
static bool race_patterns(const struct pr_patterns *const *pats, unsigned npats,
			  const struct pr_pat *race[2][2])
{
	const struct pr_patterns *b = pr_builtin_patterns();
	static const char *const names[2][2] = { { NULL, "race-RW" }, { "race-WR", "race-WW" } };
	bool found = false;
	memset(race, 0, 4 * sizeof race[0][0]);
	for (unsigned s = 0; s < npats; s++)
		found |= pats[s] == b;
	for (size_t i = 0; found && i < b->n; i++)
		for (unsigned f = 0; f < 2; f++)
			for (unsigned g = 0; g < 2; g++)
				if (names[f][g] && !strcmp(b->p[i].name, names[f][g]))
					race[f][g] = &b->p[i];
	return found && race[0][1] && race[1][0] && race[1][1];
}

/* The site pairs' candidates (after the patterns' own and PENELOPE's: a
 * pair one of them runs that way round is not asked again). */
static int pairs(struct pec *c, const struct pr_patterns *const *pats, unsigned npats)
{
	const struct pr_pat *race[2][2];
	struct pr_hmap covered;
	uint32_t made = 0;
	int rc = 0;
	if (!race_patterns(pats, npats, race))
		return 0;
	pr_hmap_init(&covered);
	/* key 0 is a read-read pair of site 0 with itself: never asked */
	uint64_t *known = calloc(KNOWN_CACHE, sizeof *known);
	if (!known || covered_pairs(c, race, &covered) < 0) {
		avt_error("cannot predict: out of memory");
		rc = -1;
	}
	for (uint32_t v = 0; !rc && v < c->nvar && made < PAIR_MAX; v++) {
		if (!(v & 255) && pr_stopped())
			break;
		if (c->vshared[v])
			rc = pairs_var(c, &covered, known, race, v, &made);
	}
	free(known);
	pr_hmap_release(&covered);
	return rc;
}

static void pec_release(struct pec *c)
{
	pr_sclock_release(&c->sc);
	free(c->ta);
	free(c->tev);
	free(c->tsite);
	free(c->tvpos);
	free(c->trace);
	free(c->toff);
	free(c->va);
	free(c->bloom);
	free(c->vwin);
	free(c->voff);
	free(c->vshared);
	free(c->grp);
	free(c->full);
}

int pr_pecan(const struct pr_model *m, struct pr_cands *cs,
	     const struct pr_patterns *const *pats, unsigned npats)
{
	return pr_pecan_atomic(m, cs, pats, npats, NULL, NULL);
}

int pr_pecan_atomic(const struct pr_model *m, struct pr_cands *cs,
		    const struct pr_patterns *const *pats, unsigned npats,
		    bool (*atomic)(void *ctx, uint16_t mod, uint64_t off), void *atomic_ctx)
{
	struct pec c;
	int rc = -1;
	memset(&c, 0, sizeof c);
	c.m = m;
	c.cs = cs;
	struct pr_txn *txn = pr_txn_new(m);
	if (!txn)
		goto out; /* it said why */
	txn->atomic = atomic;
	txn->atomic_ctx = atomic_ctx;
	rc = build(&c, txn);
	pr_txn_free(txn);
	if (rc < 0)
		goto oom;
	rc = -1;
	if (!c.na) {
		rc = 0;
		goto out;
	}
	c.full = calloc(FULL_CACHE, sizeof *c.full);
	if (!c.full || pr_sclock_build(&c.sc, m) < 0)
		goto oom;
	/* patterns in order; each joins the first group of its roles (a
	 * pattern's candidates do not depend on the others searched) */
	bool *done = NULL;
	size_t total = 0;
	for (unsigned s = 0; s < npats; s++)
		total += pats[s] ? pats[s]->n : 0;
	done = calloc(total ? total : 1, sizeof *done);
	if (!done)
		goto oom;
	for (size_t g = 0; g < total; g++) {
		if (done[g])
			continue;
		c.ngp = 0;
		for (size_t base = 0, s = 0; s < npats; base += pats[s] ? pats[s]->n : 0, s++)
			for (size_t i = 0; pats[s] && i < pats[s]->n; i++) {
				const struct pr_pat *pp = &pats[s]->p[i];
				if (base + i < g || done[base + i] || c.ngp == GROUP_MAX ||
				    (c.ngp && !same_roles(c.gp[0], pp)))
					continue;
				c.gp[c.ngp++] = pp;
				done[base + i] = true;
			}
		if (search(&c) < 0) {
			free(done);
			goto out; /* pr_cands_add() said why */
		}
	}
	free(done);
	if (pairs(&c, pats, npats) < 0)
		goto out; /* it said why */
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
		/* nothing to drop before u has seen some other thread j past
		 * its limit (model.h, pr_vc_passes()) */
		uint32_t from = region_end(m, u, p->p0), end = p->stop[i] < m->tnev[u] ? p->stop[i] + 1 : m->tnev[u];
		uint32_t k0 = end;
		for (uint32_t j = 0; j < p->nthr; j++)
			if (j != i) {
				uint32_t kj = pr_vc_passes(m, u, from, end, p->thr[j], p->limit[j]);
				k0 = kj < k0 ? kj : k0;
			}
		for (uint32_t k = k0; k < end; k++) {
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
	pr_plan_vars(m, c, p);
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
