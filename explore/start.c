/*
 * What explore has learnt so far, and where runs may start (start.h).
 */
#include <stdlib.h>
#include <string.h>

#include "start.h"
#include "rf.h"
#include "trace/log.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
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
	g->nseen = xp_rf_sort(g->seen, g->nseen + n);
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

const uint32_t *xp_guide_corpus(const struct xp_guide *g, size_t i, size_t *n)
{
	*n = g->corpus[i].n;
	return g->corpus[i].threads;
}

bool xp_guide_draw_pair(const struct xp_guide *g, struct xp_rng *rng, bool fresh, struct xp_pair *out)
{
	if (!g || g->nreaders == 0)
		return false;
	for (int tries = 0; tries < 64; tries++) {
		const struct gev *r = &g->ev[g->readers[xp_rng_below(rng, g->nreaders)]];
		size_t lo = (size_t)(r - g->ev), hi;
		while (lo < g->nev && g->ev[lo].obj == r->obj && !g->ev[lo].writes)
			lo++;
		for (hi = lo; hi < g->nev && g->ev[hi].obj == r->obj; hi++)
			;
		/* writers lo .. hi-1, and the initial value as choice hi-lo */
		size_t c = (size_t)xp_rng_below(rng, hi - lo + 1);
		uint64_t wid = c < hi - lo ? xp_rf_event(g->ev[lo + c].thread, g->ev[lo + c].site) : 0;
		if (c < hi - lo && g->ev[lo + c].thread == r->thread)
			continue; /* program order decides that one, not the schedule */
		uint64_t key = xp_rf_key(r->obj, xp_rf_event(r->thread, r->site), wid);
		if (fresh && (xp_guide_seen(g, key) || xp_guide_tried(g, key)))
			continue;
		*out = (struct xp_pair){ .key = key, .obj = r->obj, .rthread = r->thread, .rsite = r->site,
					 .wthread = c < hi - lo ? g->ev[lo + c].thread : UINT32_MAX,
					 .wsite = c < hi - lo ? g->ev[lo + c].site : 0 };
		return true;
	}
	return false;
}
