/*
 * Reads-from reorderings of critical sections (order.h).
 *
 * The search: the accesses sorted by (variable, trace order); for each
 * read inside a critical section, the next few writes of the same
 * variable by other threads, under a lock the read's section holds too,
 * each thread's first only.  A write whose section cannot move before the
 * read's (the read happens before it by another path than the lock: a
 * create, a join, a condition variable) is no candidate.
 *
 * One more candidate per read that has some: the reader's section after
 * every later section, by other threads, that writes under a lock it
 * holds (variant WRITERS, a third event: the last such write).  A checker
 * that looks at several flags in one section ("both updaters done") reads
 * only the first of them when it ran first: the recording cannot show
 * which other writes it needs, and each writer alone leaves it passing.
 *
 * The schedule: the recorded order, with the reader held at the start of
 * its locked stretch until the writer has left the write's (and the last
 * section's writer has left its own); everything
 * that depends on what the reader would have done meanwhile waits too (a
 * sync edge from it, a lock it takes, a read of a value written by a
 * thread that waits), so every step replays as recorded.  Then the reader
 * runs up to its read, and `free`.
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "order.h"
#include "sort.h"
#include "trace/log.h"

/* Later writes looked at per read, in the variable's order. */
#define WALK 16
/* Candidates of the whole trace. */
#define ORDER_MAX 16
/* Writers of one read site: the k-th other thread writing after it is
 * variant k (one code path run by a pool of threads writes different
 * values: the legs of a relay), at most this many. */
#define WRITERS 3

struct acc {
	uint64_t obj;
	uint32_t x;
};

/* The last write recorded after read r, by a thread other than r's and
 * than those in thr[0..n), in a section on a lock r's section holds that
 * r does not happen before (but for that lock); PR_NONE if none.  One
 * pass over the trace after r, for reads that added a candidate only
 * (at most ORDER_MAX of them): O(ORDER_MAX n) in all. */
static uint32_t last_section_write(const struct pr_model *m, uint32_t r, const uint32_t *thr, uint32_t n)
{
	const struct avt_event *re = pr_ev(m, r);
	uint32_t rls = pr_ls_before(m, r), last = PR_NONE;
	for (uint32_t x = r + 1; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		bool other = e->thread != re->thread;
		for (uint32_t k = 0; k < n; k++)
			other &= e->thread != thr[k];
		if (!other || !avt_kind_is_access(e->kind) || !avt_kind_writes(e->kind) ||
		    !pr_ls_conflict(m, rls, pr_ls_before(m, x)))
			continue;
		uint32_t s = pr_stretch_start(m, e->thread, e->tindex);
		if (pr_stretch_end(m, x) != PR_NONE && !pr_hb_pre(m, r, m->tev[e->thread][s]))
			last = x;
	}
	return last;
}

/* The reader after every later section (the file's comment): c is the
 * read's first candidate, its writers thr[0..n). */
static int after_all(const struct pr_model *m, struct pr_cands *cs, const struct pr_cand *first,
		     const uint32_t *thr, uint32_t n, size_t *added)
{
	uint32_t x = last_section_write(m, first->ev[1], thr, n);
	if (x == PR_NONE || *added >= ORDER_MAX)
		return 0;
	struct pr_cand c = *first;
	c.nthr = 3;
	c.thr[2] = pr_ev(m, x)->thread;
	c.nev = 3;
	c.ev[2] = x;
	c.variant = WRITERS;
	int rc = pr_cands_add(cs, &c);
	if (rc < 0)
		return -1;
	*added += (size_t)rc;
	return 0;
}

/* One read r and the writes after it: the candidates. */
static int from_read(const struct pr_model *m, struct pr_cands *cs, const struct acc *a, size_t i,
		     size_t end, size_t *added)
{
	uint32_t r = a[i].x, seen[WRITERS], nseen = 0, writers[WRITERS], nwriters = 0;
	int fresh = 0; /* candidates this read added: bounds after_all's passes */
	struct pr_cand first;
	const struct avt_event *re = pr_ev(m, r);
	uint32_t rls = pr_ls_before(m, r);
	for (size_t j = i + 1; j < end && j <= i + WALK && nseen < WRITERS; j++) {
		uint32_t w = a[j].x;
		const struct avt_event *we = pr_ev(m, w);
		bool dup = false;
		if (we->thread == re->thread || !avt_kind_writes(we->kind))
			continue;
		for (uint32_t k = 0; k < nseen; k++)
			dup |= seen[k] == we->thread;
		if (dup)
			continue;
		seen[nseen++] = we->thread;
		/* a common lock: the sections are ordered by it, not by the data */
		if (!pr_ls_conflict(m, rls, pr_ls_before(m, w)))
			continue;
		uint32_t s = pr_stretch_start(m, we->thread, we->tindex);
		if (pr_stretch_end(m, w) == PR_NONE || pr_hb_pre(m, r, m->tev[we->thread][s]))
			continue;
		struct pr_cand c;
		memset(&c, 0, sizeof c);
		c.det = PR_DET_ORDER;
		c.pat = PR_PAT_ORDER;
		c.nthr = 2;
		c.thr[0] = we->thread;
		c.thr[1] = re->thread;
		c.nev = 2;
		c.ev[0] = w;
		c.ev[1] = r;
		c.variant = nseen - 1;
		c.order = r;
		c.nblame = 1;
		c.blame[0] = (struct predict_site){ re->site_mod, re->site_off };
		if (!nwriters)
			first = c;
		writers[nwriters++] = we->thread;
		int rc = pr_cands_add(cs, &c);
		if (rc < 0)
			return -1;
		fresh += rc;
		*added += (size_t)rc;
		if (*added >= ORDER_MAX)
			return 0;
	}
	/* only a read with a new candidate: at most ORDER_MAX passes in all */
	return fresh ? after_all(m, cs, &first, writers, nwriters, added) : 0;
}

int pr_order(const struct pr_model *m, struct pr_cands *cs)
{
	size_t n = 0, added = 0;
	for (uint32_t x = 0; x < m->nev; x++)
		n += avt_kind_is_access(pr_ev(m, x)->kind);
	if (!n)
		return 0;
	struct acc *a = malloc(n * sizeof *a);
	struct pr_kv *kv = malloc(n * 2 * sizeof *kv);
	if (!a || !kv) {
		free(a);
		free(kv);
		avt_error("cannot predict: out of memory");
		return -1;
	}
	/* by variable, each in trace order: a stable radix sort of the
	 * variables of accesses taken in trace order */
	n = 0;
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		if (avt_kind_is_access(e->kind))
			kv[n++] = (struct pr_kv){ e->obj, x };
	}
	pr_sort_kv(kv, kv + n, n);
	for (size_t i = 0; i < n; i++)
		a[i] = (struct acc){ kv[i].key, kv[i].val };
	free(kv);
	int rc = 0;
	for (size_t lo = 0; lo < n && rc == 0 && added < ORDER_MAX && !pr_stopped();) {
		size_t hi = lo;
		while (hi < n && a[hi].obj == a[lo].obj)
			hi++;
		for (size_t i = lo; i < hi && rc == 0 && added < ORDER_MAX; i++)
			if (avt_kind_reads(pr_ev(m, a[i].x)->kind) && pr_ls_before(m, a[i].x))
				rc = from_read(m, cs, a, i, hi, &added);
		lo = hi;
	}
	free(a);
	return rc;
}

/* ---- the schedule */

/* obj -> the last write recorded so far (its event index), or PR_NONE
 * (a pr_hmap used as a map). */
static int lastw_set(struct pr_hmap *h, uint64_t key, uint32_t x)
{
	return pr_hmap_set(h, key, x);
}

static uint32_t lastw_get(const struct pr_hmap *h, uint64_t key)
{
	return pr_hmap_get(h, key); /* UINT32_MAX: PR_NONE */
}

struct osim {
	const struct pr_model *m;
	uint32_t *made;     /* events run per thread (a prefix of each) */
	uint32_t *owner, *readers;
	struct pr_hmap lw;
	struct schedule *s;
	uint64_t *budget;
	uint32_t tr, sr;    /* the reader, and where it is held */
};

static bool ran(const struct osim *o, uint32_t x)
{
	const struct avt_event *e = pr_ev(o->m, x);
	return o->made[e->thread] > e->tindex;
}

/* Event x may run now: what it joined ran, its lock is free (a failed
 * trylock: held), and a read sees the write it saw when recorded (rf:
 * false for the read whose writer the schedule changes). */
static bool can_run(const struct osim *o, uint32_t x, bool rf)
{
	const struct pr_model *m = o->m;
	const struct avt_event *e = pr_ev(m, x);
	if (m->in_sync[x] != PR_NONE)
		for (uint32_t v = 0; v < m->nthreads; v++)
			if (pr_ref_at(m, m->in_sync[x], v) > o->made[v])
				return false;
	uint32_t l = m->lock[x];
	if (pr_is_acquire(e)) {
		if (o->owner[l] != PR_NONE && o->owner[l] != e->thread)
			return false;
		if (pr_acq_mode(e) == PR_EXCL && o->readers[l])
			return false;
	} else if (e->kind == AVT_EV_TRYLOCK_FAIL) {
		if (o->owner[l] == PR_NONE || o->owner[l] == e->thread)
			return false;
	}
	if (rf && avt_kind_reads(e->kind)) {
		/* a write of the held reader's section is what the schedule
		 * moves: a read of it now sees what was there before */
		uint32_t w = lastw_get(&o->lw, e->obj);
		const struct avt_event *we = w != PR_NONE ? pr_ev(m, w) : NULL;
		bool moved = we && we->thread == o->tr && we->tindex >= o->sr;
		if (we && w != x && !moved && !ran(o, w))
			return false;
	}
	return true;
}

static int run(struct osim *o, uint32_t x)
{
	const struct pr_model *m = o->m;
	const struct avt_event *e = pr_ev(m, x);
	if (!*o->budget || (!(*o->budget & PR_STOP_EVERY) && pr_stopped()))
		return 0;
	--*o->budget;
	if (pr_is_acquire(e)) {
		if (pr_acq_mode(e) == PR_EXCL)
			o->owner[m->lock[x]] = e->thread;
		else
			o->readers[m->lock[x]]++;
	} else if (pr_is_release(e)) {
		uint32_t l = m->lock[x];
		if (o->owner[l] == e->thread)
			o->owner[l] = PR_NONE;
		else if (o->readers[l])
			o->readers[l]--;
	}
	o->made[e->thread]++;
	return schedule_append_run(o->s, e->thread, 1) < 0 ? -1 : 1;
}

/* The event that ends x's locked stretch. */
static uint32_t section_end(const struct pr_model *m, uint32_t x)
{
	return m->tev[pr_ev(m, x)->thread][pr_stretch_end(m, x)];
}

/* 1 with the schedule, 0 if it cannot be built, -1 after avt_error().
 * x: PR_NONE, or a write whose section must end before the reader too. */
static int build(struct osim *o, uint32_t w, uint32_t r, uint32_t x3)
{
	const struct pr_model *m = o->m;
	const struct avt_event *we = pr_ev(m, w), *re = pr_ev(m, r);
	uint32_t tw = we->thread, tr = re->thread, t3 = x3 == PR_NONE ? tw : pr_ev(m, x3)->thread;
	uint32_t sr = pr_stretch_start(m, tr, re->tindex);
	o->tr = tr;
	o->sr = sr;
	uint32_t wlast = section_end(m, w), last = wlast, last3 = wlast;
	if (x3 != PR_NONE && section_end(m, x3) > last)
		last = last3 = section_end(m, x3);
	bool *held = calloc(m->nthreads, sizeof *held); /* waits until the end */
	if (!held)
		return -1;
	int rc = 1;
	for (uint32_t x = 0; x <= last && rc == 1; x++) {
		const struct avt_event *e = pr_ev(m, x);
		uint32_t u = e->thread;
		/* the recorded writer of every later read, whether it runs or not */
		bool ok = !held[u] && !(u == tr && e->tindex >= sr) && can_run(o, x, true);
		if (ok)
			rc = run(o, x);
		else
			held[u] = true;
		if (rc == 1 && avt_kind_writes(e->kind) && lastw_set(&o->lw, e->obj, x) < 0)
			rc = -1;
		if (rc == 1 && ((u == tw && x <= wlast) || (u == t3 && x <= last3)) && held[u])
			rc = 0; /* a writer cannot get there */
	}
	/* the reader, up to its read */
	for (uint32_t k = sr; rc == 1 && k <= re->tindex; k++) {
		uint32_t x = m->tev[tr][k];
		if (!can_run(o, x, x != r))
			rc = 0;
		else
			rc = run(o, x);
	}
	free(held);
	if (rc < 0)
		avt_error("cannot predict: out of memory");
	return rc;
}

int pr_order_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
		   struct pr_plan *plan, struct schedule **out)
{
	uint32_t w = c->ev[0], r = c->ev[1], nl = m->nobjs ? m->nobjs : 1;
	const struct avt_event *re = pr_ev(m, r);
	struct osim o = { .m = m, .budget = budget };
	int rc = -1;
	*out = NULL;
	memset(plan, 0, sizeof *plan);
	plan->nthr = c->nthr;
	memcpy(plan->thr, c->thr, c->nthr * sizeof *c->thr);
	plan->p0 = m->tev[re->thread][pr_stretch_start(m, re->thread, re->tindex)];
	plan->final = -1;
	o.made = calloc(m->nthreads, sizeof *o.made);
	o.owner = malloc(nl * sizeof *o.owner);
	o.readers = calloc(nl, sizeof *o.readers);
	o.s = schedule_new();
	if (!o.made || !o.owner || !o.readers || !o.s) {
		avt_error("cannot predict: out of memory");
		goto out;
	}
	for (uint32_t l = 0; l < nl; l++)
		o.owner[l] = PR_NONE;
	rc = build(&o, w, r, c->nev > 2 ? c->ev[2] : PR_NONE);
	if (rc == 1) {
		o.s->has_free = 1;
		*out = o.s;
		o.s = NULL;
	}
out:
	schedule_free(o.s);
	free(o.made);
	free(o.owner);
	free(o.readers);
	pr_hmap_release(&o.lw);
	return rc;
}
