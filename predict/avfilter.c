/*
 * AVFilter: predictions whose schedules break a critical read-after-write
 * relation (avfilter.h, docs/avfilter.md).
 *
 * Once per call: each access's variable (its exact address, as PENELOPE
 * has it) and each read's recorded writer.  Then per prediction one walk
 * over the events its schedule forces, keeping the last write to every
 * variable; the first critical read whose writer differs marks it.  The
 * cost is the trace once plus the forced events of every schedule.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avfilter.h"
#include "hmap.h"
#include "trace/log.h"

bool pr_br_unknown(void *ctx, const struct pr_model *m, uint32_t e)
{
	(void)ctx;
	(void)m;
	(void)e;
	return false;
}

/* A read site's answer (pr_steers_fn), cached by (module, offset, address). */
struct usite {
	uint16_t mod, watched;
	uint64_t off, addr;
	bool steers;
	unsigned nstore;
	uint64_t store[PR_STEERS_STORES];
};

enum { VS_UNSEEN, VS_VISITING, VS_DATA, VS_STEERS };

/* How deep the closure over variables may go before it says "steers". */
#define STEERS_DEPTH 64

struct avf {
	const struct pr_model *m;
	pr_br_fn br;
	void *ctx;
	pr_steers_fn steers;
	void *steers_ctx;
	struct pr_hmap vars;  /* address -> variable */
	uint32_t *roff, *rlist; /* reads of variable v: rlist[roff[v] .. roff[v + 1]) */
	uint8_t *vstate;      /* VS_* per variable */
	uint32_t *vdata, nvdata; /* variables set VS_DATA by the question in progress */
	struct pr_hmap sites; /* hash of (module, offset, address) -> usite */
	struct usite *usite;
	uint32_t nusite, capusite;
	uint32_t *var;    /* per event: variable id of an access, else PR_NONE */
	uint32_t *wrec;   /* per event: a read's recorded writer, else PR_NONE */
	uint32_t nvar;
	uint32_t *lastw;  /* per variable: last write in the schedule so far */
	uint32_t *gen;    /* per variable: lastw is valid when gen == cur */
	uint32_t cur;
	uint32_t *pos;    /* per thread: events the walk has run */
	uint32_t *first;  /* per thread: tindex of its first pattern event (walk_prefix) */
	uint32_t *nforced; /* per thread: its forced events (walk_prefix), else 0 */
	uint32_t *chvar;  /* per thread: the variable its last load changed, else PR_NONE */
	uint8_t *wtaint;  /* per variable: lastw stores a value its writer computed
	                     from a changed load of the variable (walk_prefix) */
	/* the values writes wrote, as far as the recording tells (a read with
	 * AVT_F_VALUE that took its value from the write); NULL when no read
	 * has its value.  wsz: KNOWN | the size of the read that told, 0:
	 * unknown */
	uint64_t *wv, *iv;  /* per event (a write's); per variable (its initial value) */
	uint32_t *wsz, *isz;
};

/* The pattern of one prediction: a_i, a_k of T1, a_j of T2 (indices). */
struct pat {
	uint32_t ai, aj, ak, t1, t2;
	int situation;    /* 1: a_j recorded after a_k; 2: before a_i */
};

/* A critical read found in a schedule. */
struct hit {
	int kase;         /* 1..5: the lemmas' cases; 6: before the pattern (walk_prefix) */
	uint32_t r, wrec, wsch;
	uint64_t vnew;    /* case 6: the value r would load */
	bool taint;       /* case 6: wsch stores another value than recorded */
};

static bool is_access(const struct avt_event *e)
{
	return e->kind == AVT_EV_READ || avt_kind_writes(e->kind);
}

#define KNOWN 0x10000u

/* A read's value, as its writer's (or the variable's initial value)
 * when it is the first read with a value to tell it. */
static int values_init(struct avf *a, const struct pr_model *m)
{
	bool any = false;
	for (uint32_t x = 0; x < m->nev && !any; x++)
		any = a->var[x] != PR_NONE && (pr_ev(m, x)->flags & AVT_F_VALUE);
	if (!any)
		return 0;
	a->wv = malloc((m->nev ? m->nev : 1) * sizeof *a->wv);
	a->wsz = calloc(m->nev ? m->nev : 1, sizeof *a->wsz);
	a->iv = malloc((a->nvar ? a->nvar : 1) * sizeof *a->iv);
	a->isz = calloc(a->nvar ? a->nvar : 1, sizeof *a->isz);
	if (!a->wv || !a->wsz || !a->iv || !a->isz)
		return -1;
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		if (a->var[x] == PR_NONE || !avt_kind_reads(e->kind) || !(e->flags & AVT_F_VALUE))
			continue;
		uint32_t w = a->wrec[x];
		uint32_t *sz = w == PR_NONE ? &a->isz[a->var[x]] : &a->wsz[w];
		if (*sz)
			continue;
		*sz = KNOWN | e->size;
		*(w == PR_NONE ? &a->iv[a->var[x]] : &a->wv[w]) = e->obj2;
	}
	return 0;
}

/* What ws wrote (PR_NONE: x's variable's initial value), when known. */
static uint64_t written(const struct avf *a, uint32_t x, uint32_t ws)
{
	return ws == PR_NONE ? a->iv[a->var[x]] : a->wv[ws];
}

/* Does the schedule's writer ws (PR_NONE: the initial value) give read x
 * another value than it loaded in the recording?  false when either value
 * is unknown: the read had no value recorded (an annotation's, a
 * watchpoint's, a vector's) or nothing tells what ws wrote. */
static bool value_changes(const struct avf *a, uint32_t x, uint32_t ws)
{
	const struct avt_event *e = pr_ev(a->m, x);
	if (!a->wv || !(e->flags & AVT_F_VALUE))
		return false;
	uint32_t sz = ws == PR_NONE ? a->isz[a->var[x]] : a->wsz[ws];
	return sz == (KNOWN | e->size) && written(a, x, ws) != e->obj2;
}

static int avf_init(struct avf *a, const struct pr_model *m)
{
	uint32_t *last = NULL;
	size_t cap = 0;
	int rc = -1;
	a->var = malloc((m->nev ? m->nev : 1) * sizeof *a->var);
	a->wrec = malloc((m->nev ? m->nev : 1) * sizeof *a->wrec);
	a->pos = calloc(m->nthreads ? m->nthreads : 1, sizeof *a->pos);
	a->first = malloc((m->nthreads ? m->nthreads : 1) * sizeof *a->first);
	a->nforced = calloc(m->nthreads ? m->nthreads : 1, sizeof *a->nforced);
	a->chvar = malloc((m->nthreads ? m->nthreads : 1) * sizeof *a->chvar);
	if (!a->var || !a->wrec || !a->pos || !a->first || !a->nforced || !a->chvar)
		goto out;
	memset(a->chvar, 0xff, (m->nthreads ? m->nthreads : 1) * sizeof *a->chvar);
	memset(a->first, 0xff, (m->nthreads ? m->nthreads : 1) * sizeof *a->first);
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = pr_ev(m, x);
		a->var[x] = a->wrec[x] = PR_NONE;
		if (!is_access(e))
			continue;
		uint32_t v = pr_hmap_get(&a->vars, e->obj);
		if (v == UINT32_MAX) {
			if (a->nvar == cap) {
				size_t nc = cap ? cap * 2 : 64;
				uint32_t *n = realloc(last, nc * sizeof *n);
				if (!n)
					goto out;
				last = n;
				cap = nc;
			}
			v = a->nvar;
			if (pr_hmap_add(&a->vars, e->obj, v) < 0)
				goto out;
			last[a->nvar++] = PR_NONE;
		}
		a->var[x] = v;
		if (avt_kind_reads(e->kind)) /* an rmw's too (walk_prefix) */
			a->wrec[x] = last[v];
		if (avt_kind_writes(e->kind))
			last[v] = x;
	}
	a->lastw = last;
	last = NULL;
	if (values_init(a, m) < 0)
		goto out;
	a->gen = calloc(a->nvar ? a->nvar : 1, sizeof *a->gen);
	a->wtaint = calloc(a->nvar ? a->nvar : 1, 1);
	if (!a->gen || !a->wtaint)
		goto out;
	if (a->steers) { /* each variable's reads, for the closure */
		a->roff = calloc((size_t)a->nvar + 1, sizeof *a->roff);
		a->vstate = calloc(a->nvar ? a->nvar : 1, 1);
		a->vdata = malloc((a->nvar ? a->nvar : 1) * sizeof *a->vdata);
		if (!a->roff || !a->vstate || !a->vdata)
			goto out;
		uint32_t nread = 0;
		for (uint32_t x = 0; x < m->nev; x++)
			if (a->var[x] != PR_NONE && pr_ev(m, x)->kind == AVT_EV_READ) {
				a->roff[a->var[x] + 1]++;
				nread++;
			}
		for (uint32_t v = 0; v < a->nvar; v++)
			a->roff[v + 1] += a->roff[v];
		a->rlist = malloc((nread ? nread : 1) * sizeof *a->rlist);
		uint32_t *fill = malloc(((size_t)a->nvar + 1) * sizeof *fill);
		if (!a->rlist || !fill) {
			free(fill);
			goto out;
		}
		memcpy(fill, a->roff, ((size_t)a->nvar + 1) * sizeof *fill);
		for (uint32_t x = 0; x < m->nev; x++)
			if (a->var[x] != PR_NONE && pr_ev(m, x)->kind == AVT_EV_READ)
				a->rlist[fill[a->var[x]]++] = x;
		free(fill);
	}
	rc = 0;
out:
	free(last);
	return rc;
}

static void avf_release(struct avf *a)
{
	pr_hmap_release(&a->vars);
	pr_hmap_release(&a->sites);
	free(a->usite);
	free(a->roff);
	free(a->rlist);
	free(a->vstate);
	free(a->vdata);
	free(a->var);
	free(a->wrec);
	free(a->lastw);
	free(a->gen);
	free(a->pos);
	free(a->first);
	free(a->nforced);
	free(a->chvar);
	free(a->wtaint);
	free(a->wv);
	free(a->wsz);
	free(a->iv);
	free(a->isz);
}

/* The event of trace seq s, or PR_NONE. */
static uint32_t ev_of_seq(const struct pr_model *m, uint64_t s)
{
	if (s < m->nev && pr_ev(m, (uint32_t)s)->seq == s)
		return (uint32_t)s;
	uint32_t lo = 0, hi = m->nev;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (pr_ev(m, mid)->seq < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nev && pr_ev(m, lo)->seq == s ? lo : PR_NONE;
}

/* The three-event pattern of p, or false when AVFilter does not apply:
 * a deadlock cycle, a pattern observed inside its window, events not in
 * the trace. */
static bool pattern_of(const struct pr_model *m, const struct prediction *p, struct pat *q)
{
	if (!strcmp(p->detector, "deadlock") || p->nevents != 3)
		return false;
	q->ai = ev_of_seq(m, p->events[0]);
	q->aj = ev_of_seq(m, p->events[1]);
	q->ak = ev_of_seq(m, p->events[2]);
	if (q->ai == PR_NONE || q->aj == PR_NONE || q->ak == PR_NONE)
		return false;
	q->t1 = pr_ev(m, q->ai)->thread;
	q->t2 = pr_ev(m, q->aj)->thread;
	if (q->t1 == q->t2 || pr_ev(m, q->ak)->thread != q->t1 || q->ai >= q->ak)
		return false;
	if (q->aj > q->ak)
		q->situation = 1;
	else if (q->aj < q->ai)
		q->situation = 2;
	else
		return false;
	return true;
}

static uint32_t tix(const struct pr_model *m, uint32_t e)
{
	return pr_ev(m, e)->tindex;
}

static uint32_t thr(const struct pr_model *m, uint32_t e)
{
	return pr_ev(m, e)->thread;
}

/* May a branch run in T1 after its read r and up to a_k? */
static bool branch_before_ak(const struct avf *a, const struct pat *q, uint32_t r)
{
	const struct pr_model *m = a->m;
	for (uint32_t i = tix(m, r) + 1; i <= tix(m, q->ak); i++)
		if (a->br(a->ctx, m, m->tev[q->t1][i]))
			return true;
	return false;
}

/* The answer for read r's site, asked once per (site, address); NULL if
 * out of memory. */
static const struct usite *site_use(struct avf *a, uint32_t r)
{
	const struct avt_event *e = pr_ev(a->m, r);
	uint16_t watched = (e->flags & AVT_F_WATCHED) != 0;
	uint64_t h = pr_hash64(e->site_off ^
			       pr_hash64(e->obj ^ ((uint64_t)e->site_mod << 48) ^ watched));
	size_t pos = 0;
	uint32_t i;
	while (pr_hmap_next(&a->sites, h, &pos, &i))
		if (a->usite[i].mod == e->site_mod && a->usite[i].off == e->site_off &&
		    a->usite[i].addr == e->obj && a->usite[i].watched == watched)
			return &a->usite[i];
	if (a->nusite == a->capusite) {
		uint32_t nc = a->capusite ? a->capusite * 2 : 64;
		struct usite *n = realloc(a->usite, nc * sizeof *n);
		if (!n)
			return NULL;
		a->usite = n;
		a->capusite = nc;
	}
	if (pr_hmap_add(&a->sites, h, a->nusite) < 0)
		return NULL;
	struct usite *u = &a->usite[a->nusite++];
	memset(u, 0, sizeof *u);
	u->mod = e->site_mod;
	u->off = e->site_off;
	u->addr = e->obj;
	u->watched = watched;
	u->steers = a->steers(a->steers_ctx, e->site_mod, e->site_off, e->obj, watched, u->store,
			      PR_STEERS_STORES, &u->nstore);
	if (u->nstore > PR_STEERS_STORES)
		u->steers = true;
	return u;
}

static bool var_steers(struct avf *a, uint32_t v, unsigned depth);

/* May read r's value steer a thread: itself, or through the globals it is
 * stored to and their readers? */
static bool read_steers(struct avf *a, uint32_t r, unsigned depth)
{
	const struct usite *u = site_use(a, r);
	if (!u || u->steers || depth > STEERS_DEPTH)
		return true;
	for (unsigned i = 0; i < u->nstore; i++) {
		uint32_t v = pr_hmap_get(&a->vars, u->store[i]);
		if (v == UINT32_MAX || var_steers(a, v, depth + 1))
			return true; /* no recorded read: its readers are unknown */
	}
	return false;
}

/* May a value stored to variable v steer a thread through one of v's
 * recorded reads?  A variable in progress counts as data (the answer is
 * the least fixpoint); what one question marks data is undone if its
 * answer is "steers". */
static bool var_steers(struct avf *a, uint32_t v, unsigned depth)
{
	if (a->vstate[v] != VS_UNSEEN)
		return a->vstate[v] == VS_STEERS;
	a->vstate[v] = VS_VISITING;
	for (uint32_t k = a->roff[v]; k < a->roff[v + 1]; k++)
		if (read_steers(a, a->rlist[k], depth)) {
			a->vstate[v] = VS_STEERS;
			return true;
		}
	a->vstate[v] = VS_DATA;
	a->vdata[a->nvdata++] = v;
	return false;
}

/* The top-level question for a read whose writer changes. */
static bool steers(struct avf *a, uint32_t r)
{
	if (!a->steers)
		return true;
	a->nvdata = 0;
	bool s = read_steers(a, r, 0);
	if (s) /* "data" there assumed that variables in progress were data */
		for (uint32_t i = 0; i < a->nvdata; i++)
			a->vstate[a->vdata[i]] = VS_UNSEEN;
	return s;
}

/* The case read r (not a pattern event, of T1 or T2) breaks, given its
 * recorded writer wr and the writer ws the schedule gives it (wr != ws),
 * or 0 if the change is not critical. */
static int classify(const struct avf *a, const struct pat *q, uint32_t r, uint32_t wr,
		    uint32_t ws)
{
	const struct pr_model *m = a->m;
	uint32_t u = thr(m, r);
	if (u == q->t2) {
		if (tix(m, r) > tix(m, q->aj) || q->situation != 1 || wr == PR_NONE ||
		    thr(m, wr) != q->t1)
			return 0;
		if (r > q->ak && wr > q->ak)
			return 1;
		if (r > q->ai && r < q->ak && wr > q->ai)
			return 2;
		return 0;
	}
	if (tix(m, r) < tix(m, q->ai)) {
		if (q->situation == 2 && r > q->aj && wr != PR_NONE && thr(m, wr) == q->t2 &&
		    wr >= q->aj)
			return 4;
		return 0;
	}
	if (tix(m, r) > tix(m, q->ak))
		return 0;
	/* T1 inside its window */
	if (q->situation == 1 && ws != PR_NONE && thr(m, ws) == q->t2 && ws > r &&
	    tix(m, ws) < tix(m, q->aj) && branch_before_ak(a, q, r))
		return 3;
	if (q->situation == 2 && wr != PR_NONE && thr(m, wr) == q->t2 &&
	    tix(m, wr) > tix(m, q->aj) && branch_before_ak(a, q, r))
		return 5;
	return 0;
}

/* A new walk over a schedule: every last-write stamp stale, no thread's
 * event run yet. */
static void restart(struct avf *a)
{
	if (++a->cur == 0) { /* wrapped: every stamp is stale again */
		memset(a->gen, 0, (a->nvar ? a->nvar : 1) * sizeof *a->gen);
		a->cur = 1;
	}
	memset(a->pos, 0, a->m->nthreads * sizeof *a->pos);
}

/* Walks the schedule's forced events; *h is the first critical read, if
 * any (h->kase 0 otherwise).  -1 if the schedule does not fit the model. */
static int walk(struct avf *a, const struct pat *q, const struct schedule *s, struct hit *h)
{
	const struct pr_model *m = a->m;
	h->kase = 0;
	restart(a);
	for (size_t i = 0; i < s->nsteps; i++) {
		uint32_t u = s->steps[i].thread;
		if (u >= m->nthreads || s->steps[i].count > m->tnev[u] - a->pos[u])
			return -1;
		for (uint32_t k = 0; k < s->steps[i].count; k++) {
			uint32_t x = m->tev[u][a->pos[u]++], v = a->var[x];
			if (v == PR_NONE)
				continue;
			if (avt_kind_writes(pr_ev(m, x)->kind)) {
				a->lastw[v] = x;
				a->gen[v] = a->cur;
				continue;
			}
			uint32_t ws = a->gen[v] == a->cur ? a->lastw[v] : PR_NONE;
			if (ws == a->wrec[x] || (u != q->t1 && u != q->t2) || x == q->ai ||
			    x == q->aj || x == q->ak)
				continue;
			int c = classify(a, q, x, a->wrec[x], ws);
			if (c && steers(a, x)) {
				*h = (struct hit){ c, x, a->wrec[x], ws, 0, false };
				return 0;
			}
		}
	}
	return 0;
}

/* Does read x's thread have a forced event after it and before tindex
 * end that another value could change, other than a store back to the
 * same variable (c = x; x = c + 1)?  Where none does, a new value can only
 * take the thread another way after its forced part, or change whether
 * it reaches the pattern event right after (the violation's own
 * question): no divergence replay could meet before the pattern. */
static const struct usite *site_use(struct avf *a, uint32_t r);

static bool event_follows(struct avf *a, uint32_t x, uint32_t end, bool of_pattern)
{
	const struct pr_model *m = a->m;
	uint32_t u = thr(m, x);
	for (uint32_t i = tix(m, x) + 1; i < end && i < m->tnev[u]; i++) {
		uint32_t y = m->tev[u][i];
		if (!(a->var[y] == a->var[x] && pr_ev(m, y)->kind == AVT_EV_WRITE))
			return true;
	}
	/* the pattern's store to the variable just read: whether it runs at
	 * all is the new value's doing if the value decides a branch of its
	 * own function (`if (state == 1) state = 2`), not when it only feeds
	 * the store (`x = c + 1`): the site's own answer, not the closure's
	 * over the variable's other readers */
	if (!of_pattern || end >= m->tnev[u] || tix(m, x) + 1 != end ||
	    a->var[m->tev[u][end]] != a->var[x] || !avt_kind_writes(pr_ev(m, m->tev[u][end])->kind))
		return false;
	const struct usite *s = a->steers ? site_use(a, x) : NULL;
	return !a->steers || !s || s->steers;
}

static bool in(const uint32_t *ev, unsigned n, uint32_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (ev[i] == x)
			return true;
	return false;
}

/*
 * Walks the forced events of p's schedule for a read that runs before
 * every pattern event of its thread (or in a thread with none) and loads
 * another value than in the recording (both values known: value_changes),
 * a value that may steer: the thread may then never reach the pattern (a
 * barrier's count read in a critical section moved ahead of the one that
 * wrote it takes the other branch).  *h is the first such read (h->kase
 * 6), if any.  The pattern's own reads, a read of a pattern thread that
 * loses a pattern event's write (a lost update's second read:
 * the violation itself), and what a thread reads after its first pattern
 * event (the violation's effect, judged by walk()) never count; a
 * bystander's read (a thread with no pattern event) counts whichever
 * write it loses.  Nor does a read with no event of its thread after it
 * (event_follows) before the pattern or the end of its forced part.  -1
 * if the schedule does not fit the model.
 */
static int walk_prefix(struct avf *a, const struct prediction *p, const struct schedule *s,
		       struct hit *h)
{
	const struct pr_model *m = a->m;
	uint32_t ev[8];
	unsigned nev = 0;
	int rc = 0;
	h->kase = 0;
	for (unsigned i = 0; i < p->nevents && i < 8; i++) {
		uint32_t x = ev_of_seq(m, p->events[i]);
		if (x == PR_NONE)
			continue;
		ev[nev++] = x;
		if (tix(m, x) < a->first[thr(m, x)])
			a->first[thr(m, x)] = tix(m, x);
	}
	restart(a);
	/* first[u] for a bystander: where its forced events end */
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].thread < m->nthreads)
			a->pos[s->steps[i].thread] += s->steps[i].count;
	for (size_t i = 0; i < s->nsteps; i++) {
		uint32_t u = s->steps[i].thread;
		if (u < m->nthreads && a->first[u] == UINT32_MAX && a->pos[u])
			a->nforced[u] = a->pos[u];
	}
	memset(a->pos, 0, m->nthreads * sizeof *a->pos);
	for (size_t i = 0; i < s->nsteps && !h->kase; i++) {
		uint32_t u = s->steps[i].thread;
		if (u >= m->nthreads || s->steps[i].count > m->tnev[u] - a->pos[u]) {
			rc = -1;
			break;
		}
		for (uint32_t k = 0; k < s->steps[i].count; k++) {
			uint32_t x = m->tev[u][a->pos[u]++], v = a->var[x];
			if (v == PR_NONE)
				continue;
			const struct avt_event *e = pr_ev(m, x);
			bool valid = a->gen[v] == a->cur;
			uint32_t ws = valid ? a->lastw[v] : PR_NONE;
			if (avt_kind_reads(e->kind)) {
				/* its writer wrote another value (its own load of
				 * the variable before changed), or another writer */
				bool taint = valid && a->wtaint[v];
				bool changed = taint || (ws != a->wrec[x] && value_changes(a, x, ws));
				a->chvar[u] = changed ? v : PR_NONE;
				/* a thread of the pattern may lose a write of it (a
				 * lost update's other read); a bystander not */
				bool of_pattern = a->first[u] != UINT32_MAX;
				uint32_t end = of_pattern ? a->first[u] : a->nforced[u];
				if (changed && tix(m, x) < end &&
				    !(of_pattern && ws != a->wrec[x] && in(ev, nev, a->wrec[x])) &&
				    event_follows(a, x, end, of_pattern) && steers(a, x)) {
					*h = (struct hit){ 6, x, a->wrec[x], ws, written(a, x, ws), taint };
					break;
				}
			}
			if (avt_kind_writes(e->kind)) {
				a->lastw[v] = x;
				a->gen[v] = a->cur;
				a->wtaint[v] = a->chvar[u] == v; /* x = f(x) after a changed load */
			}
		}
	}
	for (unsigned i = 0; i < nev; i++)
		a->first[thr(m, ev[i])] = UINT32_MAX;
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].thread < m->nthreads) {
			a->nforced[s->steps[i].thread] = 0;
			a->chvar[s->steps[i].thread] = PR_NONE;
		}
	return rc;
}

static const char *site(const struct trace *t, const struct avt_event *e, char *buf, size_t len)
{
	const struct avt_module *mo = e->site_mod == AVT_MOD_NONE ? NULL :
		trace_module(t, e->site_mod);
	const char *base = mo && mo->path ? strrchr(mo->path, '/') : NULL;
	if (e->site_mod == AVT_MOD_NONE)
		snprintf(buf, len, "0x%" PRIx64, e->site_off);
	else if (!mo || !mo->path)
		snprintf(buf, len, "module%u+0x%" PRIx64, e->site_mod, e->site_off);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : mo->path, e->site_off);
	return buf;
}

/* "seq N (Tk)" or "the initial value". */
static const char *writer(const struct pr_model *m, uint32_t w, char *buf, size_t len)
{
	if (w == PR_NONE)
		snprintf(buf, len, "the initial value");
	else
		snprintf(buf, len, "seq %" PRIu64 " (T%u)", pr_ev(m, w)->seq, thr(m, w));
	return buf;
}

static char *why(const struct pr_model *m, const struct hit *h)
{
	static const char *const lemma[] = { "", "Lemma 1 (1)", "Lemma 1 (2)", "Lemma 1 (3)",
					     "Lemma 2 (1)", "Lemma 2 (2)", "" };
	static const char *const how[] = {
		"",
		"the culprit's read runs before the window's second access",
		"the culprit's read runs before the window thread's writes",
		"the culprit's earlier write runs before a window read that may steer a branch",
		"the window thread's read runs before the culprit's access",
		"the culprit's later write no longer precedes a window read that may steer a branch",
		"",
	};
	const struct avt_event *r = pr_ev(m, h->r);
	char sb[160], wr[64], ws[64];
	char *s = NULL;
	writer(m, h->wrec, wr, sizeof wr);
	writer(m, h->wsch, ws, sizeof ws);
	site(m->t, r, sb, sizeof sb);
	if (h->kase == 6 && h->taint) {
		int k = asprintf(&s, "T%u's %s of 0x%" PRIx64 " at seq %" PRIu64
				 " (%s), before the violation, would load another value than 0x%" PRIx64
				 ": its writer %s loaded another value of it first",
				 r->thread, avt_kind_name(r->kind), r->obj, r->seq, sb, r->obj2, ws);
		return k < 0 ? NULL : s;
	}
	if (h->kase == 6) {
		int k = asprintf(&s, "T%u's %s of 0x%" PRIx64 " at seq %" PRIu64
				 " (%s), before the violation, would load 0x%" PRIx64 " (%s) in place of 0x%" PRIx64 " (%s)",
				 r->thread, avt_kind_name(r->kind), r->obj, r->seq, sb,
				 h->vnew, ws, r->obj2, wr);
		return k < 0 ? NULL : s;
	}
	int n = h->kase == 3 ?
		asprintf(&s, "case %d (%s): T%u's read of 0x%" PRIx64 " at seq %" PRIu64
			 " (%s) gains the write %s in place of %s: %s",
			 h->kase, lemma[h->kase], r->thread, r->obj, r->seq, sb, ws, wr, how[h->kase]) :
		asprintf(&s, "case %d (%s): T%u's read of 0x%" PRIx64 " at seq %" PRIu64
			 " (%s) loses its writer %s and reads %s: %s",
			 h->kase, lemma[h->kase], r->thread, r->obj, r->seq, sb, wr, ws, how[h->kase]);
	return n < 0 ? NULL : s;
}

int pr_avfilter_br(const struct pr_model *m, struct prediction *p, size_t n, pr_br_fn br,
		   void *ctx)
{
	return pr_avfilter_use(m, p, n, br, ctx, NULL, NULL);
}

int pr_avfilter_use(const struct pr_model *m, struct prediction *p, size_t n, pr_br_fn br,
		    void *ctx, pr_steers_fn steers_fn, void *steers_ctx)
{
	struct avf a;
	int rc = 0;
	memset(&a, 0, sizeof a);
	a.m = m;
	a.br = br ? br : pr_br_unknown;
	a.ctx = ctx;
	a.steers = steers_fn;
	a.steers_ctx = steers_ctx;
	pr_hmap_init(&a.vars);
	pr_hmap_init(&a.sites);
	for (size_t i = 0; i < n; i++) {
		free(p[i].filter_why);
		free(p[i].prefix_why);
		p[i].filter_why = p[i].prefix_why = NULL;
		p[i].filtered = false;
	}
	if (avf_init(&a, m) < 0) {
		avt_error("cannot filter predictions: out of memory");
		avf_release(&a);
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct pat q;
		struct hit h;
		if (!p[i].sched)
			continue;
		if (walk_prefix(&a, &p[i], p[i].sched, &h) < 0) {
			avt_error("cannot filter prediction %u: its schedule does not fit the trace",
				  p[i].id);
			rc = -1;
			break;
		}
		if (h.kase && !(p[i].prefix_why = why(m, &h))) {
			avt_error("cannot filter predictions: out of memory");
			rc = -1;
			break;
		}
		if (!pattern_of(m, &p[i], &q))
			continue;
		if (walk(&a, &q, p[i].sched, &h) < 0) {
			avt_error("cannot filter prediction %u: its schedule does not fit the trace",
				  p[i].id);
			rc = -1;
		} else if (h.kase) {
			p[i].filter_why = why(m, &h);
			p[i].filtered = true;
			if (!p[i].filter_why) {
				avt_error("cannot filter predictions: out of memory");
				rc = -1;
			}
		}
	}
	avf_release(&a);
	return rc;
}

int pr_avfilter(const struct pr_model *m, struct prediction *p, size_t n)
{
	return pr_avfilter_br(m, p, n, NULL, NULL);
}
