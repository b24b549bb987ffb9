/*
 * Clocks of thread communication only (sclock.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sclock.h"

/* Rows are indexed by the model's chains (model.h), as the model's own
 * clocks: create/join edges are in both relations, so a chain ordered by
 * the model's is ordered by this one too. */

/* The row of the last change point of e's thread at or before e, or
 * NULL if its clock never changed: s->evrow once the build has passed e,
 * a binary search before. */
static const uint32_t *sc_row(const struct pr_sclock *s, uint32_t e)
{
	if (e < s->nrow) {
		uint32_t r = s->evrow[e];
		return r != UINT32_MAX ? s->snap + (size_t)r * s->n : NULL;
	}
	const struct avt_event *ev = pr_ev(s->m, e);
	uint32_t t = ev->thread, lo = 0, hi = s->ncp[t];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->cpidx[t][mid] <= ev->tindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? s->snap + (size_t)s->cpsnap[t][lo - 1] * s->n : NULL;
}

/* The row of thread t's last change point so far, or UINT32_MAX. */
static uint32_t sc_last(const struct pr_sclock *s, uint32_t t)
{
	return s->ncp[t] ? s->cpsnap[t][s->ncp[t] - 1] : UINT32_MAX;
}

/* Chain count of slot k in e's clock (its own chain: implied). */
static uint32_t sc_raw(const struct pr_sclock *s, uint32_t e, uint32_t k)
{
	const struct pr_model *m = s->m;
	const struct avt_event *ev = pr_ev(m, e);
	if (m->slot[ev->thread] == k)
		return m->sbase[ev->thread] + ev->tindex + 1;
	const uint32_t *r = sc_row(s, e);
	return r ? r[k] : 0;
}

uint32_t pr_sclock_at(const struct pr_sclock *s, uint32_t e, uint32_t u)
{
	const struct avt_event *ev = pr_ev(s->m, e);
	if (ev->thread == u)
		return ev->tindex + 1;
	return pr_slot_count(s->m, u, sc_raw(s, e, s->m->slot[u]));
}

bool pr_sclock_hb(const struct pr_sclock *s, uint32_t a, uint32_t b)
{
	const struct avt_event *ea = pr_ev(s->m, a);
	return pr_sclock_at(s, b, ea->thread) > ea->tindex;
}

static int sc_push(struct pr_sclock *s, uint32_t t, uint32_t tindex)
{
	if (s->nsnap == s->capsnap) {
		size_t nc = s->capsnap ? s->capsnap * 2 : 16;
		uint32_t *n = realloc(s->snap, nc * s->n * sizeof *n);
		if (!n)
			return -1;
		s->snap = n;
		s->capsnap = nc;
	}
	if (s->ncp[t] == s->capcp[t]) {
		uint32_t nc = s->capcp[t] ? s->capcp[t] * 2 : 4;
		uint32_t *a = realloc(s->cpidx[t], nc * sizeof *a);
		if (a)
			s->cpidx[t] = a;
		uint32_t *b = realloc(s->cpsnap[t], nc * sizeof *b);
		if (b)
			s->cpsnap[t] = b;
		if (!a || !b)
			return -1;
		s->capcp[t] = nc;
	}
	memcpy(s->snap + s->nsnap * s->n, s->cur + (size_t)s->m->slot[t] * s->n,
	       s->n * sizeof *s->snap);
	s->cpidx[t][s->ncp[t]] = tindex;
	s->cpsnap[t][s->ncp[t]++] = (uint32_t)s->nsnap++;
	return 0;
}

/* The source of event i's edge that no schedule can reverse, as an event
 * (*ev) or a model clock reference (*ref); false if it has none. */
static bool sc_source(const struct pr_model *m, uint32_t i, uint32_t *ev, uint32_t *ref)
{
	const struct avt_event *e = pr_ev(m, i);
	uint32_t in = m->in_sync[i];
	*ev = *ref = PR_NONE;
	if (in == PR_NONE)
		return false;
	switch (e->kind) {
	case AVT_EV_START:
	case AVT_EV_JOIN:
		*ev = in; /* the create, the exit */
		return !(in & PR_REF_SNAP);
	case AVT_EV_ACQUIRE:
		*ev = in; /* the signal that woke a condition wait */
		return (e->flags & AVT_F_COND_WAKE) && !(in & PR_REF_SNAP);
	case AVT_EV_SEM_WAIT:
	case AVT_EV_BARRIER:
		*ref = in;
		return true;
	case AVT_EV_READ:
		*ev = in; /* the locked write it saw: before it, it reads another value */
		return !(in & PR_REF_SNAP);
	default:
		return false; /* trylock edges are lock edges */
	}
}

static int sc_step(struct pr_sclock *s, uint32_t i)
{
	const struct pr_model *m = s->m;
	const struct avt_event *e = pr_ev(m, i);
	uint32_t t = e->thread, st = m->slot[t], src, ref;
	uint32_t *c = s->cur + (size_t)st * s->n;
	/* a thread that continues a chain starts from its row, not from none
	 * (its start's create brings news anyway: this is a safeguard) */
	bool changed = e->tindex == 0 && m->sbase[t] > 0;
	if (sc_source(m, i, &src, &ref))
		for (uint32_t k = 0; k < s->n; k++) {
			uint32_t v = src != PR_NONE ? sc_raw(s, src, k) : pr_ref_slot(m, ref, k);
			if (k != st && v > c[k]) {
				c[k] = v;
				changed = true;
			}
		}
	return changed ? sc_push(s, t, e->tindex) : 0;
}

void pr_sclock_release(struct pr_sclock *s)
{
	for (uint32_t u = 0; s->cpidx && u < s->nthr; u++) {
		free(s->cpidx[u]);
		free(s->cpsnap[u]);
	}
	free(s->cpidx);
	free(s->cpsnap);
	free(s->ncp);
	free(s->capcp);
	free(s->cur);
	free(s->snap);
	free(s->evrow);
}

int pr_sclock_build(struct pr_sclock *s, const struct pr_model *m)
{
	uint32_t n = m->nthreads, ns = m->nslots;
	memset(s, 0, sizeof *s);
	s->m = m;
	s->n = ns;
	s->nthr = n;
	s->cur = calloc((size_t)ns * ns, sizeof *s->cur);
	s->cpidx = calloc(n, sizeof *s->cpidx);
	s->cpsnap = calloc(n, sizeof *s->cpsnap);
	s->ncp = calloc(n, sizeof *s->ncp);
	s->capcp = calloc(n, sizeof *s->capcp);
	s->evrow = malloc((m->nev ? m->nev : 1) * sizeof *s->evrow);
	if (!s->cur || !s->cpidx || !s->cpsnap || !s->ncp || !s->capcp || !s->evrow)
		return -1;
	uint32_t i = 0;
	for (; i < m->nev; i++) {
		if (!(i & PR_STOP_EVERY) && pr_stopped())
			break; /* partial clocks: the caller stops too */
		if (sc_step(s, i) < 0)
			return -1;
		s->evrow[i] = sc_last(s, pr_ev(m, i)->thread);
		s->nrow = i + 1;
	}
	for (; i < m->nev; i++) /* stopped: every change point is before them */
		s->evrow[i] = sc_last(s, pr_ev(m, i)->thread);
	s->nrow = m->nev;
	free(s->cur); /* slots x slots, and the change points have it all */
	s->cur = NULL;
	return 0;
}

