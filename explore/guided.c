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

#include "policy_int.h"
#include "trace/log.h"

/* ---- kinds and keys */

bool xp_kind_reads(unsigned kind)
{
	if (!xp_event_obj(kind, 1))
		return false;
	switch (kind) {
	case AVT_EV_WRITE:
	case AVT_EV_RELEASE:
	case AVT_EV_SEM_POST:
	case AVT_EV_SIGNAL:
	case AVT_EV_BROADCAST:
		return false;
	default:
		return true;
	}
}

bool xp_kind_writes(unsigned kind)
{
	if (!xp_event_obj(kind, 1))
		return false;
	switch (kind) {
	case AVT_EV_READ:
	case AVT_EV_RD_ACQUIRE:
	case AVT_EV_TRYLOCK_FAIL:
		return false;
	default:
		return true;
	}
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* An abstract event: never 0 (0 is the initial value). */
static uint64_t abs_id(uint32_t thread, uint64_t site)
{
	return mix(site * 0x9e3779b97f4a7c15ull + thread + 1) | 1;
}

static uint64_t rf_key(uint64_t obj, uint64_t reader, uint64_t writer)
{
	return mix(mix(reader ^ obj) + writer);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static size_t uniq(uint64_t *a, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0; /* a may be NULL: qsort must not see it */
	qsort(a, n, sizeof *a, cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || a[k - 1] != a[i])
			a[k++] = a[i];
	return k;
}

/* obj -> last writer, open addressing (objects of one run). */
struct lastw {
	uint64_t *obj, *w;
	size_t cap, n;
};

static uint64_t *lastw_slot(struct lastw *t, uint64_t obj)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 256;
		uint64_t *no = calloc(ncap, sizeof *no), *nw = calloc(ncap, sizeof *nw);
		if (!no || !nw) {
			free(no);
			free(nw);
			return NULL;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->obj[i])
				continue;
			size_t h = mix(t->obj[i]) & (ncap - 1);
			while (no[h])
				h = (h + 1) & (ncap - 1);
			no[h] = t->obj[i];
			nw[h] = t->w[i];
		}
		free(t->obj);
		free(t->w);
		t->obj = no;
		t->w = nw;
		t->cap = ncap;
	}
	size_t h = mix(obj) & (t->cap - 1);
	while (t->obj[h] && t->obj[h] != obj)
		h = (h + 1) & (t->cap - 1);
	if (!t->obj[h]) {
		t->obj[h] = obj;
		t->w[h] = 0;
		t->n++;
	}
	return &t->w[h];
}

int xp_rf_keys(const struct avt_event *ev, size_t n, uint64_t **keys, size_t *nkeys)
{
	struct lastw t = { 0 };
	size_t k = 0;

	*nkeys = 0;
	*keys = malloc((n ? n : 1) * sizeof **keys);
	if (!*keys)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		uint64_t obj = xp_event_obj(ev[i].kind, ev[i].obj);
		if (!obj)
			continue;
		uint64_t *w = lastw_slot(&t, obj);
		if (!w)
			goto oom;
		uint64_t me = abs_id(ev[i].thread, xp_site(&ev[i]));
		if (xp_kind_reads(ev[i].kind))
			(*keys)[k++] = rf_key(obj, me, *w);
		if (xp_kind_writes(ev[i].kind))
			*w = me;
	}
	free(t.obj);
	free(t.w);
	*nkeys = uniq(*keys, k);
	return 0;
oom:
	free(t.obj);
	free(t.w);
	free(*keys);
	*keys = NULL;
	avt_error("explore: out of memory");
	return -1;
}

/* ---- the guide */

/* A reader or writer of the recording, abstracted. */
struct gev {
	uint64_t obj;
	uint64_t site;
	uint32_t thread;
	uint32_t writes; /* 0: a reader entry, 1: a writer entry */
};

struct gstart {
	uint32_t *threads;
	size_t n;
	uint32_t *pattern;        /* a prediction's pattern threads, or NULL */
	size_t npattern;
};

struct xp_guide {
	uint64_t *seen;           /* sorted */
	size_t nseen, seencap;
	struct gev *ev;           /* readers and writers, sorted by obj, writes, thread, site */
	size_t nev;
	size_t *readers;          /* indexes of the reader entries */
	size_t nreaders;
	struct gstart *pred;      /* starting points from predictions */
	size_t npred;
	struct gstart *corpus;
	size_t ncorpus;
	uint64_t *tried;          /* targets a run has tried, sorted */
	size_t ntried;
};

static int cmp_gev(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->writes != y->writes)
		return x->writes < y->writes ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

struct xp_guide *xp_guide_new(const struct xp_rec *rec)
{
	struct xp_guide *g = calloc(1, sizeof *g);
	size_t total = 0, k = 0;

	if (!g)
		goto oom;
	for (uint32_t t = 0; t < xp_rec_nthreads(rec); t++)
		total += 2 * xp_rec_count(rec, t);
	g->ev = malloc((total ? total : 1) * sizeof *g->ev);
	if (!g->ev)
		goto oom;
	for (uint32_t t = 0; t < xp_rec_nthreads(rec); t++)
		for (size_t i = 0; i < xp_rec_count(rec, t); i++) {
			const struct xp_rev *e = xp_rec_event(rec, t, i);
			if (!e->obj)
				continue;
			if (xp_kind_reads(e->kind))
				g->ev[k++] = (struct gev){ e->obj, e->site, t, 0 };
			if (xp_kind_writes(e->kind))
				g->ev[k++] = (struct gev){ e->obj, e->site, t, 1 };
		}
	qsort(g->ev, k, sizeof *g->ev, cmp_gev);
	g->nev = 0;
	for (size_t i = 0; i < k; i++)
		if (g->nev == 0 || cmp_gev(&g->ev[g->nev - 1], &g->ev[i]))
			g->ev[g->nev++] = g->ev[i];
	g->readers = malloc((g->nev ? g->nev : 1) * sizeof *g->readers);
	if (!g->readers)
		goto oom;
	for (size_t i = 0; i < g->nev; i++)
		if (!g->ev[i].writes)
			g->readers[g->nreaders++] = i;
	return g;
oom:
	xp_guide_free(g);
	avt_error("explore: out of memory");
	return NULL;
}

static void starts_free(struct gstart *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].threads);
		free(s[i].pattern);
	}
	free(s);
}

void xp_guide_free(struct xp_guide *g)
{
	if (!g)
		return;
	free(g->seen);
	free(g->tried);
	free(g->ev);
	free(g->readers);
	starts_free(g->pred, g->npred);
	starts_free(g->corpus, g->ncorpus);
	free(g);
}

bool xp_guide_seen(const struct xp_guide *g, uint64_t key)
{
	return g && g->nseen && bsearch(&key, g->seen, g->nseen, sizeof key, cmp_u64) != NULL;
}

bool xp_guide_tried(const struct xp_guide *g, uint64_t key)
{
	return g && g->ntried && bsearch(&key, g->tried, g->ntried, sizeof key, cmp_u64) != NULL;
}

int xp_guide_add_tried(struct xp_guide *g, uint64_t key)
{
	if (!key || xp_guide_tried(g, key))
		return 0;
	uint64_t *nt = realloc(g->tried, (g->ntried + 1) * sizeof *nt);
	if (!nt) {
		avt_error("explore: out of memory");
		return -1;
	}
	g->tried = nt;
	g->tried[g->ntried++] = key;
	qsort(g->tried, g->ntried, sizeof *nt, cmp_u64);
	return 0;
}

size_t xp_guide_nseen(const struct xp_guide *g)
{
	return g->nseen;
}

long xp_guide_add_rf(struct xp_guide *g, const uint64_t *keys, size_t n)
{
	size_t before = g->nseen;

	if (g->nseen + n > g->seencap) {
		size_t ncap = g->seencap ? g->seencap : 256;
		while (ncap < g->nseen + n)
			ncap *= 2;
		uint64_t *ns = realloc(g->seen, ncap * sizeof *ns);
		if (!ns) {
			avt_error("explore: out of memory");
			return -1;
		}
		g->seen = ns;
		g->seencap = ncap;
	}
	if (n)
		memcpy(g->seen + g->nseen, keys, n * sizeof *keys);
	g->nseen = uniq(g->seen, g->nseen + n);
	return (long)(g->nseen - before);
}

int xp_guide_add_start(struct xp_guide *g, const uint32_t *threads, size_t n, bool from_prediction)
{
	return xp_guide_add_prediction(g, threads, n, from_prediction, NULL, 0);
}

int xp_guide_add_prediction(struct xp_guide *g, const uint32_t *threads, size_t n, bool from_prediction,
			    const uint32_t *pattern, size_t npattern)
{
	struct gstart **arr = from_prediction ? &g->pred : &g->corpus;
	size_t *cnt = from_prediction ? &g->npred : &g->ncorpus;

	if (n == 0 || (!from_prediction && *cnt >= XP_GUIDE_CORPUS))
		return 0;
	struct gstart *na = realloc(*arr, (*cnt + 1) * sizeof *na);
	if (!na)
		goto oom;
	*arr = na;
	uint32_t *copy = malloc(n * sizeof *copy);
	if (!copy)
		goto oom;
	memcpy(copy, threads, n * sizeof *copy);
	uint32_t *pat = NULL;
	if (npattern) {
		pat = malloc(npattern * sizeof *pat);
		if (!pat) {
			free(copy);
			goto oom;
		}
		memcpy(pat, pattern, npattern * sizeof *pat);
	}
	na[(*cnt)++] = (struct gstart){ copy, n, pat, pat ? npattern : 0 };
	return 0;
oom:
	avt_error("explore: out of memory");
	return -1;
}

size_t xp_guide_npredicted(const struct xp_guide *g)
{
	return g ? g->npred : 0;
}

size_t xp_guide_ncorpus(const struct xp_guide *g)
{
	return g ? g->ncorpus : 0;
}

const uint32_t *xp_guide_predicted(const struct xp_guide *g, size_t i, size_t *n)
{
	*n = g->pred[i].n;
	return g->pred[i].threads;
}

const uint32_t *xp_guide_pattern(const struct xp_guide *g, size_t i, size_t *n)
{
	*n = g->pred[i].npattern;
	return g->pred[i].pattern;
}

/* ---- a guided run */

enum { G_DELAY, G_NORMAL, G_BOOST };

struct xp_guided {
	struct xp_pos *pos;       /* the baseline that decides the rest */
	struct xp_look look;
	struct xp_rng rng;
	uint64_t seed, run_index;
	/* the prefix of a corpus seed */
	const uint32_t *prefix;
	size_t nprefix, ppos;
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
 * initial value); a few uniform tries. */
static void draw_target(struct xp_guided *gr, const struct xp_guide *g)
{
	if (!g || g->nreaders == 0)
		return;
	for (int tries = 0; tries < 64; tries++) {
		const struct gev *r = &g->ev[g->readers[xp_rng_below(&gr->rng, g->nreaders)]];
		size_t lo = (size_t)(r - g->ev), hi;
		while (lo < g->nev && g->ev[lo].obj == r->obj && !g->ev[lo].writes)
			lo++;
		for (hi = lo; hi < g->nev && g->ev[hi].obj == r->obj; hi++)
			;
		/* writers lo .. hi-1, and the initial value as choice hi-lo */
		size_t c = (size_t)xp_rng_below(&gr->rng, hi - lo + 1);
		uint64_t wid = c < hi - lo ? abs_id(g->ev[lo + c].thread, g->ev[lo + c].site) : 0;
		if (c < hi - lo && g->ev[lo + c].thread == r->thread)
			continue; /* program order decides that one, not the schedule */
		uint64_t key = rf_key(r->obj, abs_id(r->thread, r->site), wid);
		/* from scratch: a pair no run has shown or tried; after a seed's
		 * prefix any pair, to combine with the seed's (the pair it
		 * showed first may need a second one beside it) */
		if (!gr->prefix && (xp_guide_seen(g, key) || xp_guide_tried(g, key)))
			continue;
		gr->target = key;
		gr->has_target = true;
		gr->obj = r->obj;
		gr->rthread = r->thread;
		gr->rsite = r->site;
		gr->wthread = c < hi - lo ? g->ev[lo + c].thread : UINT32_MAX;
		gr->wsite = c < hi - lo ? g->ev[lo + c].site : 0;
		return;
	}
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
	if (g && g->ncorpus && xp_rng_below(&gr->rng, 2)) {
		size_t s = (size_t)xp_rng_below(&gr->rng, g->ncorpus);
		gr->seed_no = (long)s;
		gr->prefix = g->corpus[s].threads;
		gr->nprefix = (size_t)xp_rng_below(&gr->rng, g->corpus[s].n + 1);
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
	free(gr->idx);
	free(gr);
}

int xp_guided_event(struct xp_guided *gr, const struct avt_event *ev)
{
	if (gr->ppos < gr->nprefix)
		gr->ppos = gr->prefix[gr->ppos] == ev->thread ? gr->ppos + 1 : gr->nprefix;
	uint64_t obj = xp_event_obj(ev->kind, ev->obj);
	if (gr->has_target && obj == gr->obj) {
		uint64_t site = xp_site(ev);
		if (!gr->target_done && ev->thread == gr->rthread && site == gr->rsite &&
		    xp_kind_reads(ev->kind))
			gr->target_done = true;
		if (xp_kind_writes(ev->kind))
			gr->last_w = abs_id(ev->thread, site);
	}
	if (xp_look_event(&gr->look, ev) < 0)
		return -1;
	return xp_pos_event(gr->pos, ev);
}

static int klass(const struct xp_guided *gr, uint32_t lid)
{
	const struct xp_rev *next = xp_look_next(&gr->look, lid);
	uint64_t want = gr->wthread == UINT32_MAX ? 0 : abs_id(gr->wthread, gr->wsite);

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
	if (gr->ppos < gr->nprefix)
		for (size_t i = 0; i < n; i++)
			if (lids[i] == gr->prefix[gr->ppos])
				return i;
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
		xp_put(buf, len, &used, " from corpus#%ld/%zu", gr->seed_no, gr->nprefix);
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
