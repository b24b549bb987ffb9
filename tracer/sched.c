/*
 * The record scheduling policy (also replay's after "free", and the last
 * resort of exploration): which thread runs next, and when a running
 * thread's turn ends.  The loop (loop.c) asks; this file decides.
 *
 * Turns.  The current thread keeps running while it can and its turn
 * lasts; then the next thread in logical-id order (round robin) runs.  A
 * turn ends at:
 *   - a request the model cannot commit now (a held lock, a live join);
 *   - the end of the time slice (the thread spun or computed for
 *     slice_ms with no request): it is `preempted`;
 *   - a sleeping call (nanosleep, usleep, sleep, clock_nanosleep, poll,
 *     ppoll, select, pselect, epoll_wait, epoll_pwait, sched_yield): the
 *     thread offers the CPU to the others, exactly as it would natively;
 *     it is `preempted` too, before the call even starts (no clock
 *     involved: the call is the scheduling point);
 *   - a process exit (exit(), _exit(), return from main): the others get
 *     their turn before the process ends, as they may natively (the
 *     exit's event is emitted at exit_group, after atexit handlers); once
 *     exit_group is seen nothing else is committed (loop.c: drain);
 *   - a sleep in the kernel: the thread is set aside (a kernel wait) and
 *     becomes a last resort.
 *
 * Fairness.  Threads that can only proceed as a last resort (asleep in a
 * timed or unmodelled kernel wait, a timed lock of a held lock) get a turn
 * when nothing else can run, or when every thread that can has used its
 * turn (all `preempted`): one of them may be what the others wait for.
 * Picking a last resort starts a new round: the preempted flags of the
 * runnable threads are cleared, so each gets a turn again before the next
 * last resort.  (They used to stay set until the thread itself was next
 * committed, which never happened: every later pick went to the last
 * resorts, and a compute-bound thread beside a sleeping one starved for
 * ever.)  So every runnable thread runs within one round: a round is at
 * most one slice per runnable thread plus one turn per last resort.
 */
#include "tracer_int.h"

bool tracer_at_exit(const struct tthread *t)
{
	return t->state == TS_REQ && t->req.hook >= 0 && hook_defs[t->req.hook].op == OP_EXIT;
}

bool sched_is_sleep_call(int hook)
{
	return hook >= 0 && hook_defs[hook].op == OP_SLEEP;
}

bool sched_others_could_run(struct tracer *tr, struct tthread *t, bool last_resorts)
{
	for (size_t i = 0; i < tr->nthr; i++) {
		struct tthread *o = tr->thr[i];
		int c = 0;
		if (!o || o == t || o->state == TS_DEAD || o->state == TS_NEW)
			continue;
		if (o->state == TS_READY)
			c = 1;
		else if (o->state == TS_REQ)
			c = model_can_commit(tr, o);
		else if (o->state == TS_KWAIT)
			c = model_can_wake(tr, o);
		if (c == 1 || (c == 2 && last_resorts))
			return true;
	}
	return false;
}

int tracer_pick_round_robin(struct tracer *tr, struct tthread **run, size_t nrun,
			    struct tthread **last, size_t nlast, bool *use_last)
{
	bool all_used = nrun > 0;
	for (size_t i = 0; i < nrun; i++)
		if (!run[i]->preempted)
			all_used = false;
	bool from_last = !nrun || (all_used && nlast);
	struct tthread **set = from_last ? last : run;
	size_t n = from_last ? nlast : nrun;
	*use_last = from_last;
	if (from_last) /* a new round: every runnable thread gets a turn again */
		for (size_t i = 0; i < nrun; i++)
			run[i]->preempted = false;
	uint32_t cur = tr->current;
	size_t nthr = tr->nthr + 1, best = 0;
	uint32_t bestkey = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		if (set[i]->lid == cur && !set[i]->preempted && !from_last)
			return (int)i;
		/* distance after the current thread, wrapping around; a thread
		 * that has had its turn comes after those that have not */
		uint32_t key = (uint32_t)((set[i]->lid + nthr - (cur == UINT32_MAX ? 0 : cur + 1)) % nthr);
		if (!from_last && set[i]->preempted)
			key += (uint32_t)nthr;
		if (key < bestkey) {
			bestkey = key;
			best = i;
		}
	}
	return (int)best;
}
