/*
 * From an old schedule to a plan over a new recording (docs/verify.md).
 *
 * Counterparts.  An old event's counterpart is the new event of the same
 * thread (by creation order) with the same kind class, function, object
 * name and occurrence count: "T1's 1st read of balance in deposit"; when
 * the function has none, the one in another function with the same
 * occurrence over the whole thread ("T1's 1st read of balance"): a fix
 * often moves an access or a lock into the caller.
 * Lines move in a rebuild, so they are never part of the key (nor the
 * digits after a ':' in an object name: a heap block is named by its
 * allocation line).  An atomic read-modify-write counts as a read and as
 * a write, so a read-then-write replaced by a fetch-add keeps both
 * counterparts, merged into one event.
 *
 * Essential events: the pattern's and those on both sides of each context
 * switch, lock operations excepted (a fix usually changes exactly those;
 * the enactment honours the new locking by running the holder first).
 * Every essential event needs a counterpart, in its thread's old order;
 * otherwise the interleaving is no longer possible, and the first such
 * event in schedule order is where the new program parted from it.
 * Other events keep their counterpart when it fits in order between the
 * essential ones, and vanish otherwise (a release/acquire pair merged when
 * the lock is now held across both sections).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/event.h"
#include "verify.h"

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

int vf_desc_add(struct vf_desc *d, const struct vf_event *e)
{
	if (d->nev == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 256;
		struct vf_event *n = realloc(d->ev, ncap * sizeof *n);
		if (!n)
			return -1;
		d->ev = n;
		d->cap = ncap;
	}
	struct vf_event c = *e;
	c.func = dup0(e->func);
	c.file = dup0(e->file);
	c.obj = dup0(e->obj);
	if (!c.func || !c.file || !c.obj) {
		free(c.func);
		free(c.file);
		free(c.obj);
		return -1;
	}
	d->ev[d->nev++] = c;
	return 0;
}

void vf_desc_release(struct vf_desc *d)
{
	for (size_t i = 0; i < d->nev; i++) {
		free(d->ev[i].func);
		free(d->ev[i].file);
		free(d->ev[i].obj);
	}
	free(d->ev);
	memset(d, 0, sizeof *d);
}

static int by_thread_index(const void *a, const void *b)
{
	const struct vf_event *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->tindex < y->tindex ? -1 : x->tindex > y->tindex;
}

/* The class an occurrence is counted in: 'r', 'w', or the kind itself. */
static int access_class(unsigned kind, bool as_write)
{
	if (kind == AVT_EV_READ)
		return 'r';
	if (kind == AVT_EV_WRITE)
		return 'w';
	if (kind == AVT_EV_RMW)
		return as_write ? 'w' : 'r';
	return 256 + (int)kind;
}

/* Object names compared without the digits after a ':' (lines). */
static bool same_obj(const char *a, const char *b)
{
	for (;;) {
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		bool colon = *a == ':';
		a++, b++;
		if (colon) {
			while (*a >= '0' && *a <= '9')
				a++;
			while (*b >= '0' && *b <= '9')
				b++;
		}
	}
}

static bool same_place(const struct vf_event *a, const struct vf_event *b, bool func)
{
	return a->thread == b->thread && (!func || !strcmp(a->func, b->func)) && same_obj(a->obj, b->obj);
}

/* e's occurrences (*r in its read class, *w in its write class) among
 * the events of its thread before it (d->ev[0..i)) at the same place:
 * by a backwards scan to the previous event of each class there. */
static void count_occ(const struct vf_desc *d, size_t i, bool func, uint32_t *r, uint32_t *w)
{
	const struct vf_event *e = &d->ev[i];
	int cr = access_class(e->kind, false), cw = access_class(e->kind, true);
	bool found_r = false, found_w = cr == cw;
	*r = *w = 1;
	for (size_t j = i; j-- > 0 && d->ev[j].thread == e->thread && !(found_r && found_w);) {
		const struct vf_event *p = &d->ev[j];
		if (!same_place(p, e, func))
			continue;
		uint32_t pr = func ? p->occ : p->occ_any, pw = func ? p->occ_w : p->occ_any_w;
		int pcr = access_class(p->kind, false), pcw = access_class(p->kind, true);
		if (!found_r && (pcr == cr || pcw == cr)) {
			*r = (pcr == cr ? pr : pw) + 1;
			found_r = true;
		}
		if (!found_w && (pcr == cw || pcw == cw)) {
			*w = (pcr == cw ? pr : pw) + 1;
			found_w = true;
		}
	}
	if (cr == cw)
		*w = *r;
}

void vf_desc_number(struct vf_desc *d)
{
	if (d->nev)
		qsort(d->ev, d->nev, sizeof *d->ev, by_thread_index);
	for (size_t i = 0; i < d->nev; i++) {
		struct vf_event *e = &d->ev[i];
		count_occ(d, i, true, &e->occ, &e->occ_w);
		count_occ(d, i, false, &e->occ_any, &e->occ_any_w);
	}
}

const struct vf_event *vf_desc_find(const struct vf_desc *d, uint32_t thread, uint32_t tindex)
{
	struct vf_event key = { .thread = thread, .tindex = tindex };
	return d->nev ? bsearch(&key, d->ev, d->nev, sizeof *d->ev, by_thread_index) : NULL;
}

bool vf_kind_is_lock(unsigned kind)
{
	return kind == AVT_EV_ACQUIRE || kind == AVT_EV_RELEASE || kind == AVT_EV_TRYLOCK_FAIL ||
	       kind == AVT_EV_RD_ACQUIRE || kind == AVT_EV_WR_ACQUIRE;
}

/* The occurrence of e in class c (its read or its write side), within
 * its function or (any) within its thread. */
static uint32_t occ_in(const struct vf_event *e, int c, bool any)
{
	bool first = access_class(e->kind, false) == c;
	if (any)
		return first ? e->occ_any : e->occ_any_w;
	return first ? e->occ : e->occ_w;
}

/* The new event that is o's counterpart: index into nw->ev, or -1.  The
 * new events of o's thread are nw->ev[lo..hi).  Same function first;
 * when the function has none (the fix moved the access into another
 * function: a lock now taken in the caller), the one of the same
 * occurrence over the whole thread, if it is in another function. */
static long counterpart(const struct vf_desc *nw, size_t lo, size_t hi, const struct vf_event *o)
{
	int c = access_class(o->kind, o->kind == AVT_EV_WRITE);
	for (int any = 0; any < 2; any++)
		for (size_t i = lo; i < hi; i++) {
			const struct vf_event *n = &nw->ev[i];
			bool fits = access_class(n->kind, false) == c || access_class(n->kind, true) == c;
			if (fits && occ_in(n, c, any) == occ_in(o, c, any) && same_place(n, o, !any) &&
			    (!any || strcmp(n->func, o->func)))
				return (long)i;
		}
	return -1;
}

/* An old event as the plan sees it. */
struct vf_old {
	const struct vf_event *e;
	size_t order;     /* schedule order (covered), or after them (pattern only) */
	size_t step;      /* its step, SIZE_MAX if not covered */
	bool essential;
	long map;         /* counterpart's tindex in the new recording, or -1 */
	bool kept;
};

static int by_thread_then_index(const void *a, const void *b)
{
	const struct vf_old *x = a, *y = b;
	return by_thread_index(x->e, y->e);
}

void vf_plan_release(struct vf_plan *p)
{
	free(p->steps);
	memset(p, 0, sizeof *p);
}

static int add_old(struct vf_old **v, size_t *n, size_t *cap, const struct vf_old *o)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].e == o->e) {
			(*v)[i].essential |= o->essential;
			return 0;
		}
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct vf_old *nv = realloc(*v, ncap * sizeof *nv);
		if (!nv)
			return -1;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = *o;
	return 0;
}

/* Range of thread th's events in d: [*lo, *hi). */
static void thread_range(const struct vf_desc *d, uint32_t th, size_t *lo, size_t *hi)
{
	size_t a = 0, b = d->nev;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (d->ev[m].thread < th)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	for (b = a; b < d->nev && d->ev[b].thread == th; b++)
		;
	*hi = b;
}

/* May an event that maps to m follow one that maps to last?  Later, or
 * the same atomic read-modify-write (a read and a write merged). */
static bool fits_after(const struct vf_desc *nw, size_t lo, long last, long m)
{
	if (m > last)
		return true;
	return m == last && m >= 0 && nw->ev[lo + (size_t)m].kind == AVT_EV_RMW;
}

static void check_thread(const struct vf_desc *nw, struct vf_old *v, size_t n, struct vf_plan *p)
{
	size_t lo, hi;
	thread_range(nw, v[0].e->thread, &lo, &hi);
	for (size_t i = 0; i < n; i++) {
		long c = counterpart(nw, lo, hi, v[i].e);
		/* nw describes every event of the thread: the index in its
		 * range is the tindex */
		v[i].map = c < 0 ? -1 : c - (long)lo;
	}
	long last = -1;
	for (size_t i = 0; i < n; i++) {
		struct vf_old *o = &v[i];
		if (o->essential) {
			o->kept = o->map >= 0 && fits_after(nw, lo, last, o->map);
			if (o->kept)
				last = o->map;
			continue;
		}
		long next = -1; /* the next essential event's counterpart */
		for (size_t j = i + 1; j < n && next < 0; j++)
			if (v[j].essential)
				next = v[j].map >= 0 ? v[j].map : -2;
		o->kept = o->map >= 0 && fits_after(nw, lo, last, o->map) &&
			  (next < 0 || fits_after(nw, lo, o->map, next));
		if (o->kept)
			last = o->map;
	}
	(void)p;
}

int vf_plan_make(const struct vf_desc *old, const struct schedule *s, const struct vf_ref *pattern,
		 size_t npattern, const struct vf_desc *nw, struct vf_plan *out)
{
	memset(out, 0, sizeof *out);
	struct vf_old *v = NULL;
	size_t nv = 0, cap = 0, order = 0;
	uint32_t *cur = NULL;
	size_t ncur = 0;
	int rc = -1;
	/* the covered events, step by step */
	size_t prev_run = SIZE_MAX;
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct sched_step *st = &s->steps[i];
		if (st->kind != SCHED_RUN)
			continue;
		if (st->thread >= ncur) {
			uint32_t *nc = realloc(cur, (st->thread + 1) * sizeof *nc);
			if (!nc)
				goto out;
			memset(nc + ncur, 0, (st->thread + 1 - ncur) * sizeof *nc);
			cur = nc;
			ncur = st->thread + 1;
		}
		bool switched = prev_run != SIZE_MAX && s->steps[prev_run].thread != st->thread;
		if (switched && nv) { /* the last event before the switch */
			struct vf_old *b = &v[nv - 1];
			b->essential |= !vf_kind_is_lock(b->e->kind);
		}
		for (uint32_t k = 0; k < st->count; k++) {
			const struct vf_event *e = vf_desc_find(old, st->thread, cur[st->thread]);
			if (!e) {
				snprintf(out->why, sizeof out->why,
					 "step %zu: T%u's event %u is not described (the old recording has fewer)",
					 i + 1, st->thread, cur[st->thread]);
				goto out;
			}
			cur[st->thread]++;
			struct vf_old o = { .e = e, .order = order++, .step = i, .map = -1,
					    .essential = k == 0 && switched && !vf_kind_is_lock(e->kind) };
			if (add_old(&v, &nv, &cap, &o) < 0)
				goto out;
		}
		prev_run = i;
	}
	for (size_t i = 0; i < npattern; i++) {
		const struct vf_event *e = vf_desc_find(old, pattern[i].thread, pattern[i].tindex);
		if (!e) {
			snprintf(out->why, sizeof out->why, "the pattern's event %u of T%u is not described",
				 pattern[i].tindex, pattern[i].thread);
			goto out;
		}
		struct vf_old o = { .e = e, .order = order + e->tindex, .step = SIZE_MAX, .map = -1,
				    .essential = true };
		if (add_old(&v, &nv, &cap, &o) < 0)
			goto out;
	}
	/* counterparts, thread by thread in each thread's order */
	if (nv)
		qsort(v, nv, sizeof *v, by_thread_then_index);
	for (size_t a = 0, b; a < nv; a = b) {
		for (b = a; b < nv && v[b].e->thread == v[a].e->thread; b++)
			;
		check_thread(nw, v + a, b - a, out);
	}
	out->possible = true;
	const struct vf_old *first = NULL;
	for (size_t i = 0; i < nv; i++) {
		out->essential += v[i].essential;
		if (v[i].kept)
			out->matched++;
		else if (!v[i].essential)
			out->vanished++;
		if (v[i].essential && !v[i].kept && (!first || v[i].order < first->order))
			first = &v[i];
	}
	if (first) {
		out->possible = false;
		out->parted = *first->e;
		snprintf(out->why, sizeof out->why, "%s",
			 first->map < 0 ? "no counterpart in the new program"
					: "its counterpart comes out of order in its thread");
		long prev = -1; /* what the thread does instead: after its last kept event */
		for (size_t i = 0; i < nv; i++)
			if (v[i].e->thread == first->e->thread && v[i].e->tindex < first->e->tindex && v[i].kept)
				prev = v[i].map;
		const struct vf_event *in = vf_desc_find(nw, first->e->thread, (uint32_t)(prev + 1));
		if (in) {
			out->instead = *in;
			out->has_instead = true;
		}
		rc = 0;
		goto out;
	}
	/* the plan: per run step, its thread runs through its kept events */
	uint32_t *target = calloc(ncur ? ncur : 1, sizeof *target);
	out->steps = calloc(s->nsteps ? s->nsteps : 1, sizeof *out->steps);
	if (!target || !out->steps) {
		free(target);
		goto out;
	}
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct sched_step *st = &s->steps[i];
		if (st->kind != SCHED_RUN)
			continue;
		uint32_t t = target[st->thread];
		for (size_t j = 0; j < nv; j++)
			if (v[j].step == i && v[j].kept && (uint32_t)v[j].map + 1 > t)
				t = (uint32_t)v[j].map + 1;
		if (t == target[st->thread])
			continue;
		target[st->thread] = t;
		if (out->nsteps && out->steps[out->nsteps - 1].thread == st->thread)
			out->steps[out->nsteps - 1].target = t;
		else
			out->steps[out->nsteps++] = (struct vf_step){ st->thread, t };
	}
	free(target);
	rc = 0;
out:
	if (rc < 0)
		vf_plan_release(out);
	free(v);
	free(cur);
	return rc;
}
