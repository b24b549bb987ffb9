/*
 * predict_run(): model, detectors, schedule synthesis, ranking (predict.h).
 *
 * Candidates are synthesized cheapest first and synthesis stops at
 * max_predictions successes (at least PREDICT_DEFAULT_MAX, of which the
 * max_predictions best ranked are kept): a candidate whose schedule cannot be built
 * (its cut is unreachable under the recorded dependencies and replay's
 * lock rule) is dropped, which is the feasibility filter.  A global budget
 * of scheduled events bounds the time spent on long prefixes.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "avfilter.h"
#include "deadlock.h"
#include "model.h"
#include "pattern.h"
#include "order.h"
#include "pecan.h"
#include "penelope.h"
#include "predict.h"
#include "rank.h"
#include "sidetrack.h"
#include "synth.h"
#include "trace/log.h"
#include "trace/scope.h"

#define SYNTH_BUDGET 50000000ull /* events scheduled over all predictions */

volatile sig_atomic_t pr_stop_sig;

void predict_interrupt(int sig)
{
	pr_stop_sig = sig;
}

int predict_interrupted(void)
{
	return pr_stop_sig;
}

/* AVTRACE_PREDICT_STALL (a testing aid, docs/predict.md): after its first
 * prediction, synthesis waits until predict_interrupt(), as a prediction
 * that never ends would: the e2e tests stop it with a signal. */
static void stall_if_asked(void)
{
	static int asked = -1;
	if (asked < 0)
		asked = getenv("AVTRACE_PREDICT_STALL") != NULL;
	if (!asked)
		return;
	avt_info("avtrace: prediction stalled (AVTRACE_PREDICT_STALL) until a signal");
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	while (!pr_stopped())
		nanosleep(&tick, NULL);
}

/* "module+0xOFF" (the module file's base name), or "0xADDR". */
static const char *site_name(const struct trace *t, uint16_t mod, uint64_t off, char *buf,
			     size_t len)
{
	const struct avt_module *m = mod == AVT_MOD_NONE ? NULL : trace_module(t, mod);
	if (mod == AVT_MOD_NONE)
		snprintf(buf, len, "0x%" PRIx64, off);
	else if (!m || !m->path)
		snprintf(buf, len, "module%u+0x%" PRIx64, mod, off);
	else {
		const char *base = strrchr(m->path, '/');
		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : m->path, off);
	}
	return buf;
}

static const char *ev_site(const struct trace *t, const struct avt_event *e, char *buf,
			   size_t len)
{
	return site_name(t, e->site_mod, e->site_off, buf, len);
}

/* A malloc'ed printf. */
static char *fmt(const char *f, ...) AVT_PRINTF(1, 2);
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static const char *verb(const struct avt_event *e)
{
	switch (e->kind) {
	case AVT_EV_RD_ACQUIRE:
		return "read-locks";
	case AVT_EV_WR_ACQUIRE:
		return "write-locks";
	default:
		return "acquires";
	}
}

static char *summary_sidetrack(const struct trace *t, const struct prediction *p,
			       const struct avt_event *e[3])
{
	static const char *const when[] = { "before-window", "ran before that window",
					    "in-window", "ran inside it",
					    "after-window", "ran after it" };
	char s1[128], s2[128], s3[128], f[160];
	const char *how = "";
	for (unsigned i = 0; i < 6; i += 2)
		if (!strcmp(p->pattern, when[i]))
			how = when[i + 1];
	if (p->nblame) {
		char b[128];
		snprintf(f, sizeof f, "in one call of the function at %s",
			 site_name(t, p->blame[0].mod, p->blame[0].off, b, sizeof b));
	} else {
		snprintf(f, sizeof f, "in one transaction");
	}
	return fmt("T%u takes lock 0x%" PRIx64 " at %s and again at %s %s; T%u's critical "
		   "section on it from %s can run in between (it %s in the recorded run)",
		   e[0]->thread, e[0]->obj, ev_site(t, e[0], s1, sizeof s1),
		   ev_site(t, e[2], s3, sizeof s3), f, e[1]->thread, ev_site(t, e[1], s2, sizeof s2),
		   how);
}

static char *summary_penelope(const struct trace *t, const struct prediction *p)
{
	const struct avt_event *e1 = &t->ev[p->events[0]], *f = &t->ev[p->events[1]],
			       *e2 = &t->ev[p->events[2]];
	char s1[128], s2[128], s3[128], w[160];
	if (p->nblame) {
		char b[128];
		snprintf(w, sizeof w, "in one call of the function at %s",
			 site_name(t, p->blame[0].mod, p->blame[0].off, b, sizeof b));
	} else {
		snprintf(w, sizeof w, "in one transaction");
	}
	return fmt("T%u %s 0x%" PRIx64 " at %s and %s it at %s %s; T%u's %s at %s can run in "
		   "between (%s: not serializable; it ran %s that window in the recorded run)",
		   e1->thread, avt_kind_writes(e1->kind) ? "writes" : "reads", e1->obj,
		   ev_site(t, e1, s1, sizeof s1), avt_kind_writes(e2->kind) ? "writes" : "reads",
		   ev_site(t, e2, s3, sizeof s3), w, f->thread,
		   avt_kind_writes(f->kind) ? "write" : "read", ev_site(t, f, s2, sizeof s2),
		   p->pattern, f->seq < e1->seq ? "before" : "after");
}

/* "T1's read of 0x... at SITE can take its value from T3's write at SITE
 * (their sections on a common lock ran the other way)". */
static char *summary_order(const struct trace *t, const struct prediction *p)
{
	const struct avt_event *w = &t->ev[p->events[0]], *r = &t->ev[p->events[1]];
	char a[128], b[128];
	return fmt("T%u's read of 0x%" PRIx64 " at %s can take its value from T%u's write at %s "
		   "(their critical sections ran the other way round in the recorded run)",
		   r->thread, r->obj, ev_site(t, r, a, sizeof a), w->thread, ev_site(t, w, b, sizeof b));
}

static char *summary_pecan(const struct trace *t, const struct prediction *p)
{
	char *s = fmt("pattern %s:", p->pattern);
	for (unsigned i = 0; s && i < p->nevents; i++) {
		const struct avt_event *e = &t->ev[p->events[i]];
		char b[128];
		char *n = fmt("%s%s T%u %s 0x%" PRIx64 " at %s", s, i ? "," : "", e->thread,
			      avt_kind_writes(e->kind) ? "writes" : "reads", e->obj,
			      ev_site(t, e, b, sizeof b));
		free(s);
		s = n;
	}
	char *n = s ? fmt("%s, in this order (the recorded run had another; the last event "
			  "waits, the one before it runs on)", s) : NULL;
	free(s);
	return n;
}

static char *summary_deadlock(const struct trace *t, const struct prediction *p)
{
	unsigned k = p->nthreads;
	char *s = fmt("lock-order cycle of %u threads:", k);
	for (unsigned i = 0; s && i < k; i++) {
		const struct avt_event *h = &t->ev[p->events[i]], *r = &t->ev[p->events[k + i]];
		char a[128], b[128];
		char *n = fmt("%s%s T%u holds 0x%" PRIx64 " (taken at %s) and requests 0x%" PRIx64
			      " at %s", s, i ? ";" : "", h->thread, h->obj,
			      ev_site(t, h, a, sizeof a), r->obj, ev_site(t, r, b, sizeof b));
		free(s);
		s = n;
	}
	return s;
}

/* The schedule's first comment: "N: detector pattern — T1 ... at ...". */
static int add_comment(const struct trace *t, struct prediction *p)
{
	char d[64];
	char *c = fmt("%u: %s %s \u2014", p->id, predict_detectors(p, d, sizeof d), p->pattern);
	unsigned k = p->nthreads;
	for (unsigned i = 0; c && i < p->nevents; i++) {
		const struct avt_event *e = &t->ev[p->events[i]];
		bool request = !strcmp(p->detector, "deadlock") && i >= k;
		const char *v = request ? "requests" : avt_kind_is_access(e->kind) ?
			(avt_kind_writes(e->kind) ? "writes" : "reads") : verb(e);
		char b[128];
		char *n = fmt("%s%s T%u %s 0x%" PRIx64 " at %s", c, i ? "," : "", e->thread, v,
			      e->obj, ev_site(t, e, b, sizeof b));
		free(c);
		c = n;
	}
	int rc = c ? schedule_add_comment(p->sched, c) : -1;
	free(c);
	return rc;
}

/* The cycle starting at thread `first`: the prediction lists the thread
 * whose request ends the schedule first. */
static struct pr_cand rotated(const struct pr_cand *c, uint32_t first)
{
	struct pr_cand r = *c;
	uint32_t k = c->nthr;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t j = (i + first) % k;
		r.thr[i] = c->thr[j];
		r.ev[i] = c->ev[j];
		r.ev[k + i] = c->ev[k + j];
		r.lock[i] = c->lock[j];
	}
	return r;
}

static int fill(const struct pr_model *m, const struct pr_cand *cand, const struct pr_plan *plan,
		struct schedule *s, struct prediction *p)
{
	const struct trace *t = m->t;
	struct pr_cand rc = cand->det == PR_DET_DEADLOCK && plan->final > 0 ?
		rotated(cand, (uint32_t)plan->final) : *cand;
	const struct pr_cand *c = &rc;
	memset(p, 0, sizeof *p);
	p->detector = pr_detector_name(c->det);
	p->pattern = c->det == PR_DET_PECAN ? c->pp->name : pr_pattern_name(c->pat);
	p->detectors[0] = p->detector;
	p->ndetectors = 1;
	p->nthreads = c->nthr;
	memcpy(p->threads, c->thr, c->nthr * sizeof *c->thr);
	p->nevents = c->nev;
	for (uint32_t i = 0; i < c->nev; i++)
		p->events[i] = t->ev[c->ev[i]].seq;
	p->nobjs = c->nlock;
	for (uint32_t i = 0; i < c->nlock; i++)
		p->objs[i] = m->objaddr[c->lock[i]];
	if (c->det == PR_DET_PENELOPE || c->det == PR_DET_ORDER) {
		p->nobjs = 1; /* the variable */
		p->objs[0] = t->ev[c->ev[0]].obj;
	}
	if (c->det == PR_DET_PECAN) {
		p->nobjs = 0; /* the distinct variables, in order of appearance */
		for (uint32_t i = 0; i < c->nev; i++) {
			uint64_t v = t->ev[c->ev[i]].obj;
			bool seen = false;
			for (unsigned k = 0; k < p->nobjs; k++)
				seen |= p->objs[k] == v;
			if (!seen && p->nobjs < 4)
				p->objs[p->nobjs++] = v;
		}
	}
	p->nvars = p->nobjs;
	p->writes_only = c->det == PR_DET_PENELOPE || c->det == PR_DET_PECAN;
	for (uint32_t i = 0; i < c->nev; i++)
		if (t->ev[c->ev[i]].kind != AVT_EV_WRITE)
			p->writes_only = false;
	p->site_pair = c->pair;
	/* a race with a locked access is most often the program's own
	 * synchronisation (std::atomic's flag, its waiter count): tried after
	 * the races on plain data, where lost and stale values come from */
	p->locked_race = p->plain_race = false;
	if (c->det == PR_DET_PECAN && c->nev == 2 && !c->pair) {
		for (uint32_t i = 0; i < c->nev; i++)
			if (t->ev[c->ev[i]].flags & AVT_F_ATOMIC)
				p->locked_race = true;
		p->plain_race = !p->locked_race;
	}
	p->nblame = c->nblame;
	memcpy(p->blame, c->blame, c->nblame * sizeof *c->blame);
	p->sched = s;
	p->context_switches = s->nsteps ? (unsigned)s->nsteps - 1 : 0;
	p->cut_seq = plan->p0 < t->nev ? t->ev[plan->p0].seq : 0;
	if (c->det == PR_DET_SIDETRACK) {
		const struct avt_event *e[3] = { &t->ev[c->ev[0]], &t->ev[c->ev[1]],
						 &t->ev[c->ev[2]] };
		p->summary = summary_sidetrack(t, p, e);
	} else if (c->det == PR_DET_PENELOPE) {
		p->summary = summary_penelope(t, p);
	} else if (c->det == PR_DET_PECAN) {
		p->summary = summary_pecan(t, p);
	} else if (c->det == PR_DET_ORDER) {
		p->summary = summary_order(t, p);
	} else {
		p->summary = summary_deadlock(t, p);
	}
	return p->summary ? 0 : -1;
}

static int plan_and_synth(const struct pr_model *m, const struct pr_cand *c, uint64_t *budget,
			  struct pr_plan *plan, struct schedule **s, bool *kept)
{
	*s = NULL;
	*kept = true;
	if (c->det == PR_DET_PENELOPE)
		return pr_penelope_synth(m, c, budget, plan, s, kept);
	if (c->det == PR_DET_PECAN)
		return pr_pecan_synth(m, c, budget, plan, s);
	if (c->det == PR_DET_ORDER)
		return pr_order_synth(m, c, budget, plan, s);
	if (pr_plan_cand(m, c, plan) < 0)
		return 0;
	return pr_synth(m, plan, budget, s);
}

/* A penelope candidate is one of up to two variants of its bug, its
 * sibling (pr_penelope_siblings); one of them is predicted. */
struct synth {
	const struct pr_model *m;
	const struct pr_cands *cs;
	struct prediction_set *out;
	uint64_t budget;         /* events still to schedule */
	size_t *sib;             /* per candidate: its sibling, or SIZE_MAX */
	bool *done;              /* per candidate: predicted */
	const struct predict_opts *o;
};

/* Candidate i's bug is predicted: by i itself (predicted early, at its
 * sibling's turn), or by its sibling. */
static bool bug_done(const struct synth *y, size_t i)
{
	return y->done[i] || (y->sib[i] != SIZE_MAX && y->done[y->sib[i]]);
}

static int add_prediction(struct synth *y, size_t i, const struct pr_plan *plan,
			  struct schedule *s)
{
	y->done[i] = true;
	if (fill(y->m, &y->cs->c[i], plan, s, &y->out->p[y->out->n++]) < 0) {
		avt_error("cannot predict: out of memory"); /* released with the set */
		return -1;
	}
	return 0;
}

/* Candidate i's schedule s, predicted now; if some read in it would see a
 * new value, its later sibling is tried at once and stands for the bug
 * instead if its schedule keeps its reads (it is skipped when reached). */
static int take(struct synth *y, size_t i, const struct pr_plan *plan, struct schedule *s,
		bool kept)
{
	size_t j = y->sib[i];
	if (!kept && j != SIZE_MAX && j > i) {
		struct pr_plan pj;
		struct schedule *sj;
		bool kj;
		int rc = plan_and_synth(y->m, &y->cs->c[j], &y->budget, &pj, &sj, &kj);
		if (rc < 0) {
			schedule_free(s);
			return -1;
		}
		if (rc > 0 && kj) {
			schedule_free(s);
			return add_prediction(y, j, &pj, sj);
		}
		schedule_free(sj);
	}
	return add_prediction(y, i, plan, s);
}

/* Site pairs' predictions at most (docs/predict.md, PECAN, site pairs):
 * they come after every other, and a program of many racing sites must
 * not get a replay for each. */
#define PAIR_PREDICTIONS 8

/* Accesses x and y are of one site and type. */
static bool same_site(const struct avt_event *x, const struct avt_event *y)
{
	return x->kind == y->kind && x->site_mod == y->site_mod && x->site_off == y->site_off;
}

/* A site pair's race c (ev[0] of one thread before ev[1] of another) is
 * in a prediction made already: that one has accesses of the same sites
 * and types by two threads in that order, so its schedule runs them the
 * same way round. */
static bool pair_covered(const struct trace *t, const struct prediction_set *s,
			 const struct pr_cand *c)
{
	const struct avt_event *b = &t->ev[c->ev[0]], *a = &t->ev[c->ev[1]];
	for (size_t k = 0; k < s->n; k++) {
		const struct prediction *p = &s->p[k];
		for (unsigned i = 0; i < p->nevents; i++)
			for (unsigned j = i + 1; j < p->nevents; j++) {
				const struct avt_event *x = &t->ev[p->events[i]], *y = &t->ev[p->events[j]];
				if (avt_kind_is_access(x->kind) && x->thread != y->thread &&
				    same_site(x, b) && same_site(y, a))
					return true;
			}
	}
	return false;
}

/*
 * An atomicity candidate (SideTrack's window, PENELOPE's or PECAN's
 * pattern) whose every event lies in code outside the recording's scope:
 * a system library's critical sections, whose accesses are no events
 * (docs/memory-access.md).  Reordering them is a guess about data the
 * trace never saw, and the library's next branch follows the data, not
 * the guess: GLib's thread-pool test, a SideTrack window on the pool
 * queue's GMutex inside libglib, whose replay met T1 at another lock than
 * recorded (INFEASIBLE).  Deadlocks and orders are still predicted there:
 * they need no data.  Events in the user's code (a GMutex locked by the
 * program itself: its call's site is the program's) keep the candidate.
 */
static bool outside_scope(const struct synth *y, const struct pr_cand *c)
{
	const struct predict_opts *o = y->o;
	if (!o || !o->scope_known || !c->nev)
		return false;
	if (c->det != PR_DET_SIDETRACK && c->det != PR_DET_PENELOPE && c->det != PR_DET_PECAN)
		return false;
	const struct trace *t = y->m->t;
	for (uint32_t k = 0; k < c->nev; k++) {
		const struct avt_event *e = &t->ev[c->ev[k]];
		const struct avt_module *mod =
			e->site_mod == AVT_MOD_NONE ? NULL : trace_module(t, e->site_mod);
		if (!mod || !mod->path || avt_user_code_path(mod->path, o->scope) ||
		    (o->program && !strcmp(mod->path, o->program)))
			return false;
	}
	return true;
}

/* A PECAN candidate (a race, an atomicity or atomic-set pattern) whose
 * every event is a locked update whose result nothing reads, of one
 * commutation class per variable (g_atomic_int_inc beside
 * g_atomic_int_inc: `lock addl $1`, the flags dead): any order of them
 * leaves the same values and shows none, so it is no violation, and its
 * schedule could only fail to replay (predict_opts.rmw_blind).  An
 * update whose flags are tested (`lock decl; je`: who saw zero), a fetch
 * (xadd), an exchange, a compare-and-swap or any plain access among the
 * events keeps the candidate. */
static bool commuting_updates(const struct synth *y, const struct pr_cand *c)
{
	const struct predict_opts *o = y->o;
	if (c->det != PR_DET_PECAN || c->nev < 2 || !o->rmw_blind)
		return false;
	int cls[8];
	for (uint32_t i = 0; i < c->nev; i++) {
		const struct avt_event *e = &y->m->t->ev[c->ev[i]];
		if (e->kind != AVT_EV_RMW || !(e->flags & AVT_F_ATOMIC))
			return false;
		cls[i] = o->rmw_blind(o->read_ctx, e->site_mod, e->site_off,
				      (e->flags & AVT_F_WATCHED) != 0);
		if (!cls[i])
			return false;
		for (uint32_t k = 0; k < i; k++)
			if (y->m->t->ev[c->ev[k]].obj == e->obj && cls[k] != cls[i])
				return false;
	}
	return true;
}

/* Candidate i is not to be synthesized: its bug is predicted already, it
 * lies wholly outside the user's code, it is a race of updates that
 * commute, or it is a site pair's race over the cap or another
 * prediction's. */
static bool skip(const struct synth *y, size_t i, unsigned npairs)
{
	const struct pr_cand *c = &y->cs->c[i];
	if (bug_done(y, i))
		return true;
	if (commuting_updates(y, c)) {
		avt_debug("candidate %zu (%s %s): locked updates that commute, no violation", i,
			  pr_detector_name(c->det), pr_pattern_name(c->pat));
		return true;
	}
	if (outside_scope(y, c)) {
		avt_debug("candidate %zu (%s %s): every event in code outside the scope, not predicted",
			  i, pr_detector_name(c->det), pr_pattern_name(c->pat));
		return true;
	}
	return c->pair && (npairs >= PAIR_PREDICTIONS || pair_covered(y->m->t, y->out, c));
}

/* Synthesizes candidates in order until max predictions are made. */
static int synthesize(const struct pr_model *m, const struct pr_cands *cs, unsigned max,
		      const struct predict_opts *o, struct prediction_set *out)
{
	struct synth y = { m, cs, out, SYNTH_BUDGET, NULL, NULL, o };
	int rc = -1;
	y.sib = pr_penelope_siblings(m, cs);
	y.done = calloc(cs->n ? cs->n : 1, sizeof *y.done);
	out->p = calloc(cs->n ? cs->n : 1, sizeof *out->p);
	if (!y.sib || !y.done || !out->p) {
		avt_error("cannot predict: out of memory");
		goto out;
	}
	unsigned npairs = 0;
	for (size_t i = 0; i < cs->n && out->n < max && !pr_stopped(); i++) {
		struct pr_plan plan;
		struct schedule *s;
		bool kept;
		if (skip(&y, i, npairs))
			continue;
		int src = plan_and_synth(m, &cs->c[i], &y.budget, &plan, &s, &kept);
		if (src < 0 || (src > 0 && take(&y, i, &plan, s, kept) < 0))
			goto out;
		if (src > 0) {
			npairs += cs->c[i].pair;
			if (out->n == 1)
				stall_if_asked();
			continue;
		}
		avt_debug("candidate %zu (%s %s) has no feasible schedule", i,
			  pr_detector_name(cs->c[i].det), pr_pattern_name(cs->c[i].pat));
		if (!y.budget) {
			avt_warn("schedule synthesis stopped: budget of %llu events spent",
				 (unsigned long long)SYNTH_BUDGET);
			break;
		}
	}
	rc = 0;
out:
	free(y.sib);
	free(y.done);
	return rc;
}

/* AVFilter's flagged predictions after the others (in rank order each),
 * or dropped with --filter; ids renumbered. */
static void filtered_last(struct prediction_set *s, bool drop)
{
	size_t k = 0;
	struct prediction *tmp = malloc((s->n ? s->n : 1) * sizeof *tmp);
	if (!tmp)
		return; /* the rank order stands */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->n; i++)
			if (s->p[i].filtered == (pass == 1))
				tmp[k++] = s->p[i];
	memcpy(s->p, tmp, s->n * sizeof *tmp);
	free(tmp);
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (drop && s->p[i].filtered) {
			schedule_free(s->p[i].sched);
			free(s->p[i].summary);
			free(s->p[i].filter_why);
			free(s->p[i].prefix_why);
			continue;
		}
		s->p[n] = s->p[i];
		s->p[n].id = (unsigned)(n + 1);
		n++;
	}
	s->n = n;
}

/* The predictions whose schedule changes what a read before the
 * violation sees (prefix_why: its thread may never get there) dropped,
 * counted in s->ndropped; the order stands. */
static void drop_changed_prefix(struct prediction_set *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->p[i].prefix_why) {
			avt_debug("prediction %u (%s %s) dropped: %s", s->p[i].id, s->p[i].detector,
				  s->p[i].pattern, s->p[i].prefix_why);
			schedule_free(s->p[i].sched);
			free(s->p[i].summary);
			free(s->p[i].filter_why);
			free(s->p[i].prefix_why);
			s->ndropped++;
			continue;
		}
		s->p[n++] = s->p[i];
	}
	s->n = n;
}

/* The first max predictions of s (in rank order) kept, the others freed. */
static void keep_first(struct prediction_set *s, size_t max)
{
	for (size_t i = max; i < s->n; i++) {
		schedule_free(s->p[i].sched);
		free(s->p[i].summary);
		free(s->p[i].filter_why);
		free(s->p[i].prefix_why);
	}
	if (s->n > max)
		s->n = max;
}

/* The anomaly a prediction of accesses shows: its events' kinds, sites
 * and variables, and which of them are by one thread (the pattern class:
 * penelope's RWR and pecan's atomicity-RWR on the same code are one). */
static bool same_anomaly(const struct trace *t, const struct prediction *a,
			 const struct prediction *b)
{
	/* order: the writers of one code path are different writes (variant),
	 * and its schedule is its own even where another detector's anomaly
	 * has the same write and read (explore_checker: the atomic-set
	 * prediction with them replays PASS, the order one fails) */
	if (!strcmp(a->detector, "order") || !strcmp(b->detector, "order"))
		return a->nevents == b->nevents &&
		       !memcmp(a->events, b->events, a->nevents * sizeof *a->events);
	if (a->nevents != b->nevents)
		return false;
	for (unsigned i = 0; i < a->nevents; i++) {
		const struct avt_event *x = &t->ev[a->events[i]], *y = &t->ev[b->events[i]];
		if (!avt_kind_is_access(x->kind) || x->kind != y->kind || x->obj != y->obj ||
		    x->site_mod != y->site_mod || x->site_off != y->site_off)
			return false;
		for (unsigned j = 0; j < i; j++)
			if ((t->ev[a->events[j]].thread == x->thread) !=
			    (t->ev[b->events[j]].thread == y->thread))
				return false;
	}
	return true;
}

/* One prediction per anomaly: a later one of the same anomaly is dropped
 * and its detector listed on the first (which keeps its schedule). */
static void merge_detectors(const struct trace *t, struct prediction_set *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct prediction *p = &s->p[i];
		size_t k = 0;
		while (k < n && !same_anomaly(t, &s->p[k], p))
			k++;
		if (k == n) {
			s->p[n++] = *p;
			continue;
		}
		struct prediction *q = &s->p[k];
		bool listed = false;
		for (unsigned d = 0; d < q->ndetectors; d++)
			listed |= !strcmp(q->detectors[d], p->detector);
		if (!listed && q->ndetectors < 4)
			q->detectors[q->ndetectors++] = p->detector;
		schedule_free(p->sched);
		free(p->summary);
		free(p->filter_why);
		free(p->prefix_why);
	}
	s->n = n;
}

const char *predict_detectors(const struct prediction *p, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < p->ndetectors && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "+" : "", p->detectors[i]);
	if (!p->ndetectors)
		snprintf(buf, len, "%s", p->detector);
	return buf;
}

int predict_run(const struct trace *t, const struct predict_opts *o, struct prediction_set *out)
{
	struct pr_cands cs;
	int rc = -1;
	memset(out, 0, sizeof *out);
	if (avt_verbose > 0) /* counting threads reads every event */
		avt_debug("predicting from %zu events of %u threads", t->nev, trace_nthreads(t));
	/* a hand-written lock's word becomes a lock for every detector and
	 * for synthesis: from here on t is the trace with its lock events */
	const struct trace *orig = t;
	struct pr_lockwords words;
	if (pr_lockwords_find(orig, &words, &t) < 0)
		return -1;
	struct pr_model *m = pr_model_new_steers(t, o->read_steers, o->read_ctx);
	if (!m) {
		pr_lockwords_release(&words);
		pr_lockwords_trace_free(orig, t);
		return pr_stopped() ? PREDICT_STOPPED : -1;
	}
	avt_debug("model: %u threads on %u chains, %zu clock snapshots", m->nthreads, m->nslots,
		  m->nsnap);
	pr_cands_init(&cs, m);
	if (o->sidetrack && pr_sidetrack(m, &cs, o) < 0)
		goto out;
	if (!pr_stopped() && o->deadlocks && pr_deadlock(m, &cs) < 0)
		goto out;
	if (!pr_stopped() && o->penelope && pr_penelope(m, &cs, o) < 0)
		goto out;
	/* --atomic: PECAN's regions are the named functions' calls too */
	const struct pr_patterns *pats[2] = { o->pecan ? pr_builtin_patterns() : NULL,
					      o->patterns };
	if (!pr_stopped() && (pats[0] || pats[1]) &&
	    pr_pecan_atomic(m, &cs, pats, 2, o->atomic, o->atomic_ctx) < 0)
		goto out;
	if (!pr_stopped() && o->order && pr_order(m, &cs) < 0)
		goto out;
	/* stopped while detecting: the candidates are partial (and were found
	 * on partial clocks), so none is synthesized */
	pr_cands_prerank(&cs);
	/* a smaller --max keeps the best ranked of the default number, not
	 * the first synthesized (cheapest first, by detector turns) */
	unsigned max = o->max_predictions ? o->max_predictions : PREDICT_DEFAULT_MAX;
	if (!pr_stopped() && synthesize(m, &cs, max > PREDICT_DEFAULT_MAX ? max : PREDICT_DEFAULT_MAX,
					o, out) < 0)
		goto out;
	merge_detectors(t, out);
	pr_predictions_rank(out->p, out->n);
	if (!pr_stopped() &&
	    pr_avfilter_use(m, out->p, out->n, NULL, NULL, o->read_steers, o->read_ctx) < 0)
		goto out;
	drop_changed_prefix(out);
	filtered_last(out, o->filter);
	keep_first(out, max);
	for (size_t i = 0; i < out->n; i++)
		if (add_comment(t, &out->p[i]) < 0) {
			avt_error("cannot predict: out of memory");
			goto out;
		}
	rc = pr_stopped() ? PREDICT_STOPPED : 0;
out:
	out->words = words;
	if (rc < 0)
		prediction_set_release(out);
	pr_cands_release(&cs);
	pr_model_free(m);
	pr_lockwords_trace_free(orig, t);
	return rc;
}

void prediction_set_release(struct prediction_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		schedule_free(s->p[i].sched);
		free(s->p[i].summary);
		free(s->p[i].filter_why);
		free(s->p[i].prefix_why);
	}
	free(s->p);
	s->p = NULL;
	s->n = 0;
	pr_lockwords_release(&s->words);
}
