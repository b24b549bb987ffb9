/*
 * The enactment of a plan: a replay picker (docs/verify.md).
 *
 * The plan's current step names a thread and how many events it must
 * have made; that thread runs while it can.  When it cannot (it waits
 * for a lock the new program holds across the old switch, or for a
 * thread not created yet), or it spun through a time slice, another
 * thread goes first: the one whose step comes next in the plan, else the
 * lowest that can run, as a replay waits for the holder of a lock.  A
 * step is done when its thread has made its events, or has exited.  After
 * the last step every thread may run, the current one first (as "free").
 *
 * Each event is compared with the new recording's event at the same
 * thread and index: the plan was made from that recording, so a run that
 * makes another event before the plan's end took another path (a
 * deviation, reported apart).
 */
#include <stdlib.h>
#include <string.h>

#include "trace/event.h"
#include "verify.h"

static int grow(struct vf_enact *e, size_t n)
{
	if (n <= e->nthreads)
		return 0;
	uint32_t *c = realloc(e->count, n * sizeof *c);
	if (c)
		e->count = c;
	bool *g = realloc(e->gone, n * sizeof *g);
	if (g)
		e->gone = g;
	bool *s = realloc(e->spun, n * sizeof *s);
	if (s)
		e->spun = s;
	if (!c || !g || !s)
		return -1;
	for (size_t i = e->nthreads; i < n; i++) {
		e->count[i] = 0;
		e->gone[i] = e->spun[i] = false;
	}
	e->nthreads = n;
	return 0;
}

int vf_enact_init(struct vf_enact *e, const struct vf_plan *plan, const struct trace *rec)
{
	memset(e, 0, sizeof *e);
	e->plan = plan;
	e->rec = rec;
	e->last = UINT32_MAX;
	size_t n = rec ? trace_nthreads(rec) : 0;
	for (size_t i = 0; i < plan->nsteps; i++)
		if (plan->steps[i].thread + 1 > n)
			n = plan->steps[i].thread + 1;
	if (grow(e, n ? n : 1) < 0)
		return -1;
	size_t nt = rec ? trace_nthreads(rec) : 0;
	e->texp = calloc(nt ? nt : 1, sizeof *e->texp);
	e->ntexp = calloc(nt ? nt : 1, sizeof *e->ntexp);
	if (!e->texp || !e->ntexp)
		return -1;
	for (size_t i = 0; rec && i < rec->nev; i++)
		e->ntexp[rec->ev[i].thread]++;
	for (size_t k = 0; k < nt; k++) {
		e->texp[k] = calloc(e->ntexp[k] + 1, sizeof **e->texp);
		if (!e->texp[k])
			return -1;
		e->ntexp[k] = 0;
	}
	for (size_t i = 0; rec && i < rec->nev; i++) {
		const struct avt_event *ev = &rec->ev[i];
		e->texp[ev->thread][e->ntexp[ev->thread]++] = ev;
	}
	return 0;
}

void vf_enact_release(struct vf_enact *e)
{
	size_t nt = e->rec ? trace_nthreads(e->rec) : 0;
	for (size_t k = 0; e->texp && k < nt; k++)
		free(e->texp[k]);
	free(e->texp);
	free(e->ntexp);
	free(e->count);
	free(e->gone);
	free(e->spun);
	memset(e, 0, sizeof *e);
}

/* Skips the steps that are done. */
static void advance(struct vf_enact *e)
{
	const struct vf_plan *p = e->plan;
	while (e->step < p->nsteps) {
		const struct vf_step *s = &p->steps[e->step];
		bool done = s->thread < e->nthreads && (e->count[s->thread] >= s->target || e->gone[s->thread]);
		if (!done)
			return;
		if (++e->step == p->nsteps)
			e->done_at = e->seen;
	}
}

bool vf_enact_done(const struct vf_enact *e)
{
	return e->step >= e->plan->nsteps;
}

static bool same_event(const struct avt_event *a, const struct avt_event *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == AVT_EV_START || a->kind == AVT_EV_EXIT)
		return true;
	return a->site_mod == b->site_mod && a->site_off == b->site_off && a->obj == b->obj;
}

static void on_event(void *ctx, const struct avt_event *ev)
{
	struct vf_enact *e = ctx;
	e->seen++;
	if (ev->kind == AVT_EV_FATAL_SIGNAL || grow(e, ev->thread + 1) < 0)
		return;
	e->seen--;
	advance(e);
	e->seen++;
	if (!vf_enact_done(e) && !e->deviated) {
		const struct avt_event *x = NULL;
		size_t nt = e->rec ? trace_nthreads(e->rec) : 0;
		if (ev->thread < nt && ev->tindex < e->ntexp[ev->thread])
			x = e->texp[ev->thread][ev->tindex];
		if (!x || !same_event(x, ev)) {
			e->deviated = true;
			e->dev_actual = *ev;
			if (x)
				e->dev_expected = *x;
			e->dev_has_expected = x != NULL;
		}
	}
	if (ev->tindex + 1 > e->count[ev->thread])
		e->count[ev->thread] = ev->tindex + 1;
	if (ev->kind == AVT_EV_EXIT)
		e->gone[ev->thread] = true;
	e->spun[ev->thread] = false;
	advance(e);
}

static int find(const uint32_t *lids, size_t n, uint32_t lid)
{
	for (size_t i = 0; i < n; i++)
		if (lids[i] == lid)
			return (int)i;
	return -1;
}

static size_t take(struct vf_enact *e, const uint32_t *lids, size_t i)
{
	e->last = lids[i];
	if (lids[i] < e->nthreads)
		e->spun[lids[i]] = false;
	return i;
}

static bool spun(const struct vf_enact *e, uint32_t lid)
{
	return lid < e->nthreads && e->spun[lid];
}

static size_t on_pick(void *ctx, const uint32_t *lids, size_t n)
{
	struct vf_enact *e = ctx;
	advance(e);
	int i;
	if (vf_enact_done(e)) { /* free: the current thread first */
		if ((i = find(lids, n, e->last)) >= 0 && !spun(e, e->last))
			return take(e, lids, (size_t)i);
		for (size_t k = 0; k < n; k++)
			if (lids[k] > e->last || e->last == UINT32_MAX)
				return take(e, lids, k);
		return take(e, lids, 0);
	}
	uint32_t want = e->plan->steps[e->step].thread;
	if ((i = find(lids, n, want)) >= 0 && !spun(e, want))
		return take(e, lids, (size_t)i);
	if (i < 0 && want < e->nthreads && e->count[want] > 0 && !e->gone[want])
		e->held++; /* it exists and cannot run: something holds it */
	for (size_t s = e->step + 1; s < e->plan->nsteps; s++) {
		int j = find(lids, n, e->plan->steps[s].thread);
		if (j >= 0 && lids[j] != want)
			return take(e, lids, (size_t)j);
	}
	for (size_t k = 0; k < n; k++)
		if (lids[k] != want)
			return take(e, lids, k);
	return take(e, lids, 0);
}

static void on_yield(void *ctx, uint32_t lid)
{
	struct vf_enact *e = ctx;
	if (grow(e, lid + 1) == 0)
		e->spun[lid] = true;
}

void vf_enact_picker(struct vf_enact *e, struct replay_picker *pk)
{
	memset(pk, 0, sizeof *pk);
	pk->ctx = e;
	pk->event = on_event;
	pk->pick = on_pick;
	pk->yield = on_yield;
}
