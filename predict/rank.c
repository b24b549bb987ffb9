/*
 * Candidate dedupe and ranking (rank.h).
 *
 * The dedupe key is the detector, the pattern and the code sites of the
 * events that make the violation, not the threads or the times: the same
 * code interleaved the same way is one bug, however often a loop or a pool
 * of identical workers repeats it.
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "rank.h"
#include "sort.h"
#include "trace/log.h"

const char *pr_detector_name(enum pr_detector d)
{
	switch (d) {
	case PR_DET_DEADLOCK:
		return "deadlock";
	case PR_DET_PENELOPE:
		return "penelope";
	case PR_DET_PECAN:
		return "pecan";
	case PR_DET_ORDER:
		return "order";
	default:
		return "sidetrack";
	}
}

const char *pr_pattern_name(enum pr_pattern p)
{
	switch (p) {
	case PR_PAT_BEFORE:
		return "before-window";
	case PR_PAT_IN:
		return "in-window";
	case PR_PAT_AFTER:
		return "after-window";
	case PR_PAT_RWR:
		return "RWR";
	case PR_PAT_RWW:
		return "RWW";
	case PR_PAT_WWR:
		return "WWR";
	case PR_PAT_WRW:
		return "WRW";
	case PR_PAT_WWW:
		return "WWW";
	case PR_PAT_PECAN:
		return "pecan";
	case PR_PAT_ORDER:
		return "reads-from";
	default:
		return "cycle";
	}
}

void pr_cands_init(struct pr_cands *cs, const struct pr_model *m)
{
	memset(cs, 0, sizeof *cs);
	cs->m = m;
}

void pr_cands_release(struct pr_cands *cs)
{
	free(cs->c);
	free(cs->tab);
	free(cs->tabh);
	memset(cs, 0, sizeof *cs);
}

static int site_cmp(const struct avt_event *a, const struct avt_event *b)
{
	if (a->site_mod != b->site_mod)
		return a->site_mod < b->site_mod ? -1 : 1;
	if (a->site_off != b->site_off)
		return a->site_off < b->site_off ? -1 : 1;
	return 0;
}

int pr_cands_same_bug(const struct pr_model *m, const struct pr_cand *a, const struct pr_cand *b)
{
	if (a->det != b->det || a->pat != b->pat || a->nev != b->nev || a->pp != b->pp)
		return 0;
	for (uint32_t i = 0; i < a->nev; i++)
		if (site_cmp(pr_ev(m, a->ev[i]), pr_ev(m, b->ev[i])))
			return 0;
	if (a->det == PR_DET_PECAN) {
		for (uint32_t i = 0; i < a->nev; i++)
			if (pr_ev(m, a->ev[i])->obj != pr_ev(m, b->ev[i])->obj)
				return 0;
		return 1;
	}
	/* order: the k-th thread writing after the read is another write
	 * (one code path run by a pool of threads writes different values) */
	if (a->det == PR_DET_ORDER)
		return a->variant == b->variant;
	/* one code path racing on different elements is different bugs */
	return a->det != PR_DET_PENELOPE || pr_ev(m, a->ev[0])->obj == pr_ev(m, b->ev[0])->obj;
}

static int same_key(const struct pr_model *m, const struct pr_cand *a, const struct pr_cand *b)
{
	return pr_cands_same_bug(m, a, b) && a->variant == b->variant;
}

uint64_t pr_cands_bug_hash(const struct pr_model *m, const struct pr_cand *c)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL * ((uint64_t)c->det * 8 + c->pat + 1);
	for (uint32_t i = 0; i < c->nev; i++) {
		const struct avt_event *e = pr_ev(m, c->ev[i]);
		h ^= e->site_off + ((uint64_t)e->site_mod << 48);
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	if (c->det == PR_DET_PENELOPE)
		h ^= pr_hash64(pr_ev(m, c->ev[0])->obj);
	if (c->det == PR_DET_ORDER)
		h = pr_hash64(h ^ c->variant);
	if (c->det == PR_DET_PECAN) {
		h ^= pr_hash64((uint64_t)(uintptr_t)c->pp);
		for (uint32_t i = 0; i < c->nev; i++)
			h = pr_hash64(h ^ pr_ev(m, c->ev[i])->obj);
	}
	return h;
}

static uint64_t key_hash(const struct pr_model *m, const struct pr_cand *c)
{
	return pr_cands_bug_hash(m, c) ^ pr_hash64(c->variant + 1);
}

/* Rotates a cycle so that the thread whose (hold, request) sites are the
 * smallest comes first. */
static void canon_cycle(const struct pr_model *m, struct pr_cand *c)
{
	uint32_t k = c->nthr, best = 0;
	for (uint32_t i = 1; i < k; i++) {
		int d = site_cmp(pr_ev(m, c->ev[i]), pr_ev(m, c->ev[best]));
		if (!d)
			d = site_cmp(pr_ev(m, c->ev[k + i]), pr_ev(m, c->ev[k + best]));
		if (d < 0)
			best = i;
	}
	if (!best)
		return;
	struct pr_cand r = *c;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t j = (i + best) % k;
		r.thr[i] = c->thr[j];
		r.ev[i] = c->ev[j];
		r.ev[k + i] = c->ev[k + j];
		r.lock[i] = c->lock[j];
	}
	*c = r;
}

/* The slot of key c (hash h): an equal key's (*found), or the empty one
 * where it would go; *ncmp counts the full comparisons. */
static size_t find_slot(const struct pr_cands *cs, const struct pr_cand *c, uint64_t h,
			int *found, uint64_t *ncmp)
{
	size_t i = h & (cs->tabcap - 1);
	*found = 0;
	for (; cs->tab[i]; i = (i + 1) & (cs->tabcap - 1)) {
		if (cs->tabh[i] != h)
			continue;
		++*ncmp;
		if (same_key(cs->m, &cs->c[cs->tab[i] - 1], c)) {
			*found = 1;
			break;
		}
	}
	return i;
}

/* Doubles the table; the entries move by their stored hashes. */
static int rehash(struct pr_cands *cs)
{
	size_t ncap = cs->tabcap ? cs->tabcap * 2 : 64;
	uint32_t *t = calloc(ncap, sizeof *t);
	uint64_t *th = malloc(ncap * sizeof *th);
	if (!t || !th) {
		free(t);
		free(th);
		return -1;
	}
	for (size_t k = 0; k < cs->tabcap; k++) {
		if (!cs->tab[k])
			continue;
		size_t i = cs->tabh[k] & (ncap - 1);
		while (t[i])
			i = (i + 1) & (ncap - 1);
		t[i] = cs->tab[k];
		th[i] = cs->tabh[k];
	}
	free(cs->tab);
	free(cs->tabh);
	cs->tab = t;
	cs->tabh = th;
	cs->tabcap = ncap;
	return 0;
}

int pr_cands_has(const struct pr_cands *cs, const struct pr_cand *c)
{
	struct pr_cand k = *c;
	int found = 0;
	if (k.det == PR_DET_DEADLOCK)
		canon_cycle(cs->m, &k);
	uint64_t ncmp = 0;
	if (cs->tabcap)
		find_slot(cs, &k, key_hash(cs->m, &k), &found, &ncmp);
	return found;
}

int pr_cands_add(struct pr_cands *cs, const struct pr_cand *c)
{
	struct pr_cand k = *c;
	int found;
	if (k.det == PR_DET_DEADLOCK)
		canon_cycle(cs->m, &k);
	if ((cs->n + 1) * 2 > cs->tabcap && rehash(cs) < 0)
		goto oom;
	uint64_t h = key_hash(cs->m, &k);
	size_t slot = find_slot(cs, &k, h, &found, &cs->ncmp);
	if (found)
		return 0;
	if (cs->n == cs->cap) {
		size_t ncap = cs->cap ? cs->cap * 2 : 16;
		struct pr_cand *n = realloc(cs->c, ncap * sizeof *n);
		if (!n)
			goto oom;
		cs->c = n;
		cs->cap = ncap;
	}
	cs->c[cs->n++] = k;
	cs->tab[slot] = (uint32_t)cs->n;
	cs->tabh[slot] = h;
	return 1;
oom:
	avt_error("cannot predict: out of memory");
	return -1;
}

static int cand_cmp(const void *pa, const void *pb)
{
	const struct pr_cand *a = pa, *b = pb;
	if (a->nthr != b->nthr)
		return a->nthr < b->nthr ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	if (a->det != b->det)
		return a->det < b->det ? -1 : 1;
	return a->pat < b->pat ? -1 : a->pat > b->pat;
}

static int round_cmp(const void *pa, const void *pb)
{
	const struct pr_cand *a = pa, *b = pb;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	return a->det < b->det ? -1 : a->det > b->det;
}

/* cand_cmp() and round_cmp() as one integer each, the fields in the
 * comparison's order (nthr <= 4, det and pat below 256) */
_Static_assert(PR_DET_COUNT <= 256 && PR_PAT_ORDER < 256, "cand_key() packs them in a byte");
static uint64_t cand_key(const struct pr_cand *c)
{
	return (uint64_t)c->nthr << 56 | (uint64_t)c->order << 16 | (uint64_t)c->det << 8 | c->pat;
}

static uint64_t round_key(const struct pr_cand *c)
{
	return (uint64_t)c->round << 8 | c->det;
}

/* Sorts the candidates by key(), stably: the order qsort() with cmp (a
 * merge sort in glibc) gave, in a radix sort of the keys and one move of
 * each candidate, along the permutation's cycles (candidates are large:
 * a comparison sort spent most of its time moving them, and a sorted copy
 * would raise the peak; issue 30).  Out of memory, qsort() itself. */
static void sort_cands(struct pr_cands *cs, uint64_t (*key)(const struct pr_cand *),
		       int (*cmp)(const void *, const void *))
{
	struct pr_kv *kv = cs->n <= UINT32_MAX ? malloc(cs->n * 2 * sizeof *kv) : NULL;
	if (!kv) {
		qsort(cs->c, cs->n, sizeof *cs->c, cmp);
		return;
	}
	for (size_t i = 0; i < cs->n; i++)
		kv[i] = (struct pr_kv){ key(&cs->c[i]), (uint32_t)i };
	pr_sort_kv(kv, kv + cs->n, cs->n);
	/* position j takes the candidate at kv[j].val; a done position's
	 * val is its own */
	for (size_t i = 0; i < cs->n; i++) {
		if (kv[i].val == i)
			continue;
		struct pr_cand first = cs->c[i];
		size_t j = i;
		while (kv[j].val != i) {
			size_t from = kv[j].val;
			cs->c[j] = cs->c[from];
			kv[j].val = (uint32_t)j;
			j = from;
		}
		cs->c[j] = first;
		kv[j].val = (uint32_t)j;
	}
	free(kv);
}

void pr_cands_prerank(struct pr_cands *cs)
{
	uint32_t taken[PR_DET_COUNT] = { 0 }, pairs = 0;
	/* the dedupe table indexes the array: it is not needed any more */
	free(cs->tab);
	free(cs->tabh);
	cs->tab = NULL;
	cs->tabh = NULL;
	cs->tabcap = 0;
	if (!cs->n)
		return;
	sort_cands(cs, cand_key, cand_cmp);
	/* detectors take turns, each in its own order, so that a flood of
	 * one kind cannot crowd the other out of max_predictions */
	/* order's after all the others', site pairs' after order's */
	for (size_t i = 0; i < cs->n; i++) {
		struct pr_cand *c = &cs->c[i];
		if (c->pair)
			c->round = pairs++ + (1u << 31);
		else
			c->round = taken[c->det]++ + (c->det == PR_DET_ORDER ? 1u << 30 : 0);
	}
	sort_cands(cs, round_key, round_cmp);
}

static int pred_cmp(const void *pa, const void *pb)
{
	const struct prediction *a = pa, *b = pb;
	bool oa = !strcmp(a->detector, "order"), ob = !strcmp(b->detector, "order");
	/* a site pair's race after all the others: it adds replays at the
	 * end, never puts one before a prediction made without it */
	if (a->site_pair != b->site_pair)
		return a->site_pair ? 1 : -1;
	if (a->locked_race != b->locked_race)
		return a->locked_race ? 1 : -1;
	if (oa && ob) {
		/* the reader moved furthest first: it sees the state that differs
		 * most from what the recording showed it */
		uint64_t la = schedule_total_events(a->sched), lb = schedule_total_events(b->sched);
		if (la != lb)
			return la > lb ? -1 : 1;
	}
	if (a->nvars != b->nvars)
		return a->nvars < b->nvars ? -1 : 1;
	if (a->nthreads != b->nthreads)
		return a->nthreads < b->nthreads ? -1 : 1;
	/* one that changes what a read sees before one that only changes
	 * which write survives (a write-write race, WWW) */
	if (a->writes_only != b->writes_only)
		return a->writes_only ? 1 : -1;
	if (a->context_switches != b->context_switches)
		return a->context_switches < b->context_switches ? -1 : 1;
	if (a->cut_seq != b->cut_seq)
		return a->cut_seq < b->cut_seq ? -1 : 1;
	if (oa != ob) /* a reordering of what the program synchronised: after */
		return oa ? 1 : -1;
	int d = strcmp(a->detector, b->detector);
	if (d)
		return d;
	d = strcmp(a->pattern, b->pattern);
	if (d)
		return d;
	for (unsigned i = 0; i < a->nevents && i < b->nevents; i++)
		if (a->events[i] != b->events[i])
			return a->events[i] < b->events[i] ? -1 : 1;
	return 0;
}

void pr_predictions_rank(struct prediction *p, size_t n)
{
	/* the races with a locked access go after the plain ones only when
	 * there are plain ones: where every race is on words the program
	 * updates with locked instructions (a lock-free stack's top: its ABA
	 * is such a race), they keep their order among the others */
	bool plain = false;
	for (size_t i = 0; i < n; i++)
		plain |= p[i].plain_race;
	for (size_t i = 0; i < n && !plain; i++)
		p[i].locked_race = false;
	if (n)
		qsort(p, n, sizeof *p, pred_cmp);
	for (size_t i = 0; i < n; i++)
		p[i].id = (unsigned)(i + 1);
}
