/*
 * PENELOPE over the accesses of a trace (penelope.h).
 *
 * Phase IIa of the paper (cut-points) is done per variable: its accesses
 * are grouped by (thread, kind, site).  Each window of thread T1 (two
 * accesses of the variable in one transaction, consecutive: any longer
 * window contains a consecutive one with the same culprits, except for
 * WRW, whose window is two consecutive writes with reads in between) is
 * checked against, for every group of another thread, the nearest access
 * recorded before the window and the nearest after it.  The nearest is the
 * one most likely concurrent (program order makes every earlier one
 * ordered if the nearest is), and the dedupe key names sites, not events,
 * so one representative per group is all a window can add.
 *
 * Why clocks without lock edges: PENELOPE keeps vector clocks for thread
 * creation and barriers only and leaves locks to locksets and acquisition
 * histories, because a predicted run may take a lock in another order
 * than the recorded one.  The model's clocks include lock edges (SideTrack
 * and the deadlock detector reason about those themselves), so the
 * detector keeps its own: create/join and condition signals exactly,
 * semaphores and barriers through the model's clock of their sources
 * (which counts lock edges too: only conservative).
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "penelope.h"
#include "sclock.h"
#include "predict.h"
#include "trace/log.h"
#include "txn.h"

/* ---- accesses and their transactions ---- */

/* What the scan needs of an access, kept here: the scan goes variable by
 * variable, and fetching each event from the trace would be a cache miss. */
struct acc {
	uint64_t off;     /* site */
	uint32_t ev;
	uint32_t thread;
	uint16_t kind, mod;
	uint32_t seg;     /* transaction boundaries (and atomic blocks) before it */
	uint32_t modseg;  /* seg, and also changes of module (no stacks) */
	uint32_t blk;     /* begin of the atomic block around it, or PR_NONE */
	uint32_t ls;      /* lockset node at it */
	uint32_t nrel;    /* releases by its thread so far */
};

struct thst {
	uint32_t seg, modseg, lastmod, depth, blk;
};

/* Per thread at event x: a boundary, an atomic block's begin or end (a
 * block is a transaction of its own, so both delimit), a module change. */
static void track(struct thst *th, const struct avt_event *e, uint32_t x)
{
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
		th->seg++;
		th->modseg++;
		th->blk = x;
	}
	if (e->kind == AVT_EV_END && th->depth > 0 && --th->depth == 0) {
		th->seg++;
		th->modseg++;
		th->blk = PR_NONE;
	}
}

static bool is_access(const struct avt_event *e)
{
	return e->kind == AVT_EV_READ || avt_kind_writes(e->kind);
}

/* What add_drops() asks in the search, precomputed: for each acquisition
 * x of thread u that joined a lock clock, and each other thread j, the
 * component in_lock[x][j].  As a table (every value, thread by thread,
 * j-major within a thread: a scan reads one array in order) when it fits
 * in pr_penelope_droptab_bytes; else per block of `block` consecutive
 * events of u the largest value, and add_drops() skips a block within the
 * limit.  Planning a culprit far from its window costs the acquisitions
 * in between, which the table makes a sequential read (docs/predict.md,
 * Performance). */
size_t pr_penelope_droptab_bytes = (size_t)64 << 20;

#define DROPTAB_RUN 64

struct dropidx {
	/* the table: u's acquisitions are acq[first[u] .. first[u + 1]) (their
	 * tindex); val[first[u] * n + j * count_u + i] = in_lock[acq i][j];
	 * pmax[bfirst[u] * n + j * runs_u + r]: the largest of u's values for
	 * j in its runs 0 .. r of DROPTAB_RUN acquisitions (it grows with r:
	 * a binary search finds the first run past a limit) */
	uint32_t *acq, *val, *pmax, *bfirst;
	/* or the blocks: u's are first[u] .. first[u + 1]; max[block][thread] */
	uint32_t block;
	uint32_t *max;
	uint32_t *first;
};

static int plan(const struct pr_model *m, const struct pr_cand *c, bool with_e2, bool park,
		const struct dropidx *ix, struct pr_plan *p);

struct pen {
	const struct pr_model *m;
	struct pr_cands *cs;
	struct pr_txn *txn;
	struct pr_sclock sc;
	struct acc *acc;          /* every access, by variable, in trace order in each */
	uint32_t nacc;
	uint32_t nvar;
	uint32_t *varoff;         /* accesses of var v: acc[varoff[v] .. varoff[v + 1]) */
	uint32_t *prev, *prevw, *stamp; /* per thread: last access, last write of the variable */
	struct dropidx ix;
};

/* Pass 1: a variable id for every address accessed, and varoff[v + 1] =
 * the number of accesses of v. */
static int count_vars(struct pen *p, struct pr_hmap *vars)
{
	const struct pr_model *m = p->m;
	uint32_t *n = NULL, cap = 0;
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		if (!is_access(e))
			continue;
		uint32_t v = pr_hmap_get(vars, pr_var(m, x));
		if (v == UINT32_MAX) {
			if (p->nvar + 1 >= cap) {
				uint32_t nc = cap ? cap * 2 : 64;
				uint32_t *g = realloc(n, nc * sizeof *g);
				if (!g)
					goto oom;
				memset(g + cap, 0, (nc - cap) * sizeof *g);
				n = g;
				cap = nc;
			}
			if (pr_hmap_add(vars, pr_var(m, x), p->nvar) < 0)
				goto oom;
			v = p->nvar++;
		}
		n[v + 1]++;
		p->nacc++;
	}
	p->varoff = n ? n : calloc(1, sizeof *p->varoff);
	return p->varoff ? 0 : -1;
oom:
	free(n);
	return -1;
}

/* Pass 2: each access's record, straight to its place: by variable, in
 * trace order inside each. */
static int place(struct pen *p, const struct pr_hmap *vars)
{
	const struct pr_model *m = p->m;
	int rc = -1;
	struct thst *th = calloc(m->nthreads, sizeof *th);
	uint32_t *nrel = calloc(m->nthreads, sizeof *nrel);
	uint32_t *fill = malloc(((size_t)p->nvar + 1) * sizeof *fill);
	if (!th || !nrel || !fill)
		goto out;
	for (uint32_t v = 0; v < p->nvar; v++)
		p->varoff[v + 1] += p->varoff[v];
	memcpy(fill, p->varoff, ((size_t)p->nvar + 1) * sizeof *fill);
	for (uint32_t u = 0; u < m->nthreads; u++)
		th[u] = (struct thst){ 0, 0, PR_NONE, 0, PR_NONE };
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		struct thst *t = &th[e->thread];
		track(t, e, x);
		if (pr_is_release(e))
			nrel[e->thread]++;
		if (!is_access(e))
			continue;
		p->acc[fill[pr_hmap_get(vars, pr_var(m, x))]++] =
			(struct acc){ e->site_off, x, e->thread, e->kind, e->site_mod, t->seg,
				      t->modseg, t->blk, m->ls[x], nrel[e->thread] };
	}
	rc = 0;
out:
	free(th);
	free(nrel);
	free(fill);
	return rc;
}

static int collect(struct pen *p)
{
	struct pr_hmap vars;
	int rc = -1;
	pr_hmap_init(&vars);
	if (count_vars(p, &vars) < 0)
		goto out;
	rc = 0;
	if (!p->nacc)
		goto out; /* a trace of synchronization only */
	p->acc = malloc(p->nacc * sizeof *p->acc);
	rc = p->acc ? place(p, &vars) : -1;
out:
	pr_hmap_release(&vars);
	return rc;
}

/* Both accesses made directly in the thread's body (its start routine,
 * main for T0: the outermost frame), b at an earlier instruction than a:
 * the body's loop went round between them, so they are two iterations of
 * the thread's work, not one operation (txn.h's body rule counts windows
 * made directly in the body, which is right for straight-line code only).
 * Needs stacks: without them the sites may be in different functions. */
static bool body_loop(const struct pen *p, const struct acc *a, const struct acc *b)
{
	const struct avt_stack *sa = trace_stack(p->m->t, pr_ev(p->m, a->ev)->seq);
	const struct avt_stack *sb = trace_stack(p->m->t, pr_ev(p->m, b->ev)->seq);
	return sa && sb && sa->depth == 1 && sb->depth == 1 && a->mod == b->mod && b->off < a->off;
}

/* Are accesses a and b (a first, one thread) in one transaction?  The
 * functions to blame go to blame[0 .. *nblame). */
static bool same_txn(const struct pen *p, const struct acc *a, const struct acc *b,
		     struct predict_site *blame, uint32_t *nblame)
{
	*nblame = 0;
	if (a->seg != b->seg)
		return false;
	if (a->blk != PR_NONE) {
		const struct avt_event *bg = pr_ev(p->m, a->blk);
		blame[0].mod = bg->site_mod;
		blame[0].off = bg->site_off;
		*nblame = 1;
		return true;
	}
	if (pr_txn_stacked(p->txn, a->ev, b->ev))
		return !body_loop(p, a, b) && pr_txn_window(p->txn, a->ev, b->ev, blame, nblame);
	/* txn.h's rule without stacks, from the records (no event fetched):
	 * one module run, and the same site twice is a loop */
	return a->modseg == b->modseg && (a->mod != b->mod || a->off != b->off);
}

/* ---- cut-points ---- */

/* Thread u's state after event e (tindex + 1 events) and thread v's after
 * f: disjoint locksets and compatible acquisition histories (Kahlon et
 * al.: then both points can be reached at once).  1, 0, or -1 if out of
 * memory. */
static int compatible(const struct pr_model *m, uint32_t e, uint32_t f)
{
	uint32_t le = m->ls[e], lf = m->ls[f];
	struct pr_ah a, b;
	if (!le || !lf)
		return 1; /* a thread holding nothing blocks nobody */
	if (pr_ls_conflict(m, le, lf))
		return 0;
	const struct avt_event *ee = pr_ev(m, e), *ef = pr_ev(m, f);
	if (pr_ah_at(m, ee->thread, ee->tindex + 1, &a) < 0)
		return -1;
	if (pr_ah_at(m, ef->thread, ef->tindex + 1, &b) < 0) {
		pr_ah_release(&a);
		return -1;
	}
	int ok = pr_ah_compatible(&a, &b);
	pr_ah_release(&a);
	pr_ah_release(&b);
	return ok;
}

/* The first point e of the window [e1, e2) where T1 can stand while T2
 * is at f, into *cut (PR_NONE if none).  Only e1 and releases can be
 * first: an acquisition only adds to the lockset and the histories.  T1
 * must get there without T2 going past f. */
static int find_cut(const struct pr_model *m, const struct pr_sclock *sc, uint32_t e1, uint32_t e2,
		    uint32_t f, uint32_t *cut)
{
	const struct avt_event *a = pr_ev(m, e1), *b = pr_ev(m, e2), *ef = pr_ev(m, f);
	*cut = PR_NONE;
	for (uint32_t k = a->tindex; k < b->tindex; k++) {
		uint32_t e = m->tev[a->thread][k];
		if (e != e1 && !pr_is_release(pr_ev(m, e)))
			continue;
		if (pr_sclock_at(sc, e, ef->thread) > ef->tindex + 1)
			return 0; /* and so is every later e */
		int ok = compatible(m, e, f);
		if (ok < 0)
			return -1;
		if (ok) {
			*cut = e;
			return 0;
		}
	}
	return 0;
}

/* ---- windows and culprits ---- */

/* Some of the locks (with modes) held at each of a set of points: at most
 * four are kept, which only makes conclusions drawn from it weaker. */
struct lset {
	uint32_t n;
	uint32_t lock[4], mode[4];
};

static void lset_of(const struct pr_model *m, uint32_t node, struct lset *s)
{
	s->n = 0;
	for (; node && s->n < 4; node = m->lsn[node].parent) {
		s->lock[s->n] = m->lsn[node].lock;
		s->mode[s->n++] = m->lsn[node].mode;
	}
}

/* s := the locks in both; a lock read-held in either is only sure read. */
static void lset_meet(struct lset *s, const struct lset *o)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t j = 0; j < o->n; j++)
			if (s->lock[i] == o->lock[j]) {
				s->lock[k] = s->lock[i];
				s->mode[k++] = s->mode[i] == PR_READ || o->mode[j] == PR_READ ?
					PR_READ : PR_EXCL;
				break;
			}
	s->n = k;
}

static bool lset_conflict(const struct lset *a, const struct lset *b)
{
	for (uint32_t i = 0; i < a->n; i++)
		for (uint32_t j = 0; j < b->n; j++)
			if (a->lock[i] == b->lock[j] && (a->mode[i] == PR_EXCL || b->mode[j] == PR_EXCL))
				return true;
	return false;
}

/* One variable's accesses sorted into groups of one thread, kind, site. */
struct gent {
	uint64_t off;
	uint32_t thread, ev;
	uint16_t kind, mod;
	uint32_t ls;
};

static int gent_cmp(const void *pa, const void *pb)
{
	const struct gent *a = pa, *b = pb;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->mod != b->mod)
		return a->mod < b->mod ? -1 : 1;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static bool same_group(const struct gent *a, const struct gent *b)
{
	return a->thread == b->thread && a->kind == b->kind && a->mod == b->mod && a->off == b->off;
}

/* Windows of one pattern and pair of sites: with a culprit group and a
 * variant, one dedupe key.  live lists the (group * 2 + variant) entries
 * that may still give a candidate: right kind, not shut out by a lock
 * held throughout every window of the pair and at every access of the
 * group, not predicted yet. */
struct pair {
	uint64_t off1, off2;
	uint16_t mod1, mod2;
	enum pr_pattern pat;
	struct lset held;
	uint32_t *live, nlive;
	uint8_t *tries;    /* per live entry: instances that could not be planned */
};

struct wrec {
	uint32_t a, b;     /* the accesses (indices into acc) */
	uint32_t pair;
	bool locked;       /* T1 holds a lock at a and releases none before b */
};

/* The scan of one variable (buffers reused from one to the next). */
struct vscan {
	struct gent *g, *tmp;
	uint32_t *gid, *rep;  /* sort_groups(): each entry's group, a member of each group */
	struct pr_hmap gmap;  /* sort_groups(): group key hash -> group */
	uint32_t n, ngrp;
	uint32_t *start;   /* group k: g[start[k] .. start[k + 1]) */
	struct lset *gheld; /* group k: locks held at each of its accesses */
	struct pair *pairs;
	uint32_t npair, cappair;
	struct pr_hmap pmap; /* pair key hash -> pair index */
	uint32_t *live;    /* storage of the pairs' live lists */
	uint8_t *tries;
	size_t caplive;
	struct wrec *win;
	uint32_t nwin, capwin;
};

/* The pattern of window (a, b) when a culprit writes. */
static enum pr_pattern pattern(const struct acc *a, const struct acc *b)
{
	if (!avt_kind_writes(a->kind))
		return avt_kind_writes(b->kind) ? PR_PAT_RWW : PR_PAT_RWR;
	return avt_kind_writes(b->kind) ? PR_PAT_WWW : PR_PAT_WWR;
}

/* Does T1 hold a lock at e1 and release none before e2?  Then e1 is the
 * only possible cut-point, and a culprit needing one of its locks fails. */
static bool held_throughout(const struct acc *a, const struct acc *b)
{
	return a->ls && a->nrel == b->nrel;
}

/* vs->g[0 .. n) in gent_cmp() order: the distinct groups are sorted, and
 * the entries, in trace order already, are counted into place (a variable
 * has many accesses and few sites).  0, or -1 if out of memory. */
static int sort_groups(struct vscan *vs)
{
	uint32_t ng = 0, *cnt = vs->start; /* free until the groups are made */
	pr_hmap_release(&vs->gmap);
	pr_hmap_init(&vs->gmap);
	for (uint32_t i = 0; i < vs->n; i++) {
		const struct gent *e = &vs->g[i];
		uint64_t h = pr_hash64(e->off ^ pr_hash64(((uint64_t)e->thread << 32) ^
							  ((uint64_t)e->kind << 16) ^ e->mod));
		size_t pos = 0;
		uint32_t k = PR_NONE, c;
		while (k == PR_NONE && pr_hmap_next(&vs->gmap, h, &pos, &c))
			if (same_group(&vs->g[vs->rep[c]], e))
				k = c;
		if (k == PR_NONE) {
			if (pr_hmap_add(&vs->gmap, h, ng) < 0)
				return -1;
			vs->rep[ng] = i;
			vs->tmp[ng] = *e;
			vs->tmp[ng].ev = ng; /* distinct groups: ev never decides */
			k = ng++;
		}
		vs->gid[i] = k;
	}
	qsort(vs->tmp, ng, sizeof *vs->tmp, gent_cmp);
	for (uint32_t r = 0; r < ng; r++)
		vs->rep[vs->tmp[r].ev] = r; /* now the rank of each group */
	memset(cnt, 0, ((size_t)ng + 1) * sizeof *cnt);
	for (uint32_t i = 0; i < vs->n; i++)
		cnt[vs->rep[vs->gid[i]] + 1]++;
	for (uint32_t r = 0; r < ng; r++)
		cnt[r + 1] += cnt[r];
	for (uint32_t i = 0; i < vs->n; i++)
		vs->tmp[cnt[vs->rep[vs->gid[i]]]++] = vs->g[i];
	struct gent *t = vs->g;
	vs->g = vs->tmp;
	vs->tmp = t;
	return 0;
}

/* Groups of variable v: 1, 0 if no two threads access it or nobody
 * writes it (nothing can conflict), -1 if out of memory. */
static int make_groups(struct pen *p, uint32_t v, struct vscan *vs)
{
	const struct pr_model *m = p->m;
	uint32_t lo = p->varoff[v], hi = p->varoff[v + 1], first = PR_NONE;
	bool shared = false, written = false;
	vs->n = vs->ngrp = 0;
	for (uint32_t i = lo; i < hi; i++) {
		const struct acc *a = &p->acc[i];
		if (first == PR_NONE)
			first = a->thread;
		shared |= a->thread != first;
		written |= avt_kind_writes(a->kind);
		vs->g[vs->n++] = (struct gent){ a->off, a->thread, a->ev, a->kind, a->mod, a->ls };
	}
	if (!shared || !written)
		return 0;
	if (sort_groups(vs) < 0)
		return -1;
	for (uint32_t i = 0; i < vs->n; i++) {
		struct lset here;
		if (i && vs->g[i].ls == vs->g[i - 1].ls && same_group(&vs->g[i - 1], &vs->g[i]))
			continue; /* the same locks again */
		lset_of(m, vs->g[i].ls, &here);
		if (!i || !same_group(&vs->g[i - 1], &vs->g[i])) {
			vs->start[vs->ngrp] = i;
			vs->gheld[vs->ngrp++] = here;
		} else {
			lset_meet(&vs->gheld[vs->ngrp - 1], &here);
		}
	}
	vs->start[vs->ngrp] = vs->n;
	return 1;
}

static uint64_t pair_hash(const struct acc *a, const struct acc *b, enum pr_pattern pat)
{
	return pr_hash64(a->off ^ pr_hash64(b->off ^ ((uint64_t)a->mod << 32) ^
					    ((uint64_t)b->mod << 48) ^ (uint64_t)pat));
}

/* The pair of the window (a, b), added if new; PR_NONE if out of memory. */
static uint32_t pair_of(struct vscan *vs, const struct acc *a, const struct acc *b,
			enum pr_pattern pat)
{
	uint64_t h = pair_hash(a, b, pat);
	size_t pos = 0;
	uint32_t i;
	while (pr_hmap_next(&vs->pmap, h, &pos, &i)) {
		const struct pair *q = &vs->pairs[i];
		if (q->pat == pat && q->off1 == a->off && q->off2 == b->off && q->mod1 == a->mod &&
		    q->mod2 == b->mod)
			return i;
	}
	if (vs->npair == vs->cappair) {
		uint32_t nc = vs->cappair ? vs->cappair * 2 : 16;
		struct pair *n = realloc(vs->pairs, nc * sizeof *n);
		if (!n)
			return PR_NONE;
		vs->pairs = n;
		vs->cappair = nc;
	}
	if (pr_hmap_add(&vs->pmap, h, vs->npair) < 0)
		return PR_NONE;
	vs->pairs[vs->npair] = (struct pair){ a->off, b->off, a->mod, b->mod, pat,
					      { 0, { 0 }, { 0 } }, NULL, 0, NULL };
	return vs->npair++;
}

static int add_window(struct pen *p, struct vscan *vs, uint32_t a, uint32_t b,
		      enum pr_pattern pat)
{
	const struct acc *x = &p->acc[a], *y = &p->acc[b];
	uint32_t n = vs->npair, q = pair_of(vs, x, y, pat);
	struct lset held = { 0, { 0 }, { 0 } };
	if (q == PR_NONE)
		return -1;
	bool locked = held_throughout(x, y);
	if (locked)
		lset_of(p->m, x->ls, &held);
	if (q == n)
		vs->pairs[q].held = held;
	else
		lset_meet(&vs->pairs[q].held, &held);
	if (vs->nwin == vs->capwin) {
		uint32_t nc = vs->capwin ? vs->capwin * 2 : 256;
		struct wrec *w = realloc(vs->win, nc * sizeof *w);
		if (!w)
			return -1;
		vs->win = w;
		vs->capwin = nc;
	}
	vs->win[vs->nwin++] = (struct wrec){ a, b, q, locked };
	return 0;
}

/* The windows of variable v, thread by thread in trace order: consecutive
 * accesses (a culprit writes) and consecutive writes (a culprit reads). */
static int collect_windows(struct pen *p, uint32_t v, struct vscan *vs)
{
	struct predict_site blame[4];
	uint32_t nblame;
	for (uint32_t i = p->varoff[v]; i < p->varoff[v + 1]; i++) {
		const struct acc *b = &p->acc[i];
		uint32_t t = b->thread;
		bool w = avt_kind_writes(b->kind);
		if (p->stamp[t] != v) {
			p->stamp[t] = v;
			p->prev[t] = p->prevw[t] = PR_NONE;
		}
		uint32_t pa = p->prev[t], pw = p->prevw[t];
		if (pa != PR_NONE && same_txn(p, &p->acc[pa], b, blame, &nblame) &&
		    add_window(p, vs, pa, i, pattern(&p->acc[pa], b)) < 0)
			return -1;
		if (w && pw != PR_NONE && same_txn(p, &p->acc[pw], b, blame, &nblame) &&
		    add_window(p, vs, pw, i, PR_PAT_WRW) < 0)
			return -1;
		p->prev[t] = i;
		if (w)
			p->prevw[t] = i;
	}
	return 0;
}

/* Each pair's live culprit entries. */
static int make_live(struct vscan *vs)
{
	size_t need = (size_t)vs->npair * vs->ngrp * 2, used = 0;
	if (need > vs->caplive) {
		uint32_t *n = realloc(vs->live, need * sizeof *n);
		if (n)
			vs->live = n;
		uint8_t *t = realloc(vs->tries, need);
		if (t)
			vs->tries = t;
		if (!n || !t)
			return -1;
		vs->caplive = need;
	}
	if (need)
		memset(vs->tries, 0, need); /* not when there is no array yet */
	for (uint32_t q = 0; q < vs->npair; q++) {
		struct pair *pr = &vs->pairs[q];
		uint16_t kind = pr->pat == PR_PAT_WRW ? AVT_EV_READ : AVT_EV_WRITE;
		pr->live = vs->live + used;
		pr->tries = vs->tries + used;
		pr->nlive = 0;
		for (uint32_t k = 0; k < vs->ngrp; k++) {
			uint16_t gk = vs->g[vs->start[k]].kind;
			/* an rmw culprit counts as a write */
			if ((kind == AVT_EV_WRITE ? !avt_kind_writes(gk) : gk != kind) ||
			    lset_conflict(&pr->held, &vs->gheld[k]))
				continue;
			pr->live[pr->nlive++] = k * 2;
			pr->live[pr->nlive++] = k * 2 + 1;
		}
		used += pr->nlive;
	}
	return 0;
}

/* Culprit f of window w, recorded before it (variant 0) or after it (1):
 * concurrency, the cut-point, then whether it can be planned.  1 if the
 * candidate's key is taken now (added, or found earlier), 0 if not with
 * this f, 2 if not because planning failed, -1 on error. */
static int try_culprit(struct pen *p, const struct wrec *w, enum pr_pattern pat, uint32_t f,
		       uint32_t variant)
{
	const struct pr_model *m = p->m;
	const struct acc *a = &p->acc[w->a], *b = &p->acc[w->b];
	uint32_t e1 = a->ev, e2 = b->ev;
	struct pr_cand c;
	/* cheapest first: e' must be able to come after e1 and before e2,
	 * and not be shut out by a lock T1 holds over the whole window */
	if (variant == 0 ? pr_sclock_hb(&p->sc, f, e1) : pr_sclock_hb(&p->sc, e2, f))
		return 0;
	if (w->locked && pr_ls_conflict(m, a->ls, m->ls[f]))
		return 0;
	memset(&c, 0, sizeof c);
	c.det = PR_DET_PENELOPE;
	c.pat = pat;
	c.nthr = 2;
	c.thr[0] = a->thread;
	c.thr[1] = pr_ev(m, f)->thread;
	c.nev = 3;
	c.ev[0] = e1;
	c.ev[1] = f;
	c.ev[2] = e2;
	c.variant = variant;
	c.order = e1 < f ? e1 : f;
	if (pr_cands_has(p->cs, &c))
		return 1;
	if (find_cut(m, &p->sc, e1, e2, f, &c.cut) < 0)
		return -1;
	if (c.cut == PR_NONE)
		return 0;
	/* a culprit far from the window can need more reversed lock edges
	 * than a plan takes: leave the key to a closer instance */
	struct pr_plan pl;
	if (plan(m, &c, false, true, &p->ix, &pl) < 0)
		return 2;
	same_txn(p, a, b, c.blame, &c.nblame);
	return pr_cands_add(p->cs, &c) < 0 ? -1 : 1;
}

/* The nearest access of group k before window w (variant 0) or after it
 * (1), or PR_NONE.  One inside the window happened in the recorded run:
 * nothing to predict. */
static uint32_t nearest(const struct pen *p, const struct vscan *vs, uint32_t k,
			const struct wrec *w, uint32_t variant)
{
	const struct gent *g = &vs->g[vs->start[k]];
	uint32_t n = vs->start[k + 1] - vs->start[k], lo = 0, hi = n;
	uint32_t e1 = p->acc[w->a].ev, e2 = p->acc[w->b].ev;
	uint32_t key = variant == 0 ? e1 : e2;
	while (lo < hi) { /* the first of the group after key */
		uint32_t mid = lo + (hi - lo) / 2;
		if (g[mid].ev < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (variant == 0)
		return lo > 0 ? g[lo - 1].ev : PR_NONE;
	return lo < n ? g[lo].ev : PR_NONE;
}

/* Instances of one key that could not be planned before it is given up
 * (planning costs the distance between window and culprit). */
#define PLAN_TRIES 32

/* Every window against its pair's live culprits; an entry whose key is
 * taken, or that failed planning PLAN_TRIES times, leaves the list. */
static int try_windows(struct pen *p, struct vscan *vs)
{
	for (uint32_t i = 0; i < vs->nwin; i++) {
		const struct wrec *w = &vs->win[i];
		struct pair *q = &vs->pairs[w->pair];
		uint32_t t1 = p->acc[w->a].thread;
		for (uint32_t j = 0; j < q->nlive; j++) {
			uint32_t k = q->live[j] / 2, variant = q->live[j] % 2;
			if (vs->g[vs->start[k]].thread == t1)
				continue;
			uint32_t f = nearest(p, vs, k, w, variant);
			int rc = f == PR_NONE ? 0 : try_culprit(p, w, q->pat, f, variant);
			if (rc < 0)
				return -1;
			if (rc == 1 || (rc == 2 && ++q->tries[j] == PLAN_TRIES)) {
				q->nlive--;
				q->live[j] = q->live[q->nlive];
				q->tries[j--] = q->tries[q->nlive];
			}
		}
	}
	return 0;
}

static int scan_var(struct pen *p, uint32_t v, struct vscan *vs)
{
	vs->npair = vs->nwin = 0;
	pr_hmap_release(&vs->pmap);
	pr_hmap_init(&vs->pmap);
	int rc = make_groups(p, v, vs);
	if (rc <= 0 || collect_windows(p, v, vs) < 0 || make_live(vs) < 0) {
		if (rc == 0)
			return 0;
		avt_error("cannot predict: out of memory");
		return -1;
	}
	return try_windows(p, vs); /* it says why it failed */
}

static void vscan_release(struct vscan *vs)
{
	free(vs->g);
	free(vs->tmp);
	free(vs->gid);
	free(vs->rep);
	pr_hmap_release(&vs->gmap);
	free(vs->start);
	free(vs->gheld);
	free(vs->pairs);
	pr_hmap_release(&vs->pmap);
	free(vs->live);
	free(vs->tries);
	free(vs->win);
}

static int scan(struct pen *p)
{
	struct vscan vs;
	int rc = -1;
	uint32_t n = p->m->nthreads;
	memset(&vs, 0, sizeof vs);
	uint32_t most = 1; /* accesses of the most accessed variable */
	for (uint32_t v = 0; v < p->nvar; v++)
		if (p->varoff[v + 1] - p->varoff[v] > most)
			most = p->varoff[v + 1] - p->varoff[v];
	pr_hmap_init(&vs.pmap);
	pr_hmap_init(&vs.gmap);
	vs.g = malloc(most * sizeof *vs.g);
	vs.tmp = malloc(most * sizeof *vs.tmp);
	vs.gid = malloc(most * sizeof *vs.gid);
	vs.rep = malloc(most * sizeof *vs.rep);
	vs.start = malloc(((size_t)most + 1) * sizeof *vs.start);
	vs.gheld = malloc(most * sizeof *vs.gheld);
	p->prev = malloc(n * sizeof *p->prev);
	p->prevw = malloc(n * sizeof *p->prevw);
	p->stamp = malloc(n * sizeof *p->stamp);
	if (!vs.g || !vs.tmp || !vs.gid || !vs.rep || !vs.start || !vs.gheld || !p->prev ||
	    !p->prevw || !p->stamp) {
		avt_error("cannot predict: out of memory");
		goto out;
	}
	for (uint32_t u = 0; u < n; u++)
		p->stamp[u] = PR_NONE;
	for (uint32_t v = 0; v < p->nvar && !pr_stopped(); v++)
		if (scan_var(p, v, &vs) < 0)
			goto out;
	rc = 0;
out:
	vscan_release(&vs);
	return rc;
}

static bool joins_lock(const struct pr_model *m, uint32_t x)
{
	return pr_is_acquire(pr_ev(m, x)) && m->in_lock[x] != PR_NONE;
}

/* p->ix as a table if it fits, else blocks of at least 64 events and at
 * most a byte per event. */
static int build_dropidx(struct pen *p)
{
	const struct pr_model *m = p->m;
	struct dropidx *ix = &p->ix;
	uint32_t n = m->nthreads;
	size_t nacq = 0;
	ix->first = malloc(((size_t)n + 1) * sizeof *ix->first);
	if (!ix->first)
		return -1;
	for (uint32_t x = 0; x < m->nev; x++)
		nacq += joins_lock(m, x);
	if (nacq * n * sizeof *ix->val <= pr_penelope_droptab_bytes) {
		size_t nrun = nacq / DROPTAB_RUN + n;
		ix->acq = malloc((nacq ? nacq : 1) * sizeof *ix->acq);
		ix->val = malloc((nacq ? nacq * n : 1) * sizeof *ix->val);
		ix->pmax = malloc(nrun * n * sizeof *ix->pmax);
		ix->bfirst = malloc(((size_t)n + 1) * sizeof *ix->bfirst);
		uint32_t *row = malloc(n * sizeof *row);
		if (!ix->acq || !ix->val || !ix->pmax || !ix->bfirst || !row) {
			free(row);
			return -1;
		}
		ix->first[0] = ix->bfirst[0] = 0;
		for (uint32_t u = 0; u < n; u++) {
			uint32_t a = ix->first[u];
			for (uint32_t k = 0; k < m->tnev[u]; k++)
				if (joins_lock(m, m->tev[u][k]))
					ix->acq[a++] = k;
			ix->first[u + 1] = a;
			uint32_t cnt = a - ix->first[u], runs = (cnt + DROPTAB_RUN - 1) / DROPTAB_RUN;
			ix->bfirst[u + 1] = ix->bfirst[u] + runs;
			uint32_t *val = ix->val + (size_t)ix->first[u] * n;
			uint32_t *pmax = ix->pmax + (size_t)ix->bfirst[u] * n;
			for (uint32_t i = 0; i < cnt; i++) {
				pr_ref_get(m, m->in_lock[m->tev[u][ix->acq[ix->first[u] + i]]], row);
				for (uint32_t j = 0; j < n; j++)
					val[(size_t)j * cnt + i] = row[j];
			}
			for (uint32_t j = 0; j < n; j++)
				for (uint32_t i = 0, mx = 0; i < cnt; i++) {
					if (val[(size_t)j * cnt + i] > mx)
						mx = val[(size_t)j * cnt + i];
					pmax[(size_t)j * runs + i / DROPTAB_RUN] = mx;
				}
		}
		free(row);
		return 0;
	}
	ix->block = n * 4 > 64 ? n * 4 : 64;
	ix->first[0] = 0;
	for (uint32_t u = 0; u < n; u++)
		ix->first[u + 1] = ix->first[u] + (m->tnev[u] + ix->block - 1) / ix->block;
	ix->max = calloc((size_t)ix->first[n] * n, sizeof *ix->max);
	if (!ix->max)
		return -1;
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t k = 0; k < m->tnev[u]; k++) {
			uint32_t x = m->tev[u][k];
			if (!joins_lock(m, x))
				continue;
			uint32_t *mx = &ix->max[(size_t)(ix->first[u] + k / ix->block) * n];
			for (uint32_t j = 0; j < n; j++) {
				uint32_t v = pr_ref_at(m, m->in_lock[x], j);
				if (v > mx[j])
					mx[j] = v;
			}
		}
	return 0;
}

static void pen_release(struct pen *p)
{
	free(p->ix.first);
	free(p->ix.max);
	free(p->ix.acq);
	free(p->ix.val);
	free(p->ix.pmax);
	free(p->ix.bfirst);
	pr_txn_free(p->txn);
	pr_sclock_release(&p->sc);
	free(p->acc);
	free(p->varoff);
	free(p->prev);
	free(p->prevw);
	free(p->stamp);
}

int pr_penelope(const struct pr_model *m, struct pr_cands *cs, const struct predict_opts *o)
{
	struct pen p;
	int rc = -1;
	memset(&p, 0, sizeof p);
	p.m = m;
	p.cs = cs;
	if (collect(&p) < 0)
		goto oom;
	if (!p.nacc) {
		rc = 0; /* no accesses: nothing to do, not even clocks */
		goto out;
	}
	p.txn = pr_txn_new(m);
	if (!p.txn)
		goto out;
	if (o && o->atomic) {
		p.txn->atomic = o->atomic;
		p.txn->atomic_ctx = o->atomic_ctx;
	}
	if (pr_sclock_build(&p.sc, m) < 0 || build_dropidx(&p) < 0)
		goto oom;
	rc = scan(&p); /* it says why it failed */
	goto out;
oom:
	avt_error("cannot predict: out of memory");
out:
	pen_release(&p);
	return rc;
}

/* ---- schedules ---- */

/* The first event of the locked stretch holding e's predecessors (e
 * itself if its thread held nothing before it): the one to move. */
static uint32_t stretch_event(const struct pr_model *m, uint32_t e)
{
	const struct avt_event *ev = pr_ev(m, e);
	return m->tev[ev->thread][pr_stretch_start(m, ev->thread, ev->tindex)];
}

/* The tindex at which thread u leaves region I (events before p0, cut
 * back to where u held nothing): synthesis may reorder from there on. */
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

static int add_drop(struct pr_plan *p, uint32_t x)
{
	if (p->ndrop == sizeof p->drop / sizeof p->drop[0])
		return -1;
	p->drop[p->ndrop++] = x;
	return 0;
}

/* The lock edges into thread i's part that need thread j beyond its part:
 * the prediction takes those locks first, so they are dropped.  Nothing
 * to drop before u has seen j past its limit (pr_vc_passes()). */
static int add_drops(const struct pr_model *m, const struct dropidx *ix, struct pr_plan *p,
		     uint32_t i, uint32_t j)
{
	uint32_t u = p->thr[i], tj = p->thr[j], lim = p->limit[j], n = m->nthreads;
	uint32_t end = p->stop[i] < m->tnev[u] ? p->stop[i] + 1 : m->tnev[u];
	uint32_t from = region_end(m, u, p->p0);
	if (ix && ix->val) {
		const uint32_t *acq = ix->acq + ix->first[u];
		uint32_t cnt = ix->first[u + 1] - ix->first[u], lo = 0, hi = cnt;
		uint32_t runs = ix->bfirst[u + 1] - ix->bfirst[u];
		const uint32_t *val = ix->val + (size_t)ix->first[u] * n + (size_t)tj * cnt;
		const uint32_t *pmax = ix->pmax + (size_t)ix->bfirst[u] * n + (size_t)tj * runs;
		while (lo < hi) { /* the first acquisition at from or later */
			uint32_t mid = lo + (hi - lo) / 2;
			if (acq[mid] < from)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint32_t r = lo / DROPTAB_RUN, rhi = runs;
		while (r < rhi) { /* the first run with a value past the limit */
			uint32_t mid = r + (rhi - r) / 2;
			if (pmax[mid] <= lim)
				r = mid + 1;
			else
				rhi = mid;
		}
		if ((size_t)r * DROPTAB_RUN > lo)
			lo = r * DROPTAB_RUN;
		for (uint32_t a = lo; a < cnt && acq[a] < end; a++)
			if (val[a] > lim && add_drop(p, m->tev[u][acq[a]]) < 0)
				return -1;
		return 0;
	}
	for (uint32_t k = pr_vc_passes(m, u, from, end, tj, lim); k < end; k++) {
		if (ix && k % ix->block == 0 &&
		    ix->max[(size_t)(ix->first[u] + k / ix->block) * m->nthreads + tj] <= lim) {
			k += ix->block - 1; /* nothing to drop in this block */
			continue;
		}
		uint32_t x = m->tev[u][k];
		if (joins_lock(m, x) && pr_ref_at(m, m->in_lock[x], tj) > lim &&
		    add_drop(p, x) < 0)
			return -1;
	}
	return 0;
}

/* Thread u's tindex k, moved on over the watched accesses that follow it
 * (before tindex end).  Replay parks a thread the schedule leaves waiting
 * before its next request; a watchpoint reports only after the access, so
 * a thread whose next event is a watched access cannot be parked without
 * doing it, and the schedule would break if replay had to move it while
 * another thread runs long without events.  (Annotated accesses stop at
 * their probe, before the access: no such problem.) */
static uint32_t settle(const struct pr_model *m, uint32_t u, uint32_t k, uint32_t end)
{
	while (k + 1 < end && k + 1 < m->tnev[u]) {
		const struct avt_event *e = pr_ev(m, m->tev[u][k + 1]);
		if (!is_access(e) || !(e->flags & AVT_F_WATCHED))
			break;
		k++;
	}
	return k;
}

int pr_penelope_plan(const struct pr_model *m, const struct pr_cand *c, bool with_e2,
		     bool park, struct pr_plan *p)
{
	return plan(m, c, with_e2, park, NULL, p);
}

/* pr_penelope_plan(), with the search's index of lock clocks (or NULL). */
static int plan(const struct pr_model *m, const struct pr_cand *c, bool with_e2, bool park,
		const struct dropidx *ix, struct pr_plan *p)
{
	uint32_t e1 = c->ev[0], f = c->ev[1], e2 = c->ev[2];
	const struct avt_event *a = pr_ev(m, e1), *ef = pr_ev(m, f), *b = pr_ev(m, e2);
	uint32_t cut = pr_ev(m, c->cut)->tindex;
	if (park)
		cut = settle(m, a->thread, cut, b->tindex);
	uint32_t sf = stretch_event(m, f), s1 = stretch_event(m, e1);
	memset(p, 0, sizeof *p);
	p->nthr = 2;
	p->thr[0] = a->thread;
	p->thr[1] = ef->thread;
	/* T1 stands at its cut-point (or goes on to e2 once e' ran) */
	p->stop[0] = with_e2 ? b->tindex : cut;
	p->limit[0] = with_e2 ? b->tindex + 1 : b->tindex;
	p->stop[1] = ef->tindex;
	if (with_e2) {
		/* T2 leaves the critical sections around e', which e2 may need */
		p->stop[1] = pr_stretch_end(m, f);
		if (p->stop[1] == PR_NONE)
			return -1;
		if (park)
			p->stop[1] = settle(m, ef->thread, p->stop[1], UINT32_MAX);
	}
	p->limit[1] = p->stop[1] + 1;
	/* T2's stretch around e' after e1: its outer lock moves with it */
	p->edge[p->nedge++] = (struct pr_edge){ e1, sf };
	if (with_e2)
		p->edge[p->nedge++] = (struct pr_edge){ f, m->tev[a->thread][cut + 1] };
	p->p0 = s1 < sf ? s1 : sf;
	p->final = -1;
	pr_plan_vars(m, c, p);
	return add_drops(m, ix, p, 0, 1) < 0 || add_drops(m, ix, p, 1, 0) < 0 ? -1 : 0;
}

/* ---- reads keep their writers ---- */

struct rk {
	struct pr_hmap vars, want; /* address -> variable; read -> its writer + 1 */
	uint32_t *lastw;           /* per variable: last write + 1, 0 = none yet */
	size_t nvar, cap;
	uint32_t *done;            /* per thread: events the schedule runs */
};

static uint32_t rk_var(struct rk *r, uint64_t addr)
{
	uint32_t v = pr_hmap_get(&r->vars, addr);
	if (v != UINT32_MAX)
		return v;
	if (r->nvar == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 64;
		uint32_t *n = realloc(r->lastw, nc * sizeof *n);
		if (!n)
			return PR_NONE;
		r->lastw = n;
		r->cap = nc;
	}
	if (pr_hmap_add(&r->vars, addr, (uint32_t)r->nvar) < 0)
		return PR_NONE;
	r->lastw[r->nvar] = 0;
	return (uint32_t)r->nvar++;
}

/* A read that is not the last event its thread runs: its value steers
 * what the thread does next inside the forced part. */
static bool steering(const struct rk *r, const struct avt_event *e)
{
	return e->kind == AVT_EV_READ && e->tindex + 1 < r->done[e->thread];
}

/* The writers the steering reads had in the recording. */
static int rk_recorded(struct rk *r, const struct pr_model *m, uint32_t maxev)
{
	for (uint32_t x = 0; x <= maxev && x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		if (!is_access(e))
			continue;
		uint32_t v = rk_var(r, pr_var(m, x));
		if (v == PR_NONE)
			return -1;
		if (avt_kind_writes(e->kind))
			r->lastw[v] = x + 1;
		else if (steering(r, e) && pr_hmap_add(&r->want, x, r->lastw[v]) < 0)
			return -1;
	}
	if (r->nvar)
		memset(r->lastw, 0, r->nvar * sizeof *r->lastw);
	return 0;
}

/* The schedule's order: does every steering read see its writer? */
static bool rk_scheduled(struct rk *r, const struct pr_model *m, const struct schedule *s,
			 uint32_t *pos)
{
	for (size_t i = 0; i < s->nsteps; i++)
		for (uint32_t k = 0; k < s->steps[i].count; k++) {
			uint32_t x = m->tev[s->steps[i].thread][pos[s->steps[i].thread]++];
			const struct avt_event *e = pr_ev(m, x);
			if (!is_access(e))
				continue;
			uint32_t v = pr_hmap_get(&r->vars, pr_var(m, x));
			if (avt_kind_writes(e->kind))
				r->lastw[v] = x + 1;
			else if (steering(r, e) && pr_hmap_get(&r->want, x) != r->lastw[v])
				return false;
		}
	return true;
}

int pr_penelope_reads_kept(const struct pr_model *m, const struct schedule *s)
{
	struct rk r;
	int rc = -1;
	uint32_t maxev = 0, *pos = calloc(m->nthreads, sizeof *pos);
	memset(&r, 0, sizeof r);
	pr_hmap_init(&r.vars);
	pr_hmap_init(&r.want);
	r.done = calloc(m->nthreads, sizeof *r.done);
	if (!pos || !r.done)
		goto out;
	for (size_t i = 0; i < s->nsteps; i++) {
		uint32_t u = s->steps[i].thread;
		BUG_ON(u >= m->nthreads || s->steps[i].count > m->tnev[u] - r.done[u]);
		r.done[u] += s->steps[i].count;
		if (m->tev[u][r.done[u] - 1] > maxev)
			maxev = m->tev[u][r.done[u] - 1];
	}
	if (rk_recorded(&r, m, maxev) < 0)
		goto out;
	rc = rk_scheduled(&r, m, s, pos) ? 1 : 0;
out:
	if (rc < 0)
		avt_error("cannot predict: out of memory");
	pr_hmap_release(&r.vars);
	pr_hmap_release(&r.want);
	free(r.lastw);
	free(r.done);
	free(pos);
	return rc;
}

/* Plan number k of up to four, in the order wanted when the schedule keeps
 * its reads: with e2 before without (the brief's schedule, then the
 * paper's), threads parked before a request before not (parking can make
 * a racy read steer: then the plan without it is the one that works).  0,
 * or -1 if there is no such plan or it is the same as the one before it. */
static int nth_plan(const struct pr_model *m, const struct pr_cand *c, int k, struct pr_plan *p)
{
	struct pr_plan parked;
	bool with_e2 = k < 2, park = !(k & 1);
	if (pr_penelope_plan(m, c, with_e2, park, p) < 0)
		return -1;
	if (park)
		return 0;
	if (pr_penelope_plan(m, c, with_e2, true, &parked) == 0 && !memcmp(&parked, p, sizeof *p))
		return -1; /* nothing to park: already tried */
	return 0;
}

/* When no schedule keeps its reads, the fewer events forced after a read
 * that sees a new value the better: without e2 first, parked first. */
static int fallback_rank(int k)
{
	return k >= 2 ? k - 2 : k + 2;
}

/* Keeps s as the fallback schedule of plan k if it is better than the one
 * kept so far. */
static void keep_fallback(struct schedule **fb, struct pr_plan *fbplan, int *fbk,
			  struct schedule *s, const struct pr_plan *plan, int k)
{
	if (*fb && fallback_rank(k) > fallback_rank(*fbk)) {
		schedule_free(s);
		return;
	}
	schedule_free(*fb);
	*fb = s;
	*fbplan = *plan;
	*fbk = k;
}

int pr_penelope_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
		      struct pr_plan *plan, struct schedule **out, bool *kept)
{
	struct schedule *fb = NULL;
	struct pr_plan fbplan;
	int fbk = 0, rc = 0;
	*out = NULL;
	*kept = false;
	for (int k = 0; k < 4 && rc == 0 && *budget; k++) {
		struct schedule *s;
		if (nth_plan(m, c, k, plan) < 0)
			continue;
		int sy = pr_synth(m, plan, budget, &s);
		if (sy <= 0) {
			rc = sy; /* -1 is an error; 0, try the next plan */
			continue;
		}
		int r = pr_penelope_reads_kept(m, s);
		if (r > 0) {
			*out = s;
			*kept = true;
			rc = 1;
		} else if (r < 0) {
			schedule_free(s);
			rc = -1;
		} else {
			keep_fallback(&fb, &fbplan, &fbk, s, plan, k);
		}
	}
	if (rc != 0 || !fb) {
		schedule_free(fb);
		return rc;
	}
	*out = fb;
	*plan = fbplan;
	return 1;
}

size_t *pr_penelope_siblings(const struct pr_model *m, const struct pr_cands *cs)
{
	struct pr_hmap h;
	size_t *sib = malloc((cs->n ? cs->n : 1) * sizeof *sib);
	pr_hmap_init(&h);
	for (size_t i = 0; sib && i < cs->n; i++) {
		size_t pos = 0;
		uint32_t j;
		sib[i] = SIZE_MAX;
		if (cs->c[i].det != PR_DET_PENELOPE)
			continue; /* before the hash: most candidates are PECAN's */
		uint64_t key = pr_cands_bug_hash(m, &cs->c[i]);
		while (pr_hmap_next(&h, key, &pos, &j))
			if (pr_cands_same_bug(m, &cs->c[j], &cs->c[i])) {
				sib[i] = j;
				sib[j] = i;
			}
		if (pr_hmap_add(&h, key, (uint32_t)i) < 0) {
			free(sib);
			sib = NULL;
		}
	}
	pr_hmap_release(&h);
	return sib;
}
