/*
 * The recording per thread, the per-run thread view the look-ahead
 * policies share, and the dispatch of xp_policy_* to each policy
 * (policy.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"
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

void xp_put(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len == 0 || *used >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *used) {
		*used = len - 1;
		if (len >= 4)
			memcpy(buf + len - 4, "...", 4);
		return;
	}
	*used += (size_t)n;
}

/* ---- dispatch */

struct xp_policy {
	enum xp_algo algo;
	struct xp_run *pct;
	struct xp_pos *pos;
	struct xp_surw *surw;
	struct xp_guided *guided;
	/* a prediction's schedule to follow first (runs 1 .. npredicted) */
	const uint32_t *prefix;
	size_t nprefix, ppos;     /* its length, events of it followed */
	bool off;                 /* left it (or at its end) */
	long start;               /* which one, -1 none */
	/* with the prediction's pattern threads known: prefix is the pattern
	 * threads' part of the schedule (owned), the others are bystanders */
	const uint32_t *pattern;
	size_t npattern;
	uint32_t *proj;
	const struct xp_rec *rec;
	uint32_t *made;           /* events per thread in this run */
	size_t nmade;
	struct xp_rng rng;        /* the bystanders' draws: their own stream */
};

static bool in_pattern(const struct xp_policy *p, uint32_t lid)
{
	for (size_t i = 0; i < p->npattern; i++)
		if (p->pattern[i] == lid)
			return true;
	return false;
}

/* The prefix restricted to the pattern's threads; bystanders are placed
 * by follow_pick.  -1 after avt_error(). */
static int project_prefix(struct xp_policy *p, const struct xp_config *cfg, uint64_t seed,
			  uint64_t run_index)
{
	p->proj = malloc((p->nprefix ? p->nprefix : 1) * sizeof *p->proj);
	if (!p->proj) {
		avt_error("explore: out of memory");
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nprefix; i++)
		if (in_pattern(p, p->prefix[i]))
			p->proj[k++] = p->prefix[i];
	p->prefix = p->proj;
	p->nprefix = k;
	p->rec = cfg->rec;
	xp_rng_seed_run(&p->rng, seed ^ 0x62797374616e6465ull, run_index); /* "bystande" */
	return 0;
}

static uint64_t remaining(const struct xp_policy *p, uint32_t lid)
{
	size_t rec = p->rec ? xp_rec_count(p->rec, lid) : 0;
	uint32_t made = lid < p->nmade ? p->made[lid] : 0;
	return rec > made ? rec - made : 1; /* runnable: one at least */
}

static uint64_t follow_weight(const struct xp_policy *p, uint32_t lid)
{
	if (lid == p->prefix[p->ppos])
		return p->nprefix - p->ppos;
	return in_pattern(p, lid) ? 0 : remaining(p, lid);
}

/* While a pattern prefix is followed: the thread it names next, or a
 * bystander, drawn with probability proportional to what each has left
 * (the rest of the pattern's sequence for the one it names, a
 * bystander's remaining recorded events), so that every interleaving of
 * the bystanders with the pattern is equally likely.  A pattern thread
 * out of its turn waits.  n when no thread qualifies: the prefix ends. */
static size_t follow_pick(struct xp_policy *p, const uint32_t *lids, size_t n)
{
	uint64_t total = 0, r;
	for (size_t i = 0; i < n; i++)
		total += follow_weight(p, lids[i]);
	if (!total)
		return n;
	r = xp_rng_below(&p->rng, total);
	for (size_t i = 0; i < n; i++) {
		uint64_t w = follow_weight(p, lids[i]);
		if (r < w)
			return i;
		r -= w;
	}
	return n;
}

static int count_made(struct xp_policy *p, uint32_t lid)
{
	if (lid >= p->nmade) {
		size_t ncap = p->nmade ? p->nmade : 16;
		while (ncap <= lid)
			ncap *= 2;
		uint32_t *nm = realloc(p->made, ncap * sizeof *nm);
		if (!nm) {
			avt_error("explore: out of memory");
			return -1;
		}
		memset(nm + p->nmade, 0, (ncap - p->nmade) * sizeof *nm);
		p->made = nm;
		p->nmade = ncap;
	}
	p->made[lid]++;
	return 0;
}

static const char *const algo_names[] = {
	[XP_PCT] = "pct", [XP_PCTVB] = "pctvb", [XP_TB] = "tb",
	[XP_POS] = "pos", [XP_SURW] = "surw", [XP_GUIDED] = "guided",
};

const char *xp_algo_name(enum xp_algo a)
{
	return (unsigned)a < sizeof algo_names / sizeof *algo_names ? algo_names[a] : NULL;
}

int xp_algo_parse(const char *s, enum xp_algo *a)
{
	for (unsigned i = 0; i < sizeof algo_names / sizeof *algo_names; i++)
		if (!strcmp(s, algo_names[i])) {
			*a = (enum xp_algo)i;
			return 0;
		}
	return -1;
}

struct xp_policy *xp_policy_new(const struct xp_config *cfg, uint64_t seed, uint64_t run_index)
{
	struct xp_policy *p = calloc(1, sizeof *p);

	if (!p) {
		avt_error("explore: out of memory");
		return NULL;
	}
	p->algo = cfg->algo;
	p->start = -1;
	if (run_index >= 1 && run_index <= xp_guide_npredicted(cfg->guide)) {
		p->start = (long)run_index - 1;
		p->prefix = xp_guide_predicted(cfg->guide, (size_t)p->start, &p->nprefix);
		p->pattern = xp_guide_pattern(cfg->guide, (size_t)p->start, &p->npattern);
		if (p->pattern && project_prefix(p, cfg, seed, run_index) < 0) {
			free(p);
			return NULL;
		}
	}
	switch (cfg->algo) {
	case XP_PCT:
	case XP_PCTVB:
	case XP_TB:
		p->pct = xp_run_new(cfg, seed, run_index);
		if (p->pct)
			return p;
		break;
	case XP_POS:
		p->pos = xp_pos_new(cfg, seed, run_index);
		if (p->pos)
			return p;
		break;
	case XP_SURW:
		p->surw = xp_surw_new(cfg, seed, run_index);
		if (p->surw)
			return p;
		break;
	case XP_GUIDED:
		p->guided = xp_guided_new(cfg, seed, run_index);
		if (p->guided)
			return p;
		break;
	default:
		avt_error("explore: unknown algorithm %d", (int)cfg->algo);
		break;
	}
	free(p);
	return NULL;
}

void xp_policy_free(struct xp_policy *p)
{
	if (!p)
		return;
	xp_run_free(p->pct);
	xp_pos_free(p->pos);
	xp_surw_free(p->surw);
	xp_guided_free(p->guided);
	free(p->proj);
	free(p->made);
	free(p);
}

int xp_policy_event(struct xp_policy *p, const struct avt_event *ev)
{
	if (p->pattern && count_made(p, ev->thread) < 0)
		return -1;
	if (!p->off && p->ppos < p->nprefix) {
		if (p->prefix[p->ppos] == ev->thread)
			p->ppos++;
		else if (!p->pattern || in_pattern(p, ev->thread))
			p->off = true; /* off the prefix: it is over */
	}
	if (p->pct)
		return xp_run_event(p->pct, ev);
	if (p->pos)
		return xp_pos_event(p->pos, ev);
	if (p->surw)
		return xp_surw_event(p->surw, ev);
	return xp_guided_event(p->guided, ev);
}

size_t xp_policy_pick(struct xp_policy *p, const uint32_t *lids, size_t n)
{
	if (!p->off && p->ppos < p->nprefix && p->pattern) {
		size_t i = follow_pick(p, lids, n);
		if (i < n)
			return i;
		p->off = true; /* neither its thread nor a bystander can run */
	} else if (!p->off && p->ppos < p->nprefix) {
		for (size_t i = 0; i < n; i++)
			if (lids[i] == p->prefix[p->ppos])
				return i;
		p->off = true; /* its thread cannot run: the prefix ends */
	}
	if (p->pct)
		return xp_run_pick(p->pct, lids, n);
	if (p->pos)
		return xp_pos_pick(p->pos, lids, n);
	if (p->surw)
		return xp_surw_pick(p->surw, lids, n);
	return xp_guided_pick(p->guided, lids, n);
}

void xp_policy_yield(struct xp_policy *p, uint32_t lid)
{
	if (p->pct)
		xp_run_yield(p->pct, lid);
	else if (p->pos)
		xp_pos_yield(p->pos, lid);
	else if (p->surw)
		xp_surw_yield(p->surw, lid);
	else
		xp_guided_yield(p->guided, lid);
}

size_t xp_policy_budget(struct xp_policy *p, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
			uint32_t *who, bool *extras, size_t max)
{
	if (!p->off && p->ppos < p->nprefix)
		return 0; /* following a prediction's prefix: its steps decide */
	return p->surw && !p->pct && !p->pos ? xp_surw_budget(p->surw, lid, v, ev, who, extras, max) : 0;
}

uint64_t xp_policy_target(const struct xp_policy *p)
{
	return p->guided ? xp_guided_target(p->guided) : 0;
}

void xp_policy_describe(const struct xp_policy *p, char *buf, size_t len)
{
	size_t used = 0;

	if (len > 0)
		buf[0] = '\0';
	if (p->start >= 0 && p->pattern)
		xp_put(buf, len, &used, "from prediction start %ld (%zu/%zu pattern events, bystanders at random), then ",
		       p->start + 1, p->ppos, p->nprefix);
	else if (p->start >= 0)
		xp_put(buf, len, &used, "from prediction start %ld (%zu/%zu events), then ",
		       p->start + 1, p->ppos, p->nprefix);
	if (used >= len)
		return;
	buf += used;
	len -= used;
	if (p->pct)
		xp_run_describe(p->pct, buf, len);
	else if (p->pos)
		xp_pos_describe(p->pos, buf, len);
	else if (p->surw)
		xp_surw_describe(p->surw, buf, len);
	else
		xp_guided_describe(p->guided, buf, len);
}
