/*
 * The replay scheduling policy.
 *
 * A schedule is a list of steps "run T n" followed, optionally, by "free".
 * While steps remain, the thread a step names is the only one picked, for
 * exactly n events; every event it emits is compared with the event the
 * recording has at the same per-thread index (kind, site, object).  The
 * first mismatch is a divergence: the schedule is INFEASIBLE.  So is a
 * step whose thread cannot run at all (it waits for a lock another thread
 * holds, a condition nobody signalled, a thread that does not exist yet)
 * and a thread that runs past the timeout without reaching its event
 * (it spins on a flag that only another thread sets, or sleeps in the
 * kernel on something we do not model).
 *
 * When the scheduled thread cannot proceed, the other threads that stopped
 * after an event but before their next request (a parent right after a
 * create) are first run up to that request: that runs no event of theirs,
 * and only then can "everybody blocked" (DEADLOCK: the tracer reports it)
 * be told from "the schedule asks the impossible" (INFEASIBLE).  Should
 * such a thread emit an event on the way, the schedule cannot be followed.
 *
 * After "free" (or when the steps end), every thread may run: the current
 * one keeps running until it blocks or its time slice ends, then the next
 * in logical-id order, exactly like recording.  Events are no longer
 * compared; the run is judged by how it ends.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay_int.h"
#include "trace/log.h"

void policy_infeasible(struct replay *rp, const char *fmt, ...)
{
	va_list ap;
	if (rp->stop)
		return;
	rp->stop = true;
	rp->outcome = RO_INFEASIBLE;
	va_start(ap, fmt);
	vsnprintf(rp->reason, sizeof rp->reason, fmt, ap);
	va_end(ap);
}

/* Skips finished steps; false when none is left. */
static bool current_step(struct replay *rp)
{
	while (rp->step < rp->sched->nsteps && rp->left == 0) {
		rp->step++;
		if (rp->step < rp->sched->nsteps)
			rp->left = rp->sched->steps[rp->step].count;
	}
	if (rp->step >= rp->sched->nsteps)
		rp->in_free = true;
	return !rp->in_free;
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Are x and y in the one heap block the recording's newest allocation
 * before event seq gave out (and covers x)? */
static const struct avt_alloc_rec *block_of(const struct avt_alloc_rec *al, size_t n,
					     uint64_t seq, uint64_t x)
{
	const struct avt_alloc_rec *best = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct avt_alloc_rec *a = &al[i];
		if (a->after_seq > seq)
			break;
		if (a->kind != AVT_ALLOC_FREE && a->size && x - a->addr < a->size)
			best = a;
	}
	return best;
}

/* The allocations thread u made before a (a's number among them). */
static size_t nth_of(const struct avt_alloc_rec *al, const struct avt_alloc_rec *a)
{
	size_t k = 0;
	for (const struct avt_alloc_rec *p = al; p < a; p++)
		k += p->thread == a->thread && p->kind != AVT_ALLOC_FREE;
	return k;
}

/* Is y (this run) where x (the recording, at event seq) is: in the same
 * heap block, or at the same offset of the block the same thread's same
 * allocation gave it in this run (malloc hands a thread another arena
 * when the thread whose arena it got in the recording is still alive)? */
static bool same_block(const struct replay *rp, uint64_t seq, uint64_t x, uint64_t y)
{
	const struct trace *t = rp->trace;
	const struct avt_alloc_rec *a = t ? block_of(t->allocs, t->nallocs, seq, x) : NULL;
	if (!a)
		return false;
	if (y - a->addr < a->size)
		return true;
	size_t k = nth_of(t->allocs, a);
	for (size_t i = 0; i < rp->nallocs; i++) {
		const struct avt_alloc_rec *b = &rp->allocs[i];
		if (b->thread != a->thread || b->kind == AVT_ALLOC_FREE)
			continue;
		if (k-- == 0)
			return b->size == a->size && y - b->addr == x - a->addr;
	}
	return false;
}

/*
 * b (this run) is a's (the recording's) event.  An access at the same
 * instruction, of the same kind and size, to another address inside the
 * same heap block is: its element was computed from a value another
 * thread's order changed (items_[h] after a racy read of h, the very
 * interleaving a prediction forces), and the thread goes on at the same
 * instructions; a different path shows at its next site.  So is one at the
 * same offset of the block the thread's same allocation got in this run
 * (cxx_account: a client's private history vector in another arena).
 */
static bool same_event(const struct replay *rp, const struct avt_event *a,
		       const struct avt_event *b)
{
	if (a->kind != b->kind || a->thread != b->thread)
		return false;
	if (a->kind == AVT_EV_START || a->kind == AVT_EV_EXIT)
		return true; /* no site; an exit code is behaviour, not order */
	if (a->site_mod != b->site_mod || a->site_off != b->site_off)
		return false;
	if (a->obj != b->obj)
		return avt_kind_is_access(a->kind) && (a->flags & AVT_F_ACCESS_BPT) &&
		       a->size == b->size && same_block(rp, a->seq, a->obj, b->obj);
	return a->kind != AVT_EV_WAIT || a->obj2 == b->obj2;
}

int policy_event(void *ctx, struct tracer *tr, const struct avt_event *ev)
{
	struct replay *rp = ctx;
	/* the run is judged already (a divergence): what the agent did past
	 * it in-process, drained at the next stop, or a crash after it, is
	 * not part of it, as on the ptrace path, which stops at once */
	if (rp->stop)
		return -1;
	if (rp->opts.picker)
		rp->opts.picker->event(rp->opts.picker->ctx, ev);
	if (rp->nev == rp->evcap) {
		size_t ncap = rp->evcap ? rp->evcap * 2 : 1024;
		struct avt_event *n = realloc(rp->ev, ncap * sizeof *n);
		if (!n)
			return -1;
		rp->ev = n;
		rp->evcap = ncap;
	}
	rp->ev[rp->nev++] = *ev;
	if (rp->advancing && ev->kind != AVT_EV_FATAL_SIGNAL) {
		rp->has_div = true;
		rp->actual = *ev;
		memset(&rp->expected, 0, sizeof rp->expected);
		policy_infeasible(rp, "step %zu (run T%u %u): T%u cannot proceed, and T%u, run up to its next request, did an event first",
				  rp->step + 1, rp->sched->steps[rp->step].thread,
				  rp->sched->steps[rp->step].count, rp->sched->steps[rp->step].thread, ev->thread);
		return -1;
	}
	if (ev->kind == AVT_EV_FATAL_SIGNAL) {
		rp->fatal_sig = ev->size;
		rp->fatal_thread = ev->thread;
		/* with --gdb, stop before the signal is delivered */
		return rp->opts.gdb ? -1 : 0;
	}
	if (rp->in_free || !current_step(rp))
		return 0;
	/* an event ends a yield step: the thread got further than it did
	 * where the schedule was made; the event must fit the next step */
	while (rp->sched->steps[rp->step].kind == SCHED_YIELD) {
		rp->left = 0;
		if (!current_step(rp))
			return 0;
	}
	const struct sched_step *st = &rp->sched->steps[rp->step];
	const struct avt_event *exp = ev->thread < rp->nthreads && ev->tindex < rp->ntexp[ev->thread] ?
		rp->texp[ev->thread][ev->tindex] : NULL;
	if (ev->thread != st->thread || !exp || !same_event(rp, exp, ev)) {
		rp->has_div = true;
		rp->actual = *ev;
		if (exp)
			rp->expected = *exp;
		else
			memset(&rp->expected, 0, sizeof rp->expected);
		policy_infeasible(rp, "step %zu (run T%u %u): T%u's event %u differs from the recording",
				  rp->step + 1, st->thread, st->count, ev->thread, ev->tindex);
		return -1;
	}
	rp->left--;
	return 0;
}

/* ---- asynchronous signals (tracer/signals.c)
 *
 * While a schedule is followed, the signals the recording delivered to a
 * handler are delivered where it did: the kernel's own (a timer's, at a
 * time of the clock's) are dropped, and when the schedule next picks
 * thread T after it made as many events as it had when the recording
 * delivered signal S, S is raised to T and delivered before anything
 * else T does.  Under a picker, and after the schedule, signals come as
 * they come; the run notes where (its trace: a failing explored run is
 * replayed to confirm it). */

static bool holds_signals(const struct replay *rp)
{
	return !rp->opts.picker && !rp->in_free && rp->sig_state;
}

static void note_signal(struct replay *rp, const struct tthread *t, int sig)
{
	struct avt_signal_rec *n = realloc(rp->sigs, (rp->nsigs + 1) * sizeof *n);
	if (!n)
		return;
	rp->sigs = n;
	rp->sigs[rp->nsigs++] = (struct avt_signal_rec){ .after_seq = rp->nev, .thread = t->lid,
							 .tindex = t->nevents, .signo = (uint16_t)sig };
}

bool policy_signal(void *ctx, struct tracer *tr, const struct tthread *t, int sig, bool raised)
{
	struct replay *rp = ctx;
	(void)tr;
	if (holds_signals(rp)) {
		const struct avt_signal_rec *r = rp->trace->signals;
		size_t i = rp->sig_lo;
		while (i < rp->trace->nsignals &&
		       !(rp->sig_state[i] == 1 && r[i].thread == t->lid && r[i].signo == sig))
			i++;
		if (!raised || i == rp->trace->nsignals)
			return false; /* the kernel's, or not (yet) where recorded */
		rp->sig_state[i] = 2;
		while (rp->sig_lo < rp->trace->nsignals && rp->sig_state[rp->sig_lo] == 2)
			rp->sig_lo++;
	}
	note_signal(rp, t, sig);
	return true;
}

/* t, the schedule's thread, stands at its next scheduling point: the
 * signals the recording delivered to it before its next event are raised
 * now (once each), and come before that event.  Not at the commit of the
 * event before them: the resume after a commit delivered them before the
 * instruction the event stands for (a handler that locks, run before the
 * unlock it follows, waited for itself; one run before a read of a flag
 * left the thread asleep in pause() where the recording read it again). */
static void raise_due(struct replay *rp, struct tracer *tr, struct tthread *t)
{
	if (!holds_signals(rp))
		return;
	const struct avt_signal_rec *r = rp->trace->signals;
	for (size_t i = rp->sig_lo; i < rp->trace->nsignals; i++)
		if (!rp->sig_state[i] && r[i].thread == t->lid && r[i].tindex <= t->nevents) {
			rp->sig_state[i] = 1;
			if (tracer_raise_signal(tr, t, r[i].signo) < 0)
				avt_debug("cannot raise SIG%d in T%u", r[i].signo, t->lid);
		}
}

/* Events t may make in-process before its next recorded signal: the
 * event before the signal is a stop, and so is the scheduling point after
 * it (where raise_due raises the signal). */
static uint64_t before_signal(const struct replay *rp, const struct tthread *t)
{
	uint64_t n = UINT64_MAX;
	if (!holds_signals(rp))
		return n;
	const struct avt_signal_rec *r = rp->trace->signals;
	for (size_t i = rp->sig_lo; i < rp->trace->nsignals; i++)
		if (rp->sig_state[i] < 2 && r[i].thread == t->lid) {
			uint64_t c = r[i].tindex > t->nevents ? r[i].tindex - t->nevents - 1 : 0;
			n = c < n ? c : n;
		}
	return n;
}

static void no_event(struct replay *rp, uint32_t lid, const char *why)
{
	rp->has_div = true;
	rp->actual_missing = true;
	struct tthread *t = tracer_thread(rp->tr, lid);
	uint32_t idx = t ? t->nevents : 0;
	if (lid < rp->nthreads && idx < rp->ntexp[lid])
		rp->expected = *rp->texp[lid][idx];
	policy_infeasible(rp, "step %zu (run T%u %u): T%u %s", rp->step + 1,
			  rp->sched->steps[rp->step].thread, rp->sched->steps[rp->step].count, lid, why);
}

static int find(struct tthread **set, size_t n, uint32_t lid)
{
	for (size_t i = 0; i < n; i++)
		if (set[i]->lid == lid)
			return (int)i;
	return -1;
}

/* A thread busy this long with no event (its time on a CPU, for long
 * runs: tracer/loop.c) gives way as a spinner does, even when its
 * registers change (a spin with a backoff counter, or a long
 * computation: the others need not wait for it to end).  CPU time, not
 * wall time: the same on a loaded machine. */
#define SPIN_IDLE_NS 200000000ull

/* Does t, whose turn is used, give way to lower priorities?  When it
 * offers the CPU (a sleeping call, sched_yield) or spins; a thread that
 * computes through its slices keeps its priority (see sched.c). */
static bool gives_way(const struct replay *rp, const struct tthread *t)
{
	(void)rp;
	return tracer_at_sleep(t) || t->spinning || (t->sliced && t->idle_ns >= SPIN_IDLE_NS);
}

/* t's turn ended by the clock while it computes: running it again is no
 * decision (the clock's), so it is neither noted nor counted in a yield
 * step; the picker would pick it again anyway (it keeps its priority). */
static bool computing(const struct replay *rp, const struct tthread *t)
{
	return t->sliced && t->state == TS_READY && !gives_way(rp, t);
}

/* Exploration: the picker chooses among the threads that can run; a
 * thread that spun through its slice is reported to it first (it may wait
 * for a lower-priority thread).  When nothing can run, or every thread
 * that can has just spun, the record policy decides, with its last
 * resorts (threads asleep in unmodelled kernel waits). */
static int pick_explore(struct replay *rp, struct tracer *tr, struct tthread **run, size_t nrun,
			struct tthread **last, size_t nlast, bool *use_last)
{
	const struct replay_picker *pk = rp->opts.picker;
	if (rp->opts.run_timeout_s > 0 && mono_now() - rp->t0 > rp->opts.run_timeout_s) {
		policy_infeasible(rp, "run timed out after %.1f s", rp->opts.run_timeout_s);
		return -1;
	}
	uint32_t cur = tracer_current(tr);
	struct tthread *ct = cur == UINT32_MAX ? NULL : tracer_thread(tr, cur);
	if (ct && ct->state != TS_DEAD && ct->preempted && gives_way(rp, ct)) {
		if (ct->spinning && pk->spun)
			pk->spun(pk->ctx, cur);
		pk->yield(pk->ctx, cur);
	}
	/* its turn ended asleep in the kernel (a barrier or condition wait the
	 * model thinks over, but glibc's insides still wait on the others:
	 * a barrier's next round before the last one has left): picking it
	 * again only wakes it to sleep; the others must run */
	else if (ct && ct->state == TS_KWAIT)
		pk->yield(pk->ctx, cur);
	/* a process exit gives way to every other thread: the workers main
	 * did not join run before it ends them (they may, natively) */
	for (size_t i = 0; i < nrun && pk->drop; i++)
		if (tracer_at_exit(run[i]) && !run[i]->req.offered) {
			run[i]->req.offered = true;
			pk->drop(pk->ctx, run[i]->lid);
		}
	uint32_t lids[64];
	size_t idx[64], n = 0;
	bool all_spun = true, all_gave = true, sleepers = nlast > 0;
	for (size_t i = 0; i < nrun && n < 64; i++) {
		lids[n] = run[i]->lid;
		idx[n++] = i;
		all_spun &= run[i]->preempted;
		all_gave &= run[i]->preempted && gives_way(rp, run[i]);
	}
	/* last resorts that only sleep (nanosleep, poll, ...) wait until the
	 * others give way; one in an unmodelled kernel wait may be what the
	 * others need (glibc's internal locks), so any used turn lets it run */
	for (size_t i = 0; i < nlast; i++)
		sleepers &= last[i]->state == TS_KWAIT && last[i]->wait == TW_SLEEP;
	if (sleepers)
		all_spun = all_gave;
	rp->pk_chose = false;
	if (!n || (all_spun && nlast))
		return tracer_pick_round_robin(tr, run, nrun, last, nlast, use_last);
	*use_last = false;
	rp->pk_chose = true;
	return (int)idx[pk->pick(pk->ctx, lids, n)];
}

/* Under a picker: remembers the turns that made no event before another
 * thread was picked, so the run's schedule can say "yield T n" there
 * (explore.c writes it; a spin barrier's arrival is such a turn). */
static void note_pick(struct replay *rp, uint32_t lid, bool cont)
{
	uint32_t of;
	uint32_t n = yields_pick(&rp->yl, lid, cont, rp->nev, &of);
	if (!n)
		return;
	if (rp->nmarks == rp->markcap) {
		size_t ncap = rp->markcap ? rp->markcap * 2 : 64;
		struct replay_mark *m = realloc(rp->marks, ncap * sizeof *m);
		if (!m) {
			policy_infeasible(rp, "out of memory");
			return;
		}
		rp->marks = m;
		rp->markcap = ncap;
	}
	rp->marks[rp->nmarks++] = (struct replay_mark){ rp->nev, of, n };
}

/* A yield step: its thread runs on to its next scheduling point, once
 * per point; a thread that cannot (blocked, gone) is as far as it gets,
 * and so is one that stands at a request with an event: it is at its
 * next point already.  (Where the run stopped it short of that request,
 * an agent's script ended after its last event, the turn that took it
 * there made no event; run again here, it made that event, out of turn:
 * "T0's event 43 differs from the recording".) */
static int pick_yield(struct replay *rp, uint32_t lid, struct tthread **run, size_t nrun,
		      struct tthread **last, size_t nlast, bool *use_last)
{
	int i = find(run, nrun, lid);
	*use_last = false;
	if (i < 0 && (i = find(last, nlast, lid)) >= 0)
		*use_last = true;
	const struct tthread *t = i >= 0 ? (*use_last ? last : run)[i] : NULL;
	if (t && t->state == TS_REQ && t->req.kind != AVT_EV_NONE) {
		rp->left = 0;
		return -1;
	}
	if (i >= 0 && !computing(rp, (*use_last ? last : run)[i]))
		rp->left--;
	else
		rp->left = 0;
	return i;
}

int policy_pick(void *ctx, struct tracer *tr, struct tthread **run, size_t nrun,
		struct tthread **last, size_t nlast, bool *use_last)
{
	struct replay *rp = ctx;
	rp->advancing = false;
	if (rp->stop)
		return -1;
	if (rp->opts.run_timeout_s > 0 && mono_now() - rp->t0 > rp->opts.run_timeout_s) {
		policy_infeasible(rp, "run timed out after %.1f s", rp->opts.run_timeout_s);
		return -1;
	}
	if (rp->opts.picker) {
		struct tthread *pt = rp->yl.last == UINT32_MAX ? NULL : tracer_thread(tr, rp->yl.last);
		bool cont = pt && computing(rp, pt);
		int i = pick_explore(rp, tr, run, nrun, last, nlast, use_last);
		if (i >= 0)
			note_pick(rp, (*use_last ? last : run)[i]->lid, cont);
		return i;
	}
	while (current_step(rp) && rp->sched->steps[rp->step].kind == SCHED_YIELD) {
		int i = pick_yield(rp, rp->sched->steps[rp->step].thread, run, nrun, last, nlast,
				   use_last);
		if (i >= 0)
			return i;
	}
	if (!current_step(rp)) {
		if (rp->opts.gdb) /* --gdb: stop where the schedule ends */
			return -1;
		return tracer_pick_round_robin(tr, run, nrun, last, nlast, use_last);
	}
	uint32_t lid = rp->sched->steps[rp->step].thread;
	struct tthread *t = tracer_thread(tr, lid);
	if (!t || t->state == TS_DEAD) {
		no_event(rp, lid, t ? "has exited" : "does not exist (not created yet)");
		return -1;
	}
	raise_due(rp, tr, t);
	uint64_t timeout_ns = (uint64_t)(rp->opts.timeout_s * 1e9);
	if (t->idle_ns > timeout_ns) {
		char why[128];
		snprintf(why, sizeof why, "did not reach its next event within %.1f s (stuck: spinning or waiting on something unrecorded)",
			 rp->opts.timeout_s);
		no_event(rp, lid, why);
		return -1;
	}
	int i = find(run, nrun, lid);
	if (i >= 0) {
		*use_last = false;
		return i;
	}
	i = find(last, nlast, lid);
	if (i >= 0) {
		/* The scheduled thread sleeps in a kernel wait the model does not
		 * explain.  It may wait for another sleeper: glibc's condition
		 * variables make a signaller wait until interrupted waiters drop
		 * their group references (__g_refs), which they do only when they
		 * run.  The recording's last resorts let them; so every other turn
		 * goes to the other sleepers in order.  One that reaches an event
		 * out of turn is a divergence, as it would be anyway.  But a call
		 * with a timeout ends by itself (and one seen asleep may have
		 * ended before its stop): the others' turns would only let their
		 * own timed waits run out out of turn (a correct program's
		 * recorded order replayed INFEASIBLE: fidelity_waits).  Each step
		 * gives its own thread the first turn: set aside in a read that
		 * has its data by now, it goes on at once, before another
		 * sleeper's timeout runs out out of turn. */
		*use_last = true;
		if (rp->asleep_step != rp->step + 1) {
			rp->asleep_step = rp->step + 1;
			rp->asleep_turns = 0;
		}
		if (nlast > 1 && !tracer_wait_ends_alone(last[i]) && rp->asleep_turns++ % 2) {
			size_t k = (rp->asleep_turns / 2) % (nlast - 1);
			return (int)(k < (size_t)i ? k : k + 1);
		}
		return i;
	}
	for (size_t k = 0; k < nrun; k++)
		if (run[k]->state == TS_READY && run[k]->started && !run[k]->preempted) {
			rp->advancing = true;
			*use_last = false;
			return (int)k;
		}
	uint64_t obj;
	uint32_t holder;
	const char *what = tracer_blocked_on(tr, t, &obj, &holder);
	char why[512], name[256];
	if (what)
		rp_obj_name(rp, what, obj, name, sizeof name);
	if (what && holder != UINT32_MAX)
		snprintf(why, sizeof why, "cannot proceed: it waits for %s %s held by T%u", what, name,
			 holder);
	else if (what)
		snprintf(why, sizeof why, "cannot proceed: it waits for %s %s", what, name);
	else
		snprintf(why, sizeof why, "cannot proceed");
	no_event(rp, lid, why);
	return -1;
}

/* How many events t may do in-process (the agent's fast path) before the
 * policy looks again: the rest of its step under a schedule; under a
 * picker, what it says the thread it chose would be given anyway (none
 * for a last resort); none while other threads are run up to their
 * requests; no limit after "free" (the record policy). */
uint64_t policy_allow(void *ctx, struct tracer *tr, const struct tthread *t)
{
	struct replay *rp = ctx;
	if (rp->stop || rp->advancing)
		return 0;
	if (rp->opts.picker) {
		const struct replay_picker *pk = rp->opts.picker;
		if (!pk->budget || !rp->pk_chose || t->lid != rp->yl.last)
			return 0;
		struct tracer_expect ev[256]; /* AVT_AGENT_MAX_EXPECT */
		struct tracer_view v;
		bool view = tracer_pick_view(tr, t, &v) > 0;
		size_t n = pk->budget(pk->ctx, t->lid, view ? &v : NULL, ev, sizeof ev / sizeof ev[0]);
		return n ? tracer_agent_expect(tr, ev, n) : 0;
	}
	if (!current_step(rp))
		return rp->opts.gdb ? 0 : UINT64_MAX;
	const struct sched_step *st = &rp->sched->steps[rp->step];
	if (st->kind != SCHED_RUN || st->thread != t->lid)
		return 0;
	uint64_t sig = before_signal(rp, t);
	return sig < rp->left ? sig : rp->left;
}
