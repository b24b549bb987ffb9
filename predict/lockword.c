/*
 * Lock words: the acquire/release pairs of a hand-written lock, from its
 * atomic accesses (lockword.h; the rule and its limits: docs/predict.md,
 * "Lock words").
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "lockword.h"
#include "trace/log.h"

/* A lock's code has a few lock and unlock sites; a word written from more
 * is not the standard pattern (and its site sets stay small). */
#define LW_SITES 8

struct site {
	uint16_t mod;
	uint64_t off;
};

struct cand {
	uint64_t addr;
	uint32_t holder;       /* thread holding it, or UINT32_MAX */
	uint32_t acq;          /* the holder's acquiring event */
	uint32_t pairs;
	bool futex;            /* futex_wait/futex_wake on it */
	bool cas_failed;       /* a locked read: a compare-and-swap that failed */
	bool broken;
	const char *why;
	uint64_t at;
	uint32_t thread, met;
	struct site acq_site[LW_SITES], rel_site[LW_SITES];
	unsigned nacq, nrel;
};

static bool site_in(const struct site *s, unsigned n, const struct avt_event *e)
{
	for (unsigned i = 0; i < n; i++)
		if (s[i].mod == e->site_mod && s[i].off == e->site_off)
			return true;
	return false;
}

/* Adds e's site to s; false when there is no room. */
static bool site_add(struct site *s, unsigned *n, const struct avt_event *e)
{
	if (site_in(s, *n, e))
		return true;
	if (*n == LW_SITES)
		return false;
	s[*n].mod = e->site_mod;
	s[(*n)++].off = e->site_off;
	return true;
}

static void breaks(struct cand *c, const struct avt_event *e, const char *why)
{
	c->broken = true;
	c->why = why;
	c->at = e->seq;
	c->thread = e->thread;
	c->met = c->holder;
}

/* The candidate's next state after access e (event i), and the kind e is
 * to get if the word is recognised (0: unchanged) in *nk. */
static void step(struct cand *c, const struct avt_event *e, uint32_t i, uint8_t *nk)
{
	bool locked = e->flags & AVT_F_ATOMIC;
	bool mine = c->holder == e->thread, free = c->holder == UINT32_MAX;
	if (e->kind == AVT_EV_READ) {
		/* another thread's look at the word while it is held saw it
		 * held: a failed compare-and-swap, or a spin's load */
		if (!free && !mine)
			*nk = AVT_EV_TRYLOCK_FAIL;
		return;
	}
	if (free) {
		if (e->kind != AVT_EV_RMW || !locked) {
			/* a store before any lock is the initialisation */
			if (c->nacq)
				breaks(c, e, "a plain store to it while it was free");
			return;
		}
		if (site_in(c->rel_site, c->nrel, e)) {
			breaks(c, e, "one instruction both takes and gives it back");
			return;
		}
		if (!site_add(c->acq_site, &c->nacq, e)) {
			breaks(c, e, "too many sites take it");
			return;
		}
		c->holder = e->thread;
		c->acq = i;
		*nk = AVT_EV_ACQUIRE;
		return;
	}
	if (!mine) {
		/* a counter's or a stack head's CAS loop: every thread writes */
		breaks(c, e, "another thread wrote it while one held it");
		return;
	}
	if (site_in(c->acq_site, c->nacq, e)) {
		/* the same compare-and-swap again: a CAS loop, not an unlock */
		breaks(c, e, "one instruction both takes and gives it back");
		return;
	}
	if (!site_add(c->rel_site, &c->nrel, e)) {
		breaks(c, e, "too many sites give it back");
		return;
	}
	c->holder = UINT32_MAX;
	c->pairs++;
	*nk = AVT_EV_RELEASE;
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct pr_lockword *)a)->addr, y = ((const struct pr_lockword *)b)->addr;
	return x < y ? -1 : x > y;
}

/* Candidates: the words of every locked read-modify-write (a lock is taken
 * by one) and of every futex call (for the note when it is no lock). */
static int collect(const struct trace *t, struct pr_hmap *h, struct cand **cv, size_t *nc)
{
	size_t cap = 0;
	for (size_t i = 0; i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		bool fx = e->kind == AVT_EV_FUTEX_WAIT || e->kind == AVT_EV_FUTEX_WAKE;
		if (!fx && !(e->kind == AVT_EV_RMW && (e->flags & AVT_F_ATOMIC)))
			continue;
		uint32_t k = pr_hmap_get(h, e->obj);
		if (k == UINT32_MAX) {
			if (*nc == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				struct cand *n = realloc(*cv, ncap * sizeof *n);
				if (!n)
					return -1;
				*cv = n;
				cap = ncap;
			}
			k = (uint32_t)*nc;
			struct cand *c = &(*cv)[(*nc)++];
			memset(c, 0, sizeof *c);
			c->addr = e->obj;
			c->holder = UINT32_MAX;
			c->at = UINT64_MAX;
			if (pr_hmap_add(h, e->obj, k) < 0)
				return -1;
		}
		(*cv)[k].futex |= fx;
	}
	return 0;
}

static int derive(const struct trace *t, const struct cand *cv, const struct pr_hmap *h,
		  const uint8_t *nk, const struct trace **derived)
{
	struct trace *d = malloc(sizeof *d);
	struct avt_event *ev = malloc((t->nev ? t->nev : 1) * sizeof *ev);
	if (!d || !ev) {
		free(d);
		free(ev);
		return -1;
	}
	*d = *t;
	memcpy(ev, t->ev, t->nev * sizeof *ev);
	for (size_t i = 0; i < t->nev; i++) {
		if (!nk[i])
			continue;
		const struct cand *c = &cv[pr_hmap_get(h, ev[i].obj)];
		if (c->broken || (!c->futex && !c->cas_failed))
			continue;
		ev[i].kind = nk[i];
		ev[i].obj2 = 0;
	}
	d->ev = ev;
	*derived = d;
	return 0;
}


int pr_lockwords_find(const struct trace *t, struct pr_lockwords *out,
		      const struct trace **derived)
{
	struct pr_hmap h;
	struct cand *cv = NULL;
	size_t nc = 0;
	uint8_t *nk = NULL;
	int rc = -1;
	memset(out, 0, sizeof *out);
	*derived = t;
	pr_hmap_init(&h);
	if (collect(t, &h, &cv, &nc) < 0)
		goto oom;
	if (!nc) {
		rc = 0;
		goto done;
	}
	nk = calloc(t->nev, 1);
	if (!nk)
		goto oom;
	for (size_t i = 0; i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if (!avt_kind_is_access(e->kind) || (e->flags & AVT_F_OWN_STACK))
			continue;
		uint32_t k = pr_hmap_get(&h, e->obj);
		if (k == UINT32_MAX)
			continue;
		/* a locked read is a compare-and-swap that failed, whatever
		 * came before: the word looks like a lock word */
		cv[k].cas_failed |= e->kind == AVT_EV_READ && (e->flags & AVT_F_ATOMIC);
		if (!cv[k].broken)
			step(&cv[k], e, (uint32_t)i, &nk[i]);
	}
	bool any = false;
	out->w = calloc(nc, sizeof *out->w);
	if (!out->w)
		goto oom;
	for (size_t k = 0; k < nc; k++) {
		struct cand *c = &cv[k];
		/* without a compare-and-swap seen to fail or a futex call, a
		 * locked read-modify-write may be an exchange or an increment
		 * (a waiter count's lock xadd, a seqlock's sequence): nothing
		 * says the word is a lock, and taking one for a lock hides its
		 * races (acc_deque's CAS on the head, never contended) */
		if (!c->futex && !c->cas_failed)
			continue;
		if (!c->broken && c->holder != UINT32_MAX) {
			/* a flag set once, or a lock its owner never gave back:
			 * no pair ends it */
			c->broken = true;
			c->why = "its last locked write is not followed by its writer's store";
			c->at = t->ev[c->acq].seq;
			c->thread = c->holder;
			c->met = UINT32_MAX;
		}
		if (!c->broken && !c->pairs)
			c->broken = true, c->why = "no locked write takes it";
		struct pr_lockword *w = &out->w[out->n++];
		w->addr = c->addr;
		w->lock = !c->broken;
		any |= w->lock;
		w->pairs = c->pairs;
		w->why = c->broken ? c->why : NULL;
		w->at = c->broken ? c->at : UINT64_MAX;
		w->thread = c->broken ? c->thread : UINT32_MAX;
		w->holder = c->broken ? c->met : UINT32_MAX;
	}
	qsort(out->w, out->n, sizeof *out->w, by_addr);
	if (any && derive(t, cv, &h, nk, derived) < 0)
		goto oom;
	rc = 0;
	goto done;
oom:
	avt_error("cannot predict: out of memory");
	pr_lockwords_release(out);
done:
	free(nk);
	free(cv);
	pr_hmap_release(&h);
	return rc;
}

void pr_lockwords_release(struct pr_lockwords *lw)
{
	free(lw->w);
	lw->w = NULL;
	lw->n = 0;
}

void pr_lockwords_trace_free(const struct trace *t, const struct trace *derived)
{
	if (!derived || derived == t)
		return;
	free(derived->ev);
	free((void *)derived);
}
