/*
 * Building the prediction model (model.h): one pass over the trace in
 * global order computes every event's vector clock, its incoming
 * synchronization edges and the lockset after it.
 *
 * Why snapshots: a dense clock per event is nev x nthreads words (64 MB for
 * a million events of 16 threads).  A thread's clock only changes in other
 * threads' components when an edge arrives, and its own component is the
 * event's tindex + 1, so consecutive events share one stored copy until an
 * edge brings news.  Edge sources are referred to by event (its snapshot
 * plus its tindex) instead of being copied; only joins of several sources
 * (rwlock readers, semaphores, barriers, trylocks) get a snapshot of their
 * own.
 */
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "model.h"
#include "trace/log.h"

/* Per-object state of the pass (locks, conds, sems, barriers share ids). */
struct objstate {
	uint32_t rel;     /* clock of the releases so far (ref), or PR_NONE */
	uint32_t holder;  /* acquire of the exclusive holder, or PR_NONE */
	uint32_t trypend; /* join of failed trylocks since the last release (ref) */
	uint32_t sig;     /* last signal/broadcast event on a cond */
	uint32_t posts;   /* join of all sem_posts (ref) */
};

/* A barrier episode: its events, found by a pre-pass. */
struct episode {
	uint32_t first;   /* first barrier event of the episode */
	uint32_t nthr;
	uint32_t *thr;    /* threads taking part */
	uint32_t clock;   /* snapshot of their arrival, set at the first event */
};

/* The words (address / 8) a locked instruction wrote, and for each the
 * last locked write to it (event + 1), or RF_PLAIN once a plain write
 * overwrote some of that write's bytes (a pr_hmap used as a map:
 * pr_hmap_set).  Words never written by a locked instruction are not
 * kept, so most traces keep nothing. */
#define RF_PLAIN (UINT32_MAX - 1)

/* One answer of build.steers, cached by read site and address (a polling
 * loop asks the same question at every poll). */
struct rfsteer {
	uint64_t off, addr;
	uint16_t mod;
	uint8_t watched, used;
	bool steers;
};
#define RF_SEEN 256u

struct build {
	struct pr_model *m;
	uint32_t *cur;        /* nslots x nslots current clocks (each chain's
	                         running thread's) */
	uint32_t *cursnap;    /* [slot] snapshot holding its clock, or PR_NONE */
	uint32_t *curls;      /* lockset node of each thread */
	uint32_t *create_ev;  /* [child] its create event */
	uint32_t *exit_ev;    /* [thread] its exit event */
	uint32_t *wait_ev;    /* [thread] its last cond wait */
	struct objstate *os;
	size_t oscap;
	struct episode *eps;
	size_t neps;
	uint32_t *epof;       /* per event: episode of a barrier event */
	struct pr_hmap rf;    /* locked writes, for reads-from edges */
	pr_steers_fn steers;  /* which reads take them, or NULL: all */
	void *steers_ctx;
	struct rfsteer *seen; /* [RF_SEEN] the answers of steers, by site */
	uint8_t *upd;         /* per event: a read of an update (find_updates) */
};

static size_t hash64(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elsize)
{
	if (need <= *cap)
		return p;
	size_t ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(p, ncap * elsize);
	if (!n)
		return NULL;
	*cap = ncap;
	return n;
}

uint32_t pr_obj_id(const struct pr_model *m, uint64_t a)
{
	if (!m->hcap)
		return PR_NONE;
	for (size_t i = hash64(a) & (m->hcap - 1); m->htab[i]; i = (i + 1) & (m->hcap - 1))
		if (m->objaddr[m->htab[i] - 1] == a)
			return m->htab[i] - 1;
	return PR_NONE;
}

static int rehash(struct pr_model *m)
{
	size_t ncap = m->hcap ? m->hcap * 2 : 256;
	uint32_t *n = calloc(ncap, sizeof *n);
	if (!n)
		return -1;
	for (uint32_t id = 0; id < m->nobjs; id++) {
		size_t i = hash64(m->objaddr[id]) & (ncap - 1);
		while (n[i])
			i = (i + 1) & (ncap - 1);
		n[i] = id + 1;
	}
	free(m->htab);
	m->htab = n;
	m->hcap = ncap;
	return 0;
}

/* Id of the object at address a, adding it if new; PR_NONE if out of memory. */
static uint32_t obj_intern(struct build *b, uint64_t a)
{
	struct pr_model *m = b->m;
	if ((m->nobjs + 1) * 2 > m->hcap && rehash(m) < 0)
		return PR_NONE;
	size_t i = hash64(a) & (m->hcap - 1);
	for (; m->htab[i]; i = (i + 1) & (m->hcap - 1))
		if (m->objaddr[m->htab[i] - 1] == a)
			return m->htab[i] - 1;
	if (m->nobjs + 1 > m->objcap) {
		/* the three arrays grow together, to the same capacity */
		size_t cap = m->objcap, cap2 = m->objcap, cap3 = b->oscap;
		uint64_t *na = grow(m->objaddr, &cap, m->nobjs + 1, sizeof *na);
		if (!na)
			return PR_NONE;
		m->objaddr = na;
		uint8_t *nr = grow(m->objrw, &cap2, m->nobjs + 1, sizeof *nr);
		if (!nr)
			return PR_NONE;
		m->objrw = nr;
		struct objstate *no = grow(b->os, &cap3, m->nobjs + 1, sizeof *no);
		if (!no)
			return PR_NONE;
		b->os = no;
		b->oscap = cap3;
		m->objcap = cap;
	}
	uint32_t id = m->nobjs++;
	m->objaddr[id] = a;
	m->objrw[id] = 0;
	b->os[id] = (struct objstate){ PR_NONE, PR_NONE, PR_NONE, PR_NONE, PR_NONE };
	m->htab[i] = id + 1;
	return id;
}

/* ---- clocks ---- */

static uint32_t *snap_row(const struct pr_model *m, uint32_t s)
{
	return m->snap + (size_t)s * m->nslots;
}

/* Chain count of slot s in VC(e) (e's own chain: implied by its index). */
static uint32_t raw_at(const struct pr_model *m, uint32_t e, uint32_t s)
{
	const struct avt_event *ev = &m->t->ev[e];
	if (m->slot[ev->thread] == s)
		return m->sbase[ev->thread] + ev->tindex + 1;
	return snap_row(m, m->vc[e])[s];
}

uint32_t pr_ref_slot(const struct pr_model *m, uint32_t ref, uint32_t s)
{
	if (ref == PR_NONE)
		return 0;
	if (ref & PR_REF_SNAP)
		return snap_row(m, ref & ~PR_REF_SNAP)[s];
	return raw_at(m, ref, s);
}

/* out[s] = max(out[s], ref[s]) over chains. */
static void raw_join(const struct pr_model *m, uint32_t ref, uint32_t *out)
{
	for (uint32_t s = 0; ref != PR_NONE && s < m->nslots; s++) {
		uint32_t v = pr_ref_slot(m, ref, s);
		if (v > out[s])
			out[s] = v;
	}
}

/* Stores a copy of clock c as a new snapshot; PR_NONE if out of memory. */
static uint32_t snap_add(struct pr_model *m, const uint32_t *c)
{
	if (m->nsnap >= PR_REF_SNAP - 1)
		return PR_NONE;
	size_t cap = m->snapcap;
	uint32_t *n = grow(m->snap, &cap, (m->nsnap + 1) * m->nslots, sizeof *n);
	if (!n)
		return PR_NONE;
	m->snap = n;
	m->snapcap = cap;
	memcpy(n + m->nsnap * m->nslots, c, m->nslots * sizeof *c);
	return (uint32_t)m->nsnap++;
}

uint32_t pr_ref_at(const struct pr_model *m, uint32_t ref, uint32_t u)
{
	if (ref == PR_NONE)
		return 0;
	if (ref & PR_REF_SNAP)
		return pr_slot_count(m, u, snap_row(m, ref & ~PR_REF_SNAP)[m->slot[u]]);
	return pr_vc_at(m, ref, u);
}

uint32_t pr_vc_at(const struct pr_model *m, uint32_t e, uint32_t u)
{
	const struct avt_event *ev = &m->t->ev[e];
	if (ev->thread == u)
		return ev->tindex + 1;
	return pr_slot_count(m, u, raw_at(m, e, m->slot[u]));
}

uint32_t pr_vc_passes(const struct pr_model *m, uint32_t u, uint32_t from, uint32_t to,
		      uint32_t j, uint32_t lim)
{
	while (from < to) {
		uint32_t mid = from + (to - from) / 2;
		if (pr_vc_at(m, m->tev[u][mid], j) > lim)
			to = mid;
		else
			from = mid + 1;
	}
	return from;
}

/* A clock reference read for every thread in turn (pr_ref_get(),
 * pr_ref_join()): what pr_ref_at() finds per thread, with the event, its
 * chain and its snapshot row looked up once. */
struct ref_reader {
	const struct pr_model *m;
	const uint32_t *row;  /* the snapshot (NULL: not read yet, for an event) */
	uint32_t ev;          /* the event, or PR_NONE for a snapshot */
	uint32_t thread, slot, own; /* the event's thread, its chain, its own count */
	uint32_t tindex;
};

static void ref_reader_init(struct ref_reader *r, const struct pr_model *m, uint32_t ref)
{
	r->m = m;
	r->row = NULL;
	r->ev = PR_NONE;
	if (ref & PR_REF_SNAP) {
		r->row = snap_row(m, ref & ~PR_REF_SNAP);
		return;
	}
	const struct avt_event *e = &m->t->ev[ref];
	r->ev = ref;
	r->thread = e->thread;
	r->tindex = e->tindex;
	r->slot = m->slot[e->thread];
	r->own = m->sbase[e->thread] + e->tindex + 1;
}

/* pr_ref_at(m, ref, u) of the reference r reads (not PR_NONE). */
static uint32_t ref_reader_at(struct ref_reader *r, uint32_t u)
{
	const struct pr_model *m = r->m;
	uint32_t s = m->slot[u];
	if (r->ev == PR_NONE)
		return pr_slot_count(m, u, r->row[s]);
	if (u == r->thread)
		return r->tindex + 1;
	if (s == r->slot)
		return pr_slot_count(m, u, r->own);
	if (!r->row)
		r->row = snap_row(m, m->vc[r->ev]);
	return pr_slot_count(m, u, r->row[s]);
}

void pr_vc_get(const struct pr_model *m, uint32_t e, uint32_t *out)
{
	struct ref_reader r;
	ref_reader_init(&r, m, e);
	for (uint32_t u = 0; u < m->nthreads; u++)
		out[u] = ref_reader_at(&r, u);
}

uint32_t pr_vc_pre_at(const struct pr_model *m, uint32_t e, uint32_t u)
{
	const struct avt_event *ev = &m->t->ev[e];
	if (ev->tindex == 0)
		return 0;
	return pr_vc_at(m, m->tev[ev->thread][ev->tindex - 1], u);
}

bool pr_hb(const struct pr_model *m, uint32_t a, uint32_t b)
{
	const struct avt_event *ea = &m->t->ev[a];
	return pr_vc_at(m, b, ea->thread) > ea->tindex;
}

bool pr_hb_pre(const struct pr_model *m, uint32_t a, uint32_t b)
{
	const struct avt_event *ea = &m->t->ev[a];
	if (pr_vc_pre_at(m, b, ea->thread) > ea->tindex)
		return true;
	return pr_ref_at(m, m->in_sync[b], ea->thread) > ea->tindex;
}

void pr_ref_get(const struct pr_model *m, uint32_t ref, uint32_t *out)
{
	if (ref == PR_NONE) {
		memset(out, 0, m->nthreads * sizeof *out);
		return;
	}
	struct ref_reader r;
	ref_reader_init(&r, m, ref);
	for (uint32_t u = 0; u < m->nthreads; u++)
		out[u] = ref_reader_at(&r, u);
}

void pr_ref_join(const struct pr_model *m, uint32_t ref, uint32_t *out)
{
	if (ref == PR_NONE)
		return;
	struct ref_reader r;
	ref_reader_init(&r, m, ref);
	for (uint32_t u = 0; u < m->nthreads; u++) {
		uint32_t v = ref_reader_at(&r, u);
		if (v > out[u])
			out[u] = v;
	}
}

void pr_cut_clock(const struct pr_model *m, uint32_t u, uint32_t pos, uint32_t drop,
		  uint32_t *out)
{
	uint32_t from = drop == PR_NONE ? pos : m->t->ev[drop].tindex;
	memset(out, 0, m->nthreads * sizeof *out);
	if (from > 0)
		pr_vc_get(m, m->tev[u][from - 1], out);
	/* past the dropped edge, only the edges of each event are sound */
	for (uint32_t k = from; k < pos; k++) {
		uint32_t e = m->tev[u][k];
		if (e != drop)
			pr_ref_join(m, m->in_lock[e], out);
		pr_ref_join(m, m->in_sync[e], out);
	}
	out[u] = pos;
}

/* Joins ref into thread t's current clock; a change makes its snapshot stale. */
static void cur_join(struct build *b, uint32_t t, uint32_t ref)
{
	struct pr_model *m = b->m;
	uint32_t st = m->slot[t];
	uint32_t *c = b->cur + (size_t)st * m->nslots;
	if (ref == PR_NONE)
		return;
	for (uint32_t s = 0; s < m->nslots; s++) {
		if (s == st)
			continue;
		uint32_t v = pr_ref_slot(m, ref, s);
		if (v > c[s]) {
			c[s] = v;
			b->cursnap[st] = PR_NONE;
		}
	}
}

/* A reference to the join of clock ref and the clock of event e (e is the
 * newest event of its thread, so its clock is the thread's current one). */
static uint32_t ref_join_event(struct build *b, uint32_t ref, uint32_t e)
{
	struct pr_model *m = b->m;
	const struct avt_event *ev = &m->t->ev[e];
	const uint32_t *c = b->cur + (size_t)m->slot[ev->thread] * m->nslots;
	bool covered = true;
	for (uint32_t s = 0; ref != PR_NONE && s < m->nslots; s++)
		if (pr_ref_slot(m, ref, s) > c[s]) {
			covered = false;
			break;
		}
	if (covered)
		return e;
	uint32_t *tmp = malloc(m->nslots * sizeof *tmp);
	if (!tmp)
		return PR_NONE;
	memcpy(tmp, c, m->nslots * sizeof *tmp);
	raw_join(m, ref, tmp);
	uint32_t s = snap_add(m, tmp);
	free(tmp);
	return s == PR_NONE ? PR_NONE : s | PR_REF_SNAP;
}

/* ---- locksets ---- */

static uint32_t ls_push(struct pr_model *m, uint32_t parent, uint32_t lock, uint32_t acq,
			uint32_t mode)
{
	struct pr_lsnode *n = grow(m->lsn, &m->lsncap, m->nlsn + 1, sizeof *n);
	if (!n)
		return PR_NONE;
	m->lsn = n;
	n[m->nlsn] = (struct pr_lsnode){ lock, acq, parent, mode };
	return (uint32_t)m->nlsn++;
}

/* The set n without lock l (nodes above l are copied: releases out of
 * order are rare).  n itself if l is not in it; PR_NONE if out of memory. */
static uint32_t ls_remove(struct pr_model *m, uint32_t n, uint32_t lock)
{
	if (!n)
		return 0;
	if (m->lsn[n].lock == lock)
		return m->lsn[n].parent;
	uint32_t below = ls_remove(m, m->lsn[n].parent, lock);
	if (below == PR_NONE)
		return PR_NONE;
	if (below == m->lsn[n].parent)
		return n; /* l is not held */
	struct pr_lsnode keep = m->lsn[n];
	return ls_push(m, below, keep.lock, keep.acq, keep.mode);
}

uint32_t pr_ls_before(const struct pr_model *m, uint32_t e)
{
	const struct avt_event *ev = &m->t->ev[e];
	return ev->tindex ? m->ls[m->tev[ev->thread][ev->tindex - 1]] : 0;
}

uint32_t pr_ls_size(const struct pr_model *m, uint32_t n)
{
	uint32_t k = 0;
	for (; n; n = m->lsn[n].parent)
		k++;
	return k;
}

uint32_t pr_ls_find(const struct pr_model *m, uint32_t n, uint32_t lock)
{
	for (; n; n = m->lsn[n].parent)
		if (m->lsn[n].lock == lock)
			return n;
	return 0;
}

bool pr_ls_conflict(const struct pr_model *m, uint32_t a, uint32_t b)
{
	for (; a; a = m->lsn[a].parent) {
		uint32_t f = pr_ls_find(m, b, m->lsn[a].lock);
		if (f && (m->lsn[a].mode == PR_EXCL || m->lsn[f].mode == PR_EXCL))
			return true;
	}
	return false;
}

uint32_t pr_stretch_end(const struct pr_model *m, uint32_t e)
{
	const struct avt_event *ev = pr_ev(m, e);
	for (uint32_t k = ev->tindex; k < m->tnev[ev->thread]; k++)
		if (!m->ls[m->tev[ev->thread][k]])
			return k;
	return PR_NONE;
}

uint32_t pr_stretch_start(const struct pr_model *m, uint32_t u, uint32_t pos)
{
	while (pos > 0 && m->ls[m->tev[u][pos - 1]] != 0)
		pos--;
	return pos;
}

/* ---- the pass ---- */

enum pr_mode pr_acq_mode(const struct avt_event *e)
{
	return e->kind == AVT_EV_RD_ACQUIRE ? PR_READ : PR_EXCL;
}

uint32_t pr_tev(const struct pr_model *m, uint32_t u, uint32_t i)
{
	return u < m->nthreads && i < m->tnev[u] ? m->tev[u][i] : PR_NONE;
}

static int index_threads(struct pr_model *m)
{
	const struct trace *t = m->t;
	m->tnev = calloc(m->nthreads, sizeof *m->tnev);
	m->tev = calloc(m->nthreads, sizeof *m->tev);
	if (!m->tnev || !m->tev)
		return -1;
	for (uint32_t i = 0; i < m->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		/* predictions name events by seq and look them up as t->ev[seq]
		 * (trace_read checks this; a trace built in memory may not) */
		if (e->seq != i) {
			avt_error("cannot predict: event %u has seq %llu (events are in seq "
				  "order from 0)", i, (unsigned long long)e->seq);
			return -2;
		}
		if (e->tindex != m->tnev[e->thread]) {
			avt_error("cannot predict: event %llu of T%u has index %u, expected %u",
				  (unsigned long long)e->seq, e->thread, e->tindex,
				  m->tnev[e->thread]);
			return -2;
		}
		m->tnev[e->thread]++;
	}
	for (uint32_t u = 0; u < m->nthreads; u++) {
		m->tev[u] = malloc((m->tnev[u] ? m->tnev[u] : 1) * sizeof **m->tev);
		if (!m->tev[u])
			return -1;
		m->tnev[u] = 0;
	}
	for (uint32_t i = 0; i < m->nev; i++)
		m->tev[t->ev[i].thread][m->tnev[t->ev[i].thread]++] = i;
	return 0;
}

/* Chains (model.h): thread w continues the chain of a thread u when w's
 * creator joined u, after u's exit, before creating w, and w's first event
 * is its start: then u's exit -> the join -> (program order) the create ->
 * w's start, so every event of the chain happens before w's.  Each joiner
 * keeps the chains its joins freed (a list threaded through next[]).  One
 * linear pass, with per-thread state only. */
static int assign_slots(struct pr_model *m)
{
	const struct trace *t = m->t;
	uint32_t n = m->nthreads, *freed = NULL, *next = NULL, *pend = NULL, *len = NULL;
	uint8_t *state = NULL; /* per thread: 1 exited, 2 its chain freed */
	size_t cap = 0, lencap = 0;
	int rc = -1;
	m->slot = malloc(n * sizeof *m->slot);
	m->sbase = malloc(n * sizeof *m->sbase);
	freed = malloc(n * sizeof *freed);
	pend = malloc(n * sizeof *pend);
	state = calloc(n, 1);
	if (!m->slot || !m->sbase || !freed || !pend || !state)
		goto out;
	for (uint32_t u = 0; u < n; u++)
		m->slot[u] = freed[u] = pend[u] = PR_NONE;
	m->nslots = 0;
	for (uint32_t i = 0; i < m->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		uint32_t u = e->thread;
		if (m->slot[u] == PR_NONE) {
			uint32_t s = pend[u];
			if (s == PR_NONE || e->kind != AVT_EV_START) {
				uint32_t *nn = grow(next, &cap, m->nslots + 1, sizeof *next);
				uint32_t *nl = nn ? grow(len, &lencap, m->nslots + 1, sizeof *len) : NULL;
				if (nn)
					next = nn;
				if (!nl)
					goto out;
				len = nl;
				s = m->nslots++;
				len[s] = 0;
			}
			m->slot[u] = s;
			m->sbase[u] = len[s];
		}
		len[m->slot[u]]++;
		if (e->kind == AVT_EV_EXIT)
			state[u] |= 1;
		else if (e->kind == AVT_EV_JOIN && e->obj < n && e->obj != u && state[e->obj] == 1 &&
			 m->slot[e->obj] != PR_NONE) {
			uint32_t s = m->slot[e->obj];
			state[e->obj] = 3;
			next[s] = freed[u];
			freed[u] = s;
		} else if (e->kind == AVT_EV_CREATE && e->obj < n && m->slot[e->obj] == PR_NONE &&
			   pend[e->obj] == PR_NONE && freed[u] != PR_NONE) {
			pend[e->obj] = freed[u];
			freed[u] = next[freed[u]];
		}
	}
	if (!m->nslots)
		m->nslots = 1;
	for (uint32_t u = 0; u < n; u++)
		if (m->slot[u] == PR_NONE) { /* no events: any chain, never read */
			m->slot[u] = 0;
			m->sbase[u] = 0;
		}
	rc = 0;
out:
	free(freed);
	free(next);
	free(pend);
	free(len);
	free(state);
	return rc;
}

/* Barrier episodes: the events of one barrier from a thread's first until
 * a thread comes back.  A wrong grouping only adds edges from events that
 * already happened, so it can cost predictions, never soundness. */
static int find_episodes(struct build *b)
{
	struct pr_model *m = b->m;
	b->epof = malloc(m->nev * sizeof *b->epof);
	uint32_t *open = NULL; /* per barrier object: open episode + 1 */
	size_t opencap = 0, epcap = 0;
	if (!b->epof)
		return -1;
	for (uint32_t i = 0; i < m->nev; i++) {
		const struct avt_event *e = &m->t->ev[i];
		b->epof[i] = PR_NONE;
		if (e->kind != AVT_EV_BARRIER)
			continue;
		uint32_t id = obj_intern(b, e->obj);
		size_t oldcap = opencap;
		uint32_t *no = id == PR_NONE ? NULL : grow(open, &opencap, id + 1, sizeof *open);
		if (!no)
			goto fail;
		open = no;
		memset(open + oldcap, 0, (opencap - oldcap) * sizeof *open);
		struct episode *ep = open[id] ? &b->eps[open[id] - 1] : NULL;
		for (uint32_t k = 0; ep && k < ep->nthr; k++)
			if (ep->thr[k] == e->thread)
				ep = NULL;
		if (!ep) {
			struct episode *ne = grow(b->eps, &epcap, b->neps + 1, sizeof *ne);
			if (!ne)
				goto fail;
			b->eps = ne;
			ep = &b->eps[b->neps++];
			*ep = (struct episode){ i, 0, NULL, PR_NONE };
			open[id] = (uint32_t)b->neps;
		}
		uint32_t *nt = realloc(ep->thr, (ep->nthr + 1) * sizeof *nt);
		if (!nt)
			goto fail;
		ep->thr = nt;
		ep->thr[ep->nthr++] = e->thread;
		b->epof[i] = (uint32_t)(ep - b->eps);
	}
	free(open);
	return 0;
fail:
	free(open);
	return -1;
}

static int barrier_edge(struct build *b, uint32_t i, uint32_t t)
{
	struct pr_model *m = b->m;
	struct episode *ep = &b->eps[b->epof[i]];
	if (ep->clock == PR_NONE) {
		/* the first return: everyone of the episode has arrived */
		uint32_t *tmp = calloc(m->nslots, sizeof *tmp);
		if (!tmp)
			return -1;
		for (uint32_t k = 0; k < ep->nthr; k++) {
			const uint32_t *c = b->cur + (size_t)m->slot[ep->thr[k]] * m->nslots;
			for (uint32_t s = 0; s < m->nslots; s++)
				if (c[s] > tmp[s])
					tmp[s] = c[s];
		}
		/* the first returner's own clock already counts this event */
		if (tmp[m->slot[t]])
			tmp[m->slot[t]]--;
		uint32_t s = snap_add(m, tmp);
		free(tmp);
		if (s == PR_NONE)
			return -1;
		ep->clock = s | PR_REF_SNAP;
	}
	m->in_sync[i] = ep->clock;
	cur_join(b, t, ep->clock);
	return 0;
}

static int on_acquire(struct build *b, uint32_t i, const struct avt_event *e)
{
	struct pr_model *m = b->m;
	uint32_t t = e->thread, l = m->lock[i];
	struct objstate *o = &b->os[l];
	if (e->kind != AVT_EV_ACQUIRE)
		m->objrw[l] = 1;
	m->in_lock[i] = o->rel;
	cur_join(b, t, o->rel);
	if ((e->flags & AVT_F_COND_WAKE) && !(e->flags & AVT_F_TIMED_OUT)) {
		uint32_t c = obj_intern(b, e->obj2);
		if (c == PR_NONE)
			return -1;
		uint32_t s = b->os[c].sig, w = b->wait_ev[t];
		/* only a signal after the wait can have woken it */
		if (s != PR_NONE && (w == PR_NONE || s > w)) {
			m->in_sync[i] = s;
			cur_join(b, t, s);
		}
	}
	if (pr_acq_mode(e) == PR_EXCL)
		b->os[l].holder = i;
	uint32_t n = ls_push(m, b->curls[t], l, i, pr_acq_mode(e));
	if (n == PR_NONE)
		return -1;
	b->curls[t] = n;
	return 0;
}

static int on_release(struct build *b, uint32_t i, const struct avt_event *e)
{
	struct pr_model *m = b->m;
	uint32_t t = e->thread, l = m->lock[i];
	struct objstate *o = &b->os[l];
	if (o->trypend != PR_NONE) {
		/* a failed trylock saw the lock held: it precedes this release */
		m->in_sync[i] = o->trypend;
		cur_join(b, t, o->trypend);
		o->trypend = PR_NONE;
	}
	if (o->holder != PR_NONE && m->t->ev[o->holder].thread == t)
		o->holder = PR_NONE;
	uint32_t n = ls_remove(m, b->curls[t], l);
	if (n == PR_NONE)
		return -1;
	b->curls[t] = n;
	return 0;
}

/* After the event's clock is final: edges that leave it. */
static int after_release(struct build *b, uint32_t i, uint32_t l)
{
	uint32_t r = ref_join_event(b, b->os[l].rel, i);
	if (r == PR_NONE)
		return -1;
	b->os[l].rel = r;
	return 0;
}

static int on_trylock_fail(struct build *b, uint32_t i, const struct avt_event *e)
{
	struct pr_model *m = b->m;
	struct objstate *o = &b->os[m->lock[i]];
	if (o->holder != PR_NONE && m->t->ev[o->holder].thread != e->thread) {
		m->in_sync[i] = o->holder;
		cur_join(b, e->thread, o->holder);
	}
	return 0;
}

static int after_trylock_fail(struct build *b, uint32_t i)
{
	struct objstate *o = &b->os[b->m->lock[i]];
	if (o->holder == PR_NONE || b->m->t->ev[o->holder].thread == b->m->t->ev[i].thread)
		return 0;
	uint32_t r = ref_join_event(b, o->trypend, i);
	if (r == PR_NONE)
		return -1;
	o->trypend = r;
	return 0;
}

/* ---- reads-from edges ---- */

/* The last write to word: event + 1, RF_PLAIN, or 0 if no locked
 * instruction ever wrote it. */
static uint32_t rf_get(const struct pr_hmap *h, uint64_t word)
{
	uint32_t v = pr_hmap_get(h, word);
	return v == UINT32_MAX ? 0 : v;
}

static int rf_set(struct pr_hmap *h, uint64_t word, uint32_t v)
{
	return pr_hmap_set(h, word, v);
}

/* The end of access e's bytes (a size of 0: one byte). */
static uint64_t rf_end(const struct avt_event *e)
{
	return e->obj + (e->size ? e->size : 1);
}

/* The words [*lo, *hi] access e touches. */
static void rf_words(const struct avt_event *e, uint64_t *lo, uint64_t *hi)
{
	*lo = e->obj >> 3;
	*hi = (rf_end(e) - 1) >> 3;
}

/* May read e's value steer its thread (build.steers, cached)? */
static bool rf_steers(struct build *b, const struct avt_event *e)
{
	uint8_t watched = (e->flags & AVT_F_WATCHED) != 0;
	uint64_t stores[8];
	unsigned nstores = 0;
	if (!b->steers)
		return true;
	if (!b->seen && !(b->seen = calloc(RF_SEEN, sizeof *b->seen)))
		return true; /* no cache: the edge, as without steers */
	struct rfsteer *c = &b->seen[hash64(e->site_off ^ e->obj ^ ((uint64_t)e->site_mod << 48) ^
					    watched) & (RF_SEEN - 1)];
	if (c->used && c->off == e->site_off && c->addr == e->obj && c->mod == e->site_mod &&
	    c->watched == watched)
		return c->steers;
	bool s = b->steers(b->steers_ctx, e->site_mod, e->site_off, e->obj, watched, stores, 8,
			   &nstores);
	*c = (struct rfsteer){ e->site_off, e->obj, e->site_mod, watched, 1, s };
	return s;
}

/* A plain read whose bytes were all last written by one locked
 * instruction of another thread saw that write: the recording is
 * serialized, so recorded order is the order the read observed.  That is
 * a release/acquire pair (an x86 locked write is a full barrier, and
 * std::atomic's seq_cst store is an xchg): write -> read, so what the
 * writer did before it happens before what the reader does after.  Plain
 * writes make no edge: a plain write and the read that saw it race.  Nor
 * do the reads of updates (find_updates()) and reads whose value steers
 * nothing (rf_steers()): moved before the write, they read another value
 * and their thread goes on the same way.  A read-modify-write takes none
 * either: the event does not say whether it was an xchg that only stores
 * (std::atomic's store) or a compare-and-swap, and an edge to a store
 * would fix the order of every store to a flag (acc_treiber_ok's push
 * after the pop's CAS, a race the site pairs predict). */
static void rf_edge(struct build *b, uint32_t i, const struct avt_event *e)
{
	uint64_t lo, hi;
	rf_words(e, &lo, &hi);
	uint32_t w = rf_get(&b->rf, lo);
	if (!w || w == RF_PLAIN)
		return;
	for (uint64_t k = lo + 1; k <= hi; k++)
		if (rf_get(&b->rf, k) != w)
			return;
	const struct avt_event *we = &b->m->t->ev[--w];
	if (we->thread == e->thread || e->obj < we->obj || rf_end(e) > rf_end(we))
		return; /* its own write, or bytes another write left */
	if ((b->upd && b->upd[i]) || !rf_steers(b, e))
		return;
	b->m->in_sync[i] = w;
	cur_join(b, e->thread, w);
}

/* Accesses a and b share a byte. */
static bool rf_overlap(const struct avt_event *a, const struct avt_event *b)
{
	return a->obj < rf_end(b) && b->obj < rf_end(a);
}

/* After write i: a locked one is the last write of the words it touches;
 * a plain one ends the locked writes whose bytes it overwrites (only
 * those: a flag and the plain variable next to it share a word). */
static int rf_note_write(struct build *b, uint32_t i, const struct avt_event *e)
{
	uint64_t lo, hi;
	bool locked = (e->flags & AVT_F_ATOMIC) != 0;
	if (!locked && !b->rf.n)
		return 0;
	rf_words(e, &lo, &hi);
	for (uint64_t k = lo; k <= hi; k++) {
		uint32_t w = rf_get(&b->rf, k);
		if (!locked && (!w || w == RF_PLAIN || !rf_overlap(&b->m->t->ev[w - 1], e)))
			continue;
		if (rf_set(&b->rf, k, locked ? i + 1 : RF_PLAIN) < 0)
			return -1;
	}
	return 0;
}

/* The plain reads whose thread next writes what they read, with no read
 * of it in between, of the words locked instructions write: a load, then
 * a store, where a compare-and-swap was needed (a lock-free push's load
 * of the top it then replaces).  Such a read is data for an update, not a
 * flag its thread waited for: rf_edge() gives it no edge, so a schedule
 * may move it before the locked write it saw, and the lost update is what
 * PENELOPE and PECAN look for.  b->upd stays NULL when no locked write. */
static int find_updates(struct build *b)
{
	const struct trace *t = b->m->t;
	struct pr_hmap words, last; /* (address, thread) -> read + 1 */
	int rc = -1;
	pr_hmap_init(&words);
	pr_hmap_init(&last);
	for (uint32_t i = 0; i < b->m->nev; i++) {
		uint64_t lo, hi;
		if (!avt_kind_writes(t->ev[i].kind) || !(t->ev[i].flags & AVT_F_ATOMIC))
			continue;
		rf_words(&t->ev[i], &lo, &hi);
		for (uint64_t k = lo; k <= hi; k++)
			if (rf_set(&words, k, 1) < 0)
				goto out;
	}
	if (words.n && !(b->upd = calloc(b->m->nev, 1)))
		goto out;
	for (uint32_t i = 0; words.n && i < b->m->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if (!avt_kind_is_access(e->kind) || !rf_get(&words, e->obj >> 3))
			continue;
		uint64_t key = e->obj << 16 | (e->thread & 0xffff);
		uint32_t r = rf_get(&last, key);
		if (avt_kind_writes(e->kind) && r && r != RF_PLAIN)
			b->upd[r - 1] = 1;
		if (rf_set(&last, key, e->kind == AVT_EV_READ ? i + 1 : RF_PLAIN) < 0)
			goto out;
	}
	rc = 0;
out:
	pr_hmap_release(&words);
	pr_hmap_release(&last);
	return rc;
}

/* Edges into event i (before its clock is stored). */
static int edges_in(struct build *b, uint32_t i, const struct avt_event *e)
{
	struct pr_model *m = b->m;
	uint32_t t = e->thread;
	switch (e->kind) {
	case AVT_EV_START:
		if (b->create_ev[t] != PR_NONE) {
			m->in_sync[i] = b->create_ev[t];
			cur_join(b, t, b->create_ev[t]);
		}
		return 0;
	case AVT_EV_JOIN:
		if (e->obj < m->nthreads && b->exit_ev[e->obj] != PR_NONE) {
			m->in_sync[i] = b->exit_ev[e->obj];
			cur_join(b, t, b->exit_ev[e->obj]);
		}
		return 0;
	case AVT_EV_ACQUIRE:
	case AVT_EV_RD_ACQUIRE:
	case AVT_EV_WR_ACQUIRE:
		return pr_is_acquire(e) ? on_acquire(b, i, e) : 0;
	case AVT_EV_RELEASE:
	case AVT_EV_WAIT:
		if (e->kind == AVT_EV_WAIT)
			b->wait_ev[t] = i;
		return pr_is_release(e) ? on_release(b, i, e) : 0;
	case AVT_EV_TRYLOCK_FAIL:
		return on_trylock_fail(b, i, e);
	case AVT_EV_SEM_WAIT: {
		uint32_t s = obj_intern(b, e->obj);
		if (s == PR_NONE)
			return -1;
		m->in_sync[i] = b->os[s].posts;
		cur_join(b, t, b->os[s].posts);
		return 0;
	}
	case AVT_EV_BARRIER:
		return barrier_edge(b, i, t);
	case AVT_EV_READ:
		rf_edge(b, i, e);
		return 0;
	default:
		return 0;
	}
}

/* Edges out of event i (after its clock is stored). */
static int edges_out(struct build *b, uint32_t i, const struct avt_event *e)
{
	struct pr_model *m = b->m;
	switch (e->kind) {
	case AVT_EV_CREATE:
		if (e->obj < m->nthreads)
			b->create_ev[e->obj] = i;
		return 0;
	case AVT_EV_EXIT:
		b->exit_ev[e->thread] = i;
		return 0;
	case AVT_EV_RELEASE:
	case AVT_EV_WAIT:
		return pr_is_release(e) ? after_release(b, i, m->lock[i]) : 0;
	case AVT_EV_TRYLOCK_FAIL:
		return after_trylock_fail(b, i);
	case AVT_EV_SIGNAL:
	case AVT_EV_BROADCAST: {
		uint32_t c = obj_intern(b, e->obj);
		if (c == PR_NONE)
			return -1;
		b->os[c].sig = i;
		return 0;
	}
	case AVT_EV_SEM_POST: {
		uint32_t s = obj_intern(b, e->obj);
		if (s == PR_NONE)
			return -1;
		uint32_t r = ref_join_event(b, b->os[s].posts, i);
		if (r == PR_NONE)
			return -1;
		b->os[s].posts = r;
		return 0;
	}
	case AVT_EV_WRITE:
	case AVT_EV_RMW:
		return rf_note_write(b, i, e);
	default:
		return 0;
	}
}

static int step(struct build *b, uint32_t i)
{
	struct pr_model *m = b->m;
	const struct avt_event *e = &m->t->ev[i];
	uint32_t t = e->thread;
	m->lock[i] = m->in_lock[i] = m->in_sync[i] = PR_NONE;
	if (avt_kind_is_acquire(e->kind) || e->kind == AVT_EV_RELEASE ||
	    e->kind == AVT_EV_TRYLOCK_FAIL || e->kind == AVT_EV_WAIT) {
		m->lock[i] = obj_intern(b, e->kind == AVT_EV_WAIT ? e->obj2 : e->obj);
		if (m->lock[i] == PR_NONE)
			return -1;
	}
	uint32_t st = m->slot[t];
	b->cur[(size_t)st * m->nslots + st] = m->sbase[t] + e->tindex + 1;
	if (edges_in(b, i, e) < 0)
		return -1;
	if (b->cursnap[st] == PR_NONE) {
		b->cursnap[st] = snap_add(m, b->cur + (size_t)st * m->nslots);
		if (b->cursnap[st] == PR_NONE)
			return -1;
	}
	m->vc[i] = b->cursnap[st];
	m->ls[i] = b->curls[t];
	return edges_out(b, i, e);
}

static void build_release(struct build *b)
{
	free(b->cur);
	free(b->cursnap);
	free(b->curls);
	free(b->create_ev);
	free(b->exit_ev);
	free(b->wait_ev);
	free(b->os);
	for (size_t i = 0; i < b->neps; i++)
		free(b->eps[i].thr);
	free(b->eps);
	free(b->epof);
	pr_hmap_release(&b->rf);
	free(b->seen);
	free(b->upd);
}

static int build_init(struct build *b, struct pr_model *m)
{
	uint32_t n = m->nthreads, ns = m->nslots;
	memset(b, 0, sizeof *b);
	b->m = m;
	b->cur = calloc((size_t)ns * ns, sizeof *b->cur);
	b->cursnap = malloc(ns * sizeof *b->cursnap);
	b->curls = calloc(n, sizeof *b->curls);
	b->create_ev = malloc(n * sizeof *b->create_ev);
	b->exit_ev = malloc(n * sizeof *b->exit_ev);
	b->wait_ev = malloc(n * sizeof *b->wait_ev);
	if (!b->cur || !b->cursnap || !b->curls || !b->create_ev || !b->exit_ev || !b->wait_ev)
		return -1;
	for (uint32_t u = 0; u < n; u++)
		b->create_ev[u] = b->exit_ev[u] = b->wait_ev[u] = PR_NONE;
	for (uint32_t s = 0; s < ns; s++)
		b->cursnap[s] = PR_NONE;
	return 0;
}

static int model_alloc(struct pr_model *m)
{
	size_t n = m->nev ? m->nev : 1;
	m->lock = malloc(n * sizeof *m->lock);
	m->vc = malloc(n * sizeof *m->vc);
	m->in_lock = malloc(n * sizeof *m->in_lock);
	m->in_sync = malloc(n * sizeof *m->in_sync);
	m->ls = malloc(n * sizeof *m->ls);
	if (!m->lock || !m->vc || !m->in_lock || !m->in_sync || !m->ls)
		return -1;
	/* node 0: the empty set */
	return ls_push(m, 0, PR_NONE, PR_NONE, PR_EXCL) == PR_NONE ? -1 : 0;
}

static int model_fill(struct pr_model *m, pr_steers_fn steers, void *ctx)
{
	struct build b;
	int rc = -1;
	if (build_init(&b, m) < 0 || find_episodes(&b) < 0 || find_updates(&b) < 0)
		goto out;
	b.steers = steers;
	b.steers_ctx = ctx;
	for (uint32_t i = 0; i < m->nev; i++) {
		if (!(i & PR_STOP_EVERY) && pr_stopped()) {
			rc = -2;
			goto out;
		}
		if (step(&b, i) < 0)
			goto out;
	}
	rc = 0;
out:
	build_release(&b);
	return rc;
}

static int index_vars(struct pr_model *m);

struct pr_model *pr_model_new(const struct trace *t)
{
	return pr_model_new_steers(t, NULL, NULL);
}

struct pr_model *pr_model_new_steers(const struct trace *t, pr_steers_fn steers, void *ctx)
{
	struct pr_model *m = calloc(1, sizeof *m);
	if (!m)
		goto oom;
	if (t->nev >= PR_REF_SNAP) {
		avt_error("cannot predict: the trace has %zu events, more than %u", t->nev,
			  PR_REF_SNAP - 1);
		free(m);
		return NULL;
	}
	m->t = t;
	m->nev = (uint32_t)t->nev;
	m->nthreads = trace_nthreads(t);
	if (!m->nthreads)
		m->nthreads = 1;
	if (m->nthreads > PR_MAX_THREADS) {
		/* clocks are nthreads x nthreads: a corrupt thread id must not
		 * turn into a huge allocation */
		avt_error("cannot predict: thread id %u is above %u", m->nthreads - 1,
			  PR_MAX_THREADS - 1);
		free(m);
		return NULL;
	}
	int rc = index_threads(m);
	if (rc == -2) {
		pr_model_free(m);
		return NULL;
	}
	if (rc < 0 || index_vars(m) < 0 || assign_slots(m) < 0 || model_alloc(m) < 0 ||
	    (rc = model_fill(m, steers, ctx)) == -1)
		goto oom;
	if (rc == -2) { /* stopped (pr_stopped()): no message */
		pr_model_free(m);
		return NULL;
	}
	return m;
oom:
	avt_error("cannot predict: out of memory");
	pr_model_free(m);
	return NULL;
}

static const struct trace *vsort_t;

static int alloc_by_addr(const void *a, const void *b)
{
	const struct avt_alloc_rec *x = &vsort_t->allocs[*(const uint32_t *)a];
	const struct avt_alloc_rec *y = &vsort_t->allocs[*(const uint32_t *)b];
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->after_seq < y->after_seq ? -1 : x->after_seq > y->after_seq;
}

/* m->var (pr_var): each access's address with the number of the newest
 * allocation made before it that covers it (a block of the heap's), in the
 * bits above user space.  Looks back at most 256 allocations below the
 * address, as cli/names.c names them.  0, or -1 when out of memory. */
static int index_vars(struct pr_model *m)
{
	const struct trace *t = m->t;
	uint32_t *ix = NULL, n = 0;
	if (!t->nallocs)
		return 0;
	ix = malloc(t->nallocs * sizeof *ix);
	m->var = malloc((size_t)m->nev * sizeof *m->var);
	if (!ix || !m->var) {
		free(ix);
		return -1;
	}
	for (size_t i = 0; i < t->nallocs; i++)
		if (t->allocs[i].kind != AVT_ALLOC_FREE && t->allocs[i].size)
			ix[n++] = (uint32_t)i;
	vsort_t = t;
	qsort(ix, n, sizeof *ix, alloc_by_addr);
	for (uint32_t x = 0; x < m->nev; x++) {
		const struct avt_event *e = &t->ev[x];
		m->var[x] = e->obj;
		if (!avt_kind_is_access(e->kind))
			continue;
		uint32_t lo = 0, hi = n;
		while (lo < hi) { /* first allocation above obj */
			uint32_t mid = lo + (hi - lo) / 2;
			if (t->allocs[ix[mid]].addr <= e->obj)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint64_t best = UINT64_MAX, gen = 0;
		for (uint32_t k = lo; k-- > 0 && lo - k <= 256;) {
			const struct avt_alloc_rec *a = &t->allocs[ix[k]];
			if (e->obj - a->addr >= a->size || a->after_seq > x)
				continue;
			if (best == UINT64_MAX || a->after_seq > best) {
				best = a->after_seq;
				gen = ix[k] + 1;
			}
		}
		m->var[x] = e->obj | (gen & 0x1ffff) << 47;
	}
	free(ix);
	return 0;
}

void pr_model_free(struct pr_model *m)
{
	if (!m)
		return;
	free(m->var);
	for (uint32_t u = 0; m->tev && u < m->nthreads; u++)
		free(m->tev[u]);
	free(m->tev);
	free(m->tnev);
	free(m->objaddr);
	free(m->objrw);
	free(m->htab);
	free(m->lock);
	free(m->vc);
	free(m->in_lock);
	free(m->in_sync);
	free(m->ls);
	free(m->snap);
	free(m->slot);
	free(m->sbase);
	free(m->lsn);
	free(m);
}

/* ---- acquisition histories ---- */

struct ahb {
	uint32_t n, cap;
	uint32_t *lock, *mode, *acq;
	uint32_t **set, *nset, *capset;
};

static void ahb_free(struct ahb *a)
{
	for (uint32_t i = 0; i < a->n; i++)
		free(a->set[i]);
	free(a->lock);
	free(a->mode);
	free(a->acq);
	free(a->set);
	free(a->nset);
	free(a->capset);
}

static int ahb_add_hist(struct ahb *a, uint32_t i, uint32_t lock)
{
	for (uint32_t k = 0; k < a->nset[i]; k++)
		if (a->set[i][k] == lock)
			return 0;
	if (a->nset[i] == a->capset[i]) {
		uint32_t nc = a->capset[i] ? a->capset[i] * 2 : 4;
		uint32_t *ns = realloc(a->set[i], nc * sizeof *ns);
		if (!ns)
			return -1;
		a->set[i] = ns;
		a->capset[i] = nc;
	}
	a->set[i][a->nset[i]++] = lock;
	return 0;
}

static int ahb_push(struct ahb *a, uint32_t lock, uint32_t mode, uint32_t acq)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (ahb_add_hist(a, i, lock) < 0)
			return -1;
	if (a->n == a->cap) {
		uint32_t nc = a->cap ? a->cap * 2 : 4;
		uint32_t *l = realloc(a->lock, nc * sizeof *l);
		if (l)
			a->lock = l;
		uint32_t *mo = realloc(a->mode, nc * sizeof *mo);
		if (mo)
			a->mode = mo;
		uint32_t *q = realloc(a->acq, nc * sizeof *q);
		if (q)
			a->acq = q;
		uint32_t **s = realloc(a->set, nc * sizeof *s);
		if (s)
			a->set = s;
		uint32_t *ns = realloc(a->nset, nc * sizeof *ns);
		if (ns)
			a->nset = ns;
		uint32_t *cs = realloc(a->capset, nc * sizeof *cs);
		if (cs)
			a->capset = cs;
		if (!l || !mo || !q || !s || !ns || !cs)
			return -1;
		a->cap = nc;
	}
	a->lock[a->n] = lock;
	a->mode[a->n] = mode;
	a->acq[a->n] = acq;
	a->set[a->n] = NULL;
	a->nset[a->n] = a->capset[a->n] = 0;
	a->n++;
	return 0;
}

static void ahb_pop(struct ahb *a, uint32_t lock)
{
	for (uint32_t i = a->n; i-- > 0;) {
		if (a->lock[i] != lock)
			continue;
		free(a->set[i]);
		for (uint32_t k = i; k + 1 < a->n; k++) {
			a->lock[k] = a->lock[k + 1];
			a->mode[k] = a->mode[k + 1];
			a->acq[k] = a->acq[k + 1];
			a->set[k] = a->set[k + 1];
			a->nset[k] = a->nset[k + 1];
			a->capset[k] = a->capset[k + 1];
		}
		a->n--;
		return;
	}
}

static int ahb_flatten(struct ahb *a, struct pr_ah *out)
{
	uint32_t total = 0;
	for (uint32_t i = 0; i < a->n; i++)
		total += a->nset[i];
	out->n = a->n;
	out->lock = malloc((a->n + 1) * sizeof *out->lock);
	out->mode = malloc((a->n + 1) * sizeof *out->mode);
	out->acq = malloc((a->n + 1) * sizeof *out->acq);
	out->off = malloc((a->n + 1) * sizeof *out->off);
	out->hist = malloc((total + 1) * sizeof *out->hist);
	if (!out->lock || !out->mode || !out->acq || !out->off || !out->hist)
		return -1;
	uint32_t k = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		out->lock[i] = a->lock[i];
		out->mode[i] = a->mode[i];
		out->acq[i] = a->acq[i];
		out->off[i] = k;
		if (a->nset[i])
			memcpy(out->hist + k, a->set[i], a->nset[i] * sizeof *out->hist);
		k += a->nset[i];
	}
	out->off[a->n] = k;
	return 0;
}

int pr_ah_at(const struct pr_model *m, uint32_t u, uint32_t pos, struct pr_ah *out)
{
	struct ahb a = { 0 };
	int rc = -1;
	memset(out, 0, sizeof *out);
	if (u >= m->nthreads || pos > m->tnev[u])
		return -1;
	for (uint32_t k = pr_stretch_start(m, u, pos); k < pos; k++) {
		uint32_t e = m->tev[u][k];
		const struct avt_event *ev = &m->t->ev[e];
		if (pr_is_acquire(ev) && ahb_push(&a, m->lock[e], pr_acq_mode(ev), e) < 0)
			goto out;
		if (pr_is_release(ev))
			ahb_pop(&a, m->lock[e]);
	}
	rc = ahb_flatten(&a, out);
out:
	ahb_free(&a);
	if (rc < 0) {
		pr_ah_release(out);
		avt_error("cannot predict: out of memory");
	}
	return rc;
}

void pr_ah_release(struct pr_ah *ah)
{
	free(ah->lock);
	free(ah->mode);
	free(ah->acq);
	free(ah->off);
	free(ah->hist);
	memset(ah, 0, sizeof *ah);
}

static int ah_index(const struct pr_ah *ah, uint32_t lock)
{
	for (uint32_t i = 0; i < ah->n; i++)
		if (ah->lock[i] == lock)
			return (int)i;
	return -1;
}

bool pr_ah_holds(const struct pr_ah *ah, uint32_t lock)
{
	return ah_index(ah, lock) >= 0;
}

bool pr_ah_disjoint(const struct pr_ah *a, const struct pr_ah *b)
{
	for (uint32_t i = 0; i < a->n; i++) {
		int j = ah_index(b, a->lock[i]);
		if (j >= 0 && (a->mode[i] == PR_EXCL || b->mode[j] == PR_EXCL))
			return false;
	}
	return true;
}

static bool in_hist(const struct pr_ah *ah, uint32_t i, uint32_t lock)
{
	for (uint32_t k = ah->off[i]; k < ah->off[i + 1]; k++)
		if (ah->hist[k] == lock)
			return true;
	return false;
}

bool pr_ah_compatible(const struct pr_ah *a, const struct pr_ah *b)
{
	for (uint32_t i = 0; i < a->n; i++)
		for (uint32_t k = a->off[i]; k < a->off[i + 1]; k++) {
			int j = ah_index(b, a->hist[k]);
			if (j >= 0 && in_hist(b, (uint32_t)j, a->lock[i]))
				return false;
		}
	return true;
}
