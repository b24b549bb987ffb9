/*
 * Priority policies for explore: PCT, PCTVB, thread bounding.  See pct.h
 * for the semantics and docs/explore.md for the reasoning.
 *
 * Representation.  Every priority a run can hand out is a "fragment": one
 * per change point and one initial fragment per thread.  pos[f] is the
 * rank of fragment f among all fragments (0 lowest); its priority number
 * is pos[f] + 1.  A thread holds one fragment at a time (its initial one,
 * then the one of the last change point that hit it), or is dropped below
 * every fragment after spinning.  A fragment no thread holds still keeps
 * its rank, so inserting a late thread at a uniform rank among all
 * initial fragments, held or not, keeps the order of initial priorities a
 * uniform permutation, exactly as if it had been drawn for all threads up
 * front.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pct.h"
#include "trace/log.h"

/* Logical ids beyond this are refused: ids are dense from T0. */
#define XP_MAX_THREADS (1u << 20)
#define XP_NOFRAG UINT32_MAX
#define XP_NOTHREAD UINT32_MAX

/* ---- thread bounding (Lemma 4.1) */

static bool contains(const uint64_t *a, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == x)
			return true;
	return false;
}

/* m distinct values of [0, k) in uniformly random order (m <= k): Floyd's
 * sample, then a shuffle, because the change point drawn i-th gets
 * priority i and Floyd's order is not uniform.  O(m^2); m is a depth. */
static void sample(struct xp_rng *r, uint64_t *out, size_t m, uint64_t k)
{
	size_t cnt = 0;

	for (uint64_t j = k - m; j < k; j++) {
		uint64_t t = xp_rng_below(r, j + 1);
		uint64_t x = contains(out, cnt, t) ? j : t;
		out[cnt++] = x;
	}
	for (size_t i = m; i > 1; i--) {
		size_t j = (size_t)xp_rng_below(r, i);
		uint64_t tmp = out[i - 1];
		out[i - 1] = out[j];
		out[j] = tmp;
	}
}

void xp_perm(struct xp_rng *r, uint32_t *out, uint32_t m)
{
	for (uint32_t i = 0; i < m; i++)
		out[i] = i;
	for (uint32_t i = m; i > 1; i--) {
		uint32_t j = (uint32_t)xp_rng_below(r, i);
		uint32_t tmp = out[i - 1];
		out[i - 1] = out[j];
		out[j] = tmp;
	}
}

/* ---- Lemma 4.1 budget */

/* Natural logarithm for x > 0 without libm: x = y 2^e with y in [1, 2),
 * ln y = 2 atanh((y-1)/(y+1)). */
static double ln(double x)
{
	const double ln2 = 0.69314718055994530942;
	double y, y2, term, sum = 0;
	int e = 0;

	while (x >= 2) {
		x /= 2;
		e++;
	}
	while (x < 1) {
		x *= 2;
		e--;
	}
	y = (x - 1) / (x + 1);
	y2 = y * y;
	term = y;
	for (int k = 1; k < 200 && term > 1e-18; k += 2) {
		sum += term / k;
		term *= y2;
	}
	return 2 * sum + e * ln2;
}

uint64_t xp_perm_budget(uint32_t m, unsigned t)
{
	const double limit = 18446744073709549568.0; /* largest double < 2^64 */
	double fact = 1, b;
	uint64_t u;

	if (t < 2 || t > m)
		return 1;
	for (unsigned i = 2; i <= t + 1; i++) {
		fact *= i;
		if (fact >= limit)
			return UINT64_MAX;
	}
	b = fact * (ln((double)m * t) + ln(1 / XP_PERM_EPSILON));
	if (b >= limit)
		return UINT64_MAX;
	u = (uint64_t)b;
	return u + ((double)u < b);
}

/* ---- one run */

struct xp_thread {
	uint32_t frag;      /* held fragment, XP_NOFRAG if dropped */
	uint32_t init_frag; /* initial fragment, for describe */
	int64_t drop;       /* priority while dropped */
	unsigned spins;     /* event-less slices in a row */
};

struct xp_cp {
	int32_t var;   /* index into drawn vars, -1: the run's event counter */
	uint64_t at;   /* 1-based count at which it fires */
	uint32_t frag; /* priority it gives */
	uint32_t hit;  /* thread it hit, XP_NOTHREAD until it fires */
};

struct xp_run {
	enum xp_algo algo;
	unsigned depth, contexts, yield_limit;
	uint64_t seed, run_index;
	struct xp_rng rng;

	uint32_t *pos;       /* rank of each fragment */
	size_t nfrag, fragcap;
	uint32_t band;       /* lowest rank a late thread may take */

	struct xp_thread *thr; /* by logical id; ids < nthr registered */
	size_t nthr, thrcap;
	uint32_t nreserved;  /* T0 .. T(n_est-1): fragments drawn up front */
	uint32_t ncpf;       /* change point fragments, 0 .. ncpf-1 */

	struct xp_var *vars; /* drawn variables; count = events seen so far */
	uint64_t *est;       /* their estimated counts */
	size_t nv;

	struct xp_cp *cp;
	size_t ncp, nfired;
	uint64_t nev;        /* events so far */
	int64_t next_drop;
};

static const char *algo_name(enum xp_algo a)
{
	switch (a) {
	case XP_PCT: return "pct";
	case XP_PCTVB: return "pctvb";
	case XP_TB: return "tb";
	case XP_POS: case XP_SURW: case XP_GUIDED: case XP_PORTFOLIO: break;
	}
	return "?";
}

int xp_config_check(const struct xp_config *c)
{
	if (c->algo != XP_PCT && c->algo != XP_PCTVB && c->algo != XP_TB) {
		avt_error("explore: algorithm %d is not pct, pctvb or tb", (int)c->algo);
		return -1;
	}
	if (c->algo != XP_TB && c->depth == 0) {
		avt_error("explore: depth must be at least 1");
		return -1;
	}
	if (c->algo == XP_PCTVB && c->nvars == 0) {
		avt_error("explore: pctvb needs at least one variable per run");
		return -1;
	}
	if (c->nvars_all > 0 && !c->vars) {
		avt_error("explore: %zu candidate variables but no list", c->nvars_all);
		return -1;
	}
	if (c->nthreads_est > XP_MAX_THREADS) {
		avt_error("explore: thread estimate %u above %u", c->nthreads_est, XP_MAX_THREADS);
		return -1;
	}
	if (c->algo == XP_TB && c->contexts > XP_MAX_THREADS) {
		avt_error("explore: context bound %u above %u", c->contexts, XP_MAX_THREADS);
		return -1;
	}
	return 0;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 8;
	void *n;

	if (need <= *cap)
		return p;
	while (ncap < need)
		ncap *= 2;
	n = realloc(p, ncap * size);
	if (!n) {
		avt_error("explore: out of memory");
		return NULL;
	}
	*cap = ncap;
	return n;
}

/* A new fragment at rank p; every fragment at p or above moves up. */
static int frag_insert(struct xp_run *r, uint32_t p, uint32_t *frag)
{
	uint32_t *n = grow(r->pos, &r->fragcap, r->nfrag + 1, sizeof *n);

	if (!n)
		return -1;
	r->pos = n;
	for (size_t f = 0; f < r->nfrag; f++)
		if (r->pos[f] >= p)
			r->pos[f]++;
	r->pos[r->nfrag] = p;
	*frag = (uint32_t)r->nfrag++;
	return 0;
}

/* Registers every id up to lid, in id order, so priorities never depend
 * on the order the caller mentions threads in. */
static int thread_reg(struct xp_run *r, uint64_t lid)
{
	struct xp_thread *n;

	if (lid < r->nthr)
		return 0;
	if (lid >= XP_MAX_THREADS) {
		avt_error("explore: thread id %" PRIu64 " above %u", lid, XP_MAX_THREADS);
		return -1;
	}
	n = grow(r->thr, &r->thrcap, (size_t)lid + 1, sizeof *n);
	if (!n)
		return -1;
	r->thr = n;
	while (r->nthr <= lid) {
		struct xp_thread *t = &r->thr[r->nthr];
		uint32_t frag;

		if (r->nthr < r->nreserved) {
			/* drawn up front: fragments after the change points */
			frag = r->ncpf + (uint32_t)r->nthr;
		} else {
			uint64_t slots = r->nfrag - r->band + 1;
			uint32_t p = r->band + (uint32_t)xp_rng_below(&r->rng, slots);
			if (frag_insert(r, p, &frag) < 0)
				return -1;
		}
		t->frag = t->init_frag = frag;
		t->drop = 0;
		t->spins = 0;
		r->nthr++;
	}
	return 0;
}

/* Draws the variables (into r->vars/est) for PCTVB and TB with nvars. */
static int draw_vars(struct xp_run *r, const struct xp_config *c)
{
	size_t m = c->nvars < c->nvars_all ? c->nvars : c->nvars_all;
	uint64_t *idx;

	if (m == 0)
		return 0;
	idx = malloc(m * sizeof *idx);
	r->vars = calloc(m, sizeof *r->vars);
	r->est = calloc(m, sizeof *r->est);
	if (!idx || !r->vars || !r->est) {
		free(idx);
		avt_error("explore: out of memory");
		return -1;
	}
	sample(&r->rng, idx, m, c->nvars_all);
	for (size_t i = 0; i < m; i++) {
		r->vars[i].obj = c->vars[idx[i]].obj;
		r->est[i] = c->vars[idx[i]].count;
	}
	r->nv = m;
	free(idx);
	return 0;
}

/* Draws ncp change points among k_est events or among S (drawn vars). */
static int draw_points(struct xp_run *r, size_t ncp, bool by_var, uint64_t k_est)
{
	uint64_t k = by_var ? 0 : k_est;
	uint64_t *idx;
	size_t m;

	if (by_var) {
		for (size_t i = 0; i < r->nv; i++) {
			if (k + r->est[i] < k) {
				avt_error("explore: variable access estimates overflow");
				return -1;
			}
			k += r->est[i];
		}
	}
	m = (uint64_t)ncp < k ? ncp : (size_t)k;
	if (m == 0)
		return 0;
	idx = malloc(m * sizeof *idx);
	r->cp = calloc(m, sizeof *r->cp);
	if (!idx || !r->cp) {
		free(idx);
		avt_error("explore: out of memory");
		return -1;
	}
	sample(&r->rng, idx, m, k);
	for (size_t i = 0; i < m; i++) {
		struct xp_cp *p = &r->cp[i];
		uint64_t x = idx[i];

		p->var = -1;
		if (by_var) {
			size_t v = 0;
			while (x >= r->est[v])
				x -= r->est[v++];
			p->var = (int32_t)v;
		}
		p->at = x + 1;
		p->frag = (uint32_t)i; /* change point i owns fragment i */
		p->hit = XP_NOTHREAD;
	}
	r->ncp = m;
	free(idx);
	return 0;
}

/* Fragments: change points 0 .. ncpf-1, then T0 .. T(n-1).  PCT: change
 * point i (0-based) ranks i, threads above in random order.  TB: all
 * n + c ranks are one random permutation. */
static int draw_priorities(struct xp_run *r, uint32_t ncpf, uint32_t n)
{
	uint32_t total = ncpf + n;
	uint32_t *perm;

	r->pos = calloc(total ? total : 1, sizeof *r->pos);
	perm = malloc((total ? total : 1) * sizeof *perm);
	if (!r->pos || !perm) {
		free(perm);
		avt_error("explore: out of memory");
		return -1;
	}
	r->fragcap = total ? total : 1;
	r->nfrag = total;
	if (r->algo == XP_TB) {
		/* P_1..P_n for the threads, P_{n+i} for change point i */
		xp_perm(&r->rng, perm, total);
		for (uint32_t j = 0; j < n; j++)
			r->pos[ncpf + j] = perm[j];
		for (uint32_t i = 0; i < ncpf; i++)
			r->pos[i] = perm[n + i];
		r->band = 0;
	} else {
		xp_perm(&r->rng, perm, n);
		for (uint32_t i = 0; i < ncpf; i++)
			r->pos[i] = i;
		for (uint32_t j = 0; j < n; j++)
			r->pos[ncpf + j] = ncpf + perm[j];
		r->band = ncpf;
	}
	free(perm);
	return 0;
}

struct xp_run *xp_run_new(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	struct xp_run *r;
	uint32_t ncpf;
	bool by_var;

	if (xp_config_check(c) < 0)
		return NULL;
	r = calloc(1, sizeof *r);
	if (!r) {
		avt_error("explore: out of memory");
		return NULL;
	}
	r->algo = c->algo;
	r->depth = c->depth;
	r->contexts = c->contexts;
	r->yield_limit = c->yield_limit ? c->yield_limit : XP_YIELD_LIMIT;
	r->seed = seed;
	r->run_index = run_index;
	xp_rng_seed_run(&r->rng, seed, run_index);

	/* Fixed draw order: variables, priorities, change points, then late
	 * threads as they arrive. */
	ncpf = c->algo == XP_TB ? c->contexts : c->depth - 1;
	by_var = c->algo == XP_PCTVB || (c->algo == XP_TB && c->nvars > 0);
	if ((by_var && draw_vars(r, c) < 0) ||
	    draw_priorities(r, ncpf, c->nthreads_est) < 0 ||
	    draw_points(r, ncpf, by_var, c->k_est) < 0)
		goto fail;
	r->nreserved = c->nthreads_est;
	r->ncpf = ncpf;
	if (c->nthreads_est > 0 && thread_reg(r, c->nthreads_est - 1) < 0)
		goto fail;
	return r;
fail:
	xp_run_free(r);
	return NULL;
}

void xp_run_free(struct xp_run *r)
{
	if (!r)
		return;
	free(r->pos);
	free(r->thr);
	free(r->vars);
	free(r->est);
	free(r->cp);
	free(r);
}

/* Kinds whose obj is an address (a variable, lock, cond, sem, barrier). */
static bool has_address(unsigned kind)
{
	switch (kind) {
	case AVT_EV_NONE:
	case AVT_EV_START:
	case AVT_EV_EXIT:
	case AVT_EV_CREATE:
	case AVT_EV_JOIN:
	case AVT_EV_BEGIN:
	case AVT_EV_END:
	case AVT_EV_FATAL_SIGNAL:
		return false;
	default:
		return kind < AVT_EV_KIND_COUNT;
	}
}

int xp_run_event(struct xp_run *r, const struct avt_event *ev)
{
	struct xp_thread *t;
	int32_t var = -1;

	if (thread_reg(r, ev->thread) < 0)
		return -1;
	if (ev->kind == AVT_EV_CREATE && thread_reg(r, ev->obj) < 0)
		return -1;
	t = &r->thr[ev->thread];
	t->spins = 0;
	r->nev++;
	if (has_address(ev->kind)) {
		for (size_t i = 0; i < r->nv; i++) {
			if (r->vars[i].obj == ev->obj) {
				r->vars[i].count++;
				var = (int32_t)i;
				break;
			}
		}
	}
	/* (var, count) pairs are distinct, so at most one point fires. */
	for (size_t i = 0; i < r->ncp; i++) {
		struct xp_cp *p = &r->cp[i];
		uint64_t now;

		if (p->hit != XP_NOTHREAD)
			continue;
		if (p->var < 0)
			now = r->nev;
		else if (p->var == var)
			now = r->vars[var].count;
		else
			continue;
		if (now == p->at) {
			p->hit = ev->thread;
			t->frag = p->frag;
			r->nfired++;
			break;
		}
	}
	return 0;
}

static int64_t prio(const struct xp_run *r, const struct xp_thread *t)
{
	return t->frag == XP_NOFRAG ? t->drop : (int64_t)r->pos[t->frag] + 1;
}

size_t xp_run_pick(struct xp_run *r, const uint32_t *lids, size_t n)
{
	uint32_t max = 0;
	size_t best = 0;

	BUG_ON(n == 0);
	for (size_t i = 0; i < n; i++)
		if (lids[i] > max)
			max = lids[i];
	if (thread_reg(r, max) < 0)
		return n;
	for (size_t i = 1; i < n; i++)
		if (prio(r, &r->thr[lids[i]]) > prio(r, &r->thr[lids[best]]))
			best = i;
	return best;
}

void xp_run_yield(struct xp_run *r, uint32_t lid)
{
	struct xp_thread *t;

	if (lid >= r->nthr)
		return; /* never picked, so it cannot have spun */
	t = &r->thr[lid];
	if (++t->spins < r->yield_limit)
		return;
	t->spins = 0;
	t->frag = XP_NOFRAG;
	t->drop = r->next_drop--;
}

int64_t xp_run_priority(const struct xp_run *r, uint32_t lid)
{
	return lid < r->nthr ? prio(r, &r->thr[lid]) : INT64_MIN;
}

size_t xp_run_fired(const struct xp_run *r)
{
	return r->nfired;
}

/* ---- describe */

struct line {
	char *buf;
	size_t len, used;
	bool cut;
};

static void AVT_PRINTF(2, 3) put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->cut || l->len == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, l->len - l->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= l->len - l->used) {
		l->cut = true;
		l->used = l->len - 1;
		/* end in "..." where there is room for it */
		if (l->len >= 4)
			memcpy(l->buf + l->len - 4, "...", 4);
		return;
	}
	l->used += (size_t)n;
}

void xp_run_describe(const struct xp_run *r, char *buf, size_t len)
{
	struct line l = { buf, len, 0, false };
	bool any = false;

	if (len > 0)
		buf[0] = '\0';
	put(&l, "%s", algo_name(r->algo));
	if (r->algo != XP_TB)
		put(&l, " d=%u", r->depth);
	else
		put(&l, " c=%u", r->contexts);
	if (r->nv)
		put(&l, " v=%zu", r->nv);
	put(&l, " seed=%" PRIu64 " run=%" PRIu64 " prio", r->seed, r->run_index);
	for (size_t i = 0; i < r->nthr; i++)
		put(&l, " T%zu=%" PRIu32, i, r->pos[r->thr[i].init_frag] + 1);
	if (r->nv) {
		put(&l, " vars");
		for (size_t i = 0; i < r->nv; i++)
			put(&l, " %#" PRIx64 "/%" PRIu64, r->vars[i].obj, r->est[i]);
	}
	put(&l, " cp");
	if (r->ncp == 0)
		put(&l, " none");
	for (size_t i = 0; i < r->ncp; i++) {
		const struct xp_cp *p = &r->cp[i];

		put(&l, " %" PRIu32 "@", r->pos[p->frag] + 1);
		if (p->var < 0)
			put(&l, "ev%" PRIu64, p->at);
		else
			put(&l, "%#" PRIx64 "#%" PRIu64, r->vars[p->var].obj, p->at);
		if (p->hit != XP_NOTHREAD)
			put(&l, "=T%" PRIu32, p->hit);
	}
	for (size_t i = 0; i < r->nthr; i++) {
		if (r->thr[i].frag != XP_NOFRAG)
			continue;
		put(&l, "%sT%zu", any ? "," : " dropped ", i);
		any = true;
	}
}

/* ---- the policy's verbs (xp.h) */

static void *pct_new_op(const struct xp_config *c, uint64_t seed, uint64_t run_index)
{
	return xp_run_new(c, seed, run_index);
}

static int pct_event_op(void *run, const struct avt_event *ev)
{
	return xp_run_event(run, ev);
}

static size_t pct_pick_op(void *run, const uint32_t *lids, size_t n)
{
	return xp_run_pick(run, lids, n);
}

static void pct_yield_op(void *run, uint32_t lid)
{
	xp_run_yield(run, lid);
}

static void pct_describe_op(const void *run, char *buf, size_t len)
{
	xp_run_describe(run, buf, len);
}

static void pct_free_op(void *run)
{
	xp_run_free(run);
}

const struct xp_policy_ops xp_pct_ops = {
	.new = pct_new_op,
	.event = pct_event_op,
	.pick = pct_pick_op,
	.yield = pct_yield_op,
	.describe = pct_describe_op,
	.target = NULL,
	.free = pct_free_op,
};
