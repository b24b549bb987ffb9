/*
 * The recording per thread (struct xp_rec) and a run's view of it
 * (struct xp_look), which every policy that looks ahead shares; what an
 * event is on and whether two conflict (rec.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "trace/log.h"

/* ---- events */

uint64_t xp_event_obj(unsigned kind, uint64_t obj)
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
		return 0;
	default:
		return obj;
	}
}

static bool reads_only(unsigned kind)
{
	return kind == AVT_EV_READ || kind == AVT_EV_RD_ACQUIRE;
}

bool xp_conflict(unsigned k1, uint64_t o1, unsigned k2, uint64_t o2)
{
	o1 = xp_event_obj(k1, o1);
	o2 = xp_event_obj(k2, o2);
	return o1 && o1 == o2 && !(reads_only(k1) && reads_only(k2));
}

uint64_t xp_site(const struct avt_event *ev)
{
	return (uint64_t)ev->site_mod << 48 ^ ev->site_off;
}

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

/* ---- the recording */

struct xp_obj {
	uint64_t obj;
	uint32_t first; /* first thread seen on it */
	bool shared;    /* a second thread too */
};

struct xp_rec {
	uint32_t nthreads;
	size_t *count;        /* per thread */
	struct xp_rev **tev;  /* per thread, count[t] each */
	struct xp_obj *objs;  /* sorted by obj */
	size_t nobjs;
};

static int cmp_obj(const void *a, const void *b)
{
	const struct xp_obj *x = a, *y = b;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int rec_objects(struct xp_rec *r, const struct avt_event *ev, size_t n)
{
	struct xp_obj *o = malloc((n ? n : 1) * sizeof *o);
	size_t k = 0;

	if (!o)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t obj = xp_event_obj(ev[i].kind, ev[i].obj);
		if (obj)
			o[k++] = (struct xp_obj){ obj, ev[i].thread, false };
	}
	qsort(o, k, sizeof *o, cmp_obj);
	r->nobjs = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		bool shared = false;
		while (j < k && o[j].obj == o[i].obj) {
			shared |= o[j].first != o[i].first;
			j++;
		}
		o[r->nobjs] = o[i];
		o[r->nobjs++].shared = shared;
		i = j;
	}
	r->objs = o;
	return 0;
}

struct xp_rec *xp_rec_new(const struct avt_event *ev, size_t n)
{
	struct xp_rec *r = calloc(1, sizeof *r);
	size_t *fill = NULL;

	if (!r)
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (ev[i].thread + 1 > r->nthreads)
			r->nthreads = ev[i].thread + 1;
	r->count = calloc(r->nthreads ? r->nthreads : 1, sizeof *r->count);
	r->tev = calloc(r->nthreads ? r->nthreads : 1, sizeof *r->tev);
	fill = calloc(r->nthreads ? r->nthreads : 1, sizeof *fill);
	if (!r->count || !r->tev || !fill)
		goto oom;
	for (size_t i = 0; i < n; i++)
		r->count[ev[i].thread]++;
	for (uint32_t t = 0; t < r->nthreads; t++) {
		r->tev[t] = malloc((r->count[t] ? r->count[t] : 1) * sizeof **r->tev);
		if (!r->tev[t])
			goto oom;
	}
	for (size_t i = 0; i < n; i++) {
		struct xp_rev *e = &r->tev[ev[i].thread][fill[ev[i].thread]++];
		memset(e, 0, sizeof *e);
		e->obj = xp_event_obj(ev[i].kind, ev[i].obj);
		e->site = xp_site(&ev[i]);
		e->kind = ev[i].kind;
	}
	if (rec_objects(r, ev, n) < 0)
		goto oom;
	free(fill);
	return r;
oom:
	free(fill);
	xp_rec_free(r);
	avt_error("explore: out of memory");
	return NULL;
}

void xp_rec_free(struct xp_rec *r)
{
	if (!r)
		return;
	for (uint32_t t = 0; r->tev && t < r->nthreads; t++)
		free(r->tev[t]);
	free(r->tev);
	free(r->count);
	free(r->objs);
	free(r);
}

uint32_t xp_rec_nthreads(const struct xp_rec *r)
{
	return r ? r->nthreads : 0;
}

size_t xp_rec_count(const struct xp_rec *r, uint32_t lid)
{
	return r && lid < r->nthreads ? r->count[lid] : 0;
}

const struct xp_rev *xp_rec_event(const struct xp_rec *r, uint32_t lid, size_t idx)
{
	if (!r || lid >= r->nthreads || idx >= r->count[lid])
		return NULL;
	return &r->tev[lid][idx];
}

int xp_rec_shared(const struct xp_rec *r, uint64_t **objs, size_t *n)
{
	size_t k = 0;

	*n = 0;
	*objs = malloc((r && r->nobjs ? r->nobjs : 1) * sizeof **objs);
	if (!*objs) {
		avt_error("explore: out of memory");
		return -1;
	}
	for (size_t i = 0; r && i < r->nobjs; i++)
		if (r->objs[i].shared)
			(*objs)[k++] = r->objs[i].obj;
	*n = k;
	return 0;
}

/* ---- the per-run thread view */

void xp_look_init(struct xp_look *l, const struct xp_rec *rec, unsigned yield_limit)
{
	memset(l, 0, sizeof *l);
	l->rec = rec;
	l->yield_limit = yield_limit ? yield_limit : XP_YIELD_LIMIT;
}

void xp_look_release(struct xp_look *l)
{
	free(l->t);
	l->t = NULL;
	l->n = l->cap = 0;
}

int xp_look_reg(struct xp_look *l, uint32_t lid)
{
	if (lid < l->n)
		return 0;
	if (lid >= (1u << 20)) {
		avt_error("explore: thread id %u above %u", lid, 1u << 20);
		return -1;
	}
	if (lid >= l->cap) {
		size_t ncap = l->cap ? l->cap : 16;
		while (ncap <= lid)
			ncap *= 2;
		struct xp_lthread *nt = realloc(l->t, ncap * sizeof *nt);
		if (!nt) {
			avt_error("explore: out of memory");
			return -1;
		}
		l->t = nt;
		l->cap = ncap;
	}
	memset(l->t + l->n, 0, (lid + 1 - l->n) * sizeof *l->t);
	l->n = (size_t)lid + 1;
	return 0;
}

static bool same_rev(const struct xp_rev *r, const struct avt_event *ev)
{
	return r->kind == ev->kind && r->obj == xp_event_obj(ev->kind, ev->obj) &&
	       (r->kind == AVT_EV_START || r->kind == AVT_EV_EXIT || r->site == xp_site(ev));
}

/* The index after the recorded event ev is taken to be.  Usually the next
 * one; if the run went another way (a loop went round once more or once
 * less, a branch went elsewhere), the same event a little further on in
 * the thread's recording puts the guess back in step.  An event found
 * nowhere near is one the recording does not have here (an access the
 * recording's thread never made: its site was disarmed as private before
 * that thread came to it): the guess stays.  (Taking it for the next
 * recorded one put the guess a step further out of step with every such
 * event, and the thread's expected events, and so its budgets, were
 * never right again.) */
#define XP_RESYNC_WINDOW 64u

static uint32_t resync(const struct xp_look *l, const struct avt_event *ev, uint32_t done)
{
	for (uint32_t j = done; j < done + XP_RESYNC_WINDOW; j++) {
		const struct xp_rev *r = xp_rec_event(l->rec, ev->thread, j);
		if (!r)
			break;
		if (same_rev(r, ev))
			return j + 1;
	}
	return done;
}

int xp_look_event(struct xp_look *l, const struct avt_event *ev)
{
	if (xp_look_reg(l, ev->thread) < 0)
		return -1;
	if (ev->kind == AVT_EV_CREATE && ev->obj < (1u << 20) && xp_look_reg(l, (uint32_t)ev->obj) < 0)
		return -1;
	struct xp_lthread *t = &l->t[ev->thread];
	t->done = resync(l, ev, t->done);
	t->made++;
	t->spins = 0;
	t->parked = false;
	return 0;
}

const struct xp_rev *xp_look_next(const struct xp_look *l, uint32_t lid)
{
	uint32_t done = lid < l->n ? l->t[lid].done : 0;
	const struct xp_rev *r = xp_rec_event(l->rec, lid, done);
	/* a thread's start is made together with its first request, when it
	 * is first picked: what the pick decides is that request */
	if (r && r->kind == AVT_EV_START && xp_rec_event(l->rec, lid, done + 1))
		r = xp_rec_event(l->rec, lid, done + 1);
	return r;
}

bool xp_look_yield(struct xp_look *l, uint32_t lid)
{
	if (lid >= l->n)
		return false;
	struct xp_lthread *t = &l->t[lid];
	if (++t->spins < l->yield_limit)
		return false;
	t->spins = 0;
	t->parked = true;
	t->parked_at = ++l->parks;
	return true;
}

size_t xp_look_candidates(const struct xp_look *l, const uint32_t *lids, size_t n, size_t *idx)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (lids[i] >= l->n || !l->t[lids[i]].parked)
			idx[k++] = i;
	if (k > 0)
		return k;
	idx[0] = 0;
	for (size_t i = 1; i < n; i++)
		if (l->t[lids[i]].parked_at < l->t[lids[idx[0]]].parked_at)
			idx[0] = i;
	return 1;
}
