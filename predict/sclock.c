/*
 * Clocks of thread communication only (sclock.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sclock.h"

/* The row of the last change point of e's thread at or before e, or
 * NULL if its clock never changed. */
static const uint32_t *sc_row(const struct pr_sclock *s, uint32_t e)
{
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

uint32_t pr_sclock_at(const struct pr_sclock *s, uint32_t e, uint32_t u)
{
	const struct avt_event *ev = pr_ev(s->m, e);
	if (ev->thread == u)
		return ev->tindex + 1;
	const uint32_t *r = sc_row(s, e);
	return r ? r[u] : 0;
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
	memcpy(s->snap + s->nsnap * s->n, s->cur + (size_t)t * s->n, s->n * sizeof *s->snap);
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
	default:
		return false; /* trylock edges are lock edges */
	}
}

static int sc_step(struct pr_sclock *s, uint32_t i)
{
	const struct pr_model *m = s->m;
	uint32_t t = pr_ev(m, i)->thread, src, ref;
	uint32_t *c = s->cur + (size_t)t * s->n;
	bool changed = false;
	if (!sc_source(m, i, &src, &ref))
		return 0;
	for (uint32_t u = 0; u < s->n; u++) {
		uint32_t v = src != PR_NONE ? pr_sclock_at(s, src, u) : pr_ref_at(m, ref, u);
		if (u != t && v > c[u]) {
			c[u] = v;
			changed = true;
		}
	}
	return changed ? sc_push(s, t, pr_ev(m, i)->tindex) : 0;
}

void pr_sclock_release(struct pr_sclock *s)
{
	for (uint32_t u = 0; s->cpidx && u < s->n; u++) {
		free(s->cpidx[u]);
		free(s->cpsnap[u]);
	}
	free(s->cpidx);
	free(s->cpsnap);
	free(s->ncp);
	free(s->capcp);
	free(s->cur);
	free(s->snap);
}

int pr_sclock_build(struct pr_sclock *s, const struct pr_model *m)
{
	uint32_t n = m->nthreads;
	memset(s, 0, sizeof *s);
	s->m = m;
	s->n = n;
	s->cur = calloc((size_t)n * n, sizeof *s->cur);
	s->cpidx = calloc(n, sizeof *s->cpidx);
	s->cpsnap = calloc(n, sizeof *s->cpsnap);
	s->ncp = calloc(n, sizeof *s->ncp);
	s->capcp = calloc(n, sizeof *s->capcp);
	if (!s->cur || !s->cpidx || !s->cpsnap || !s->ncp || !s->capcp)
		return -1;
	for (uint32_t i = 0; i < m->nev; i++) {
		if (!(i & PR_STOP_EVERY) && pr_stopped())
			break; /* partial clocks: the caller stops too */
		if (sc_step(s, i) < 0)
			return -1;
	}
	free(s->cur); /* n x n, and the change points have it all */
	s->cur = NULL;
	return 0;
}

