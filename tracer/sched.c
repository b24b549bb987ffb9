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
#include <stddef.h>
#include <string.h>

#include "ptrace_util.h"
#include "tracer_int.h"

bool tracer_at_exit(const struct tthread *t)
{
	return t->state == TS_REQ && t->req.hook >= 0 && hook_defs[t->req.hook].op == OP_EXIT;
}

bool tracer_at_sleep(const struct tthread *t)
{
	return t->state == TS_REQ && sched_is_sleep_call(t->req.hook);
}

/* Same registers, the pc and flags aside: a loop that reads the same
 * values every time round.  A computation changes some register (its
 * counter, its accumulator) between two slices, whatever their length. */
static bool same_state(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	return a->r15 == b->r15 && a->r14 == b->r14 && a->r13 == b->r13 && a->r12 == b->r12 &&
	       a->rbp == b->rbp && a->rbx == b->rbx && a->r11 == b->r11 && a->r10 == b->r10 &&
	       a->r9 == b->r9 && a->r8 == b->r8 && a->rax == b->rax && a->rcx == b->rcx &&
	       a->rdx == b->rdx && a->rsi == b->rsi && a->rdi == b->rdi && a->rsp == b->rsp;
}

/* Exploration drops a thread below the others when it spins (explore.c):
 * deciding that from the clock (three slices without an event) dropped
 * threads that merely computed for 30 ms, more of them the busier the
 * machine, so the same seed gave other runs under load.  A spin is told
 * by its registers instead: the same at two slice ends in a row, no
 * event between.  How many slices pass before that shows does not change
 * the order of events: a spinner does no event. */
void sched_slice_over(struct tracer *tr, struct tthread *t)
{
	struct tracer_priv_thread *p = t->priv;
	struct user_regs_struct r;
	t->preempted = true;
	t->sliced = true;
	tr->stats.preemptions++;
	if (ptu_getregs(t->tid, &r) < 0) {
		p->slice_valid = false;
		return;
	}
	t->spinning = p->slice_valid && p->slice_nev == t->nevents && same_state(&r, &p->slice_regs);
	p->slice_regs = r;
	p->slice_nev = t->nevents;
	p->slice_valid = true;
}

static uint64_t timespec_ns(struct tracer *tr, uint64_t addr)
{
	int64_t ts[2];
	if (!addr || ptu_read(tr->proc->pid, addr, ts, sizeof ts) < 0 || ts[0] < 0 || ts[1] < 0)
		return UINT64_MAX;
	if ((uint64_t)ts[0] > UINT64_MAX / 2000000000ull)
		return UINT64_MAX;
	return (uint64_t)ts[0] * 1000000000ull + (uint64_t)ts[1];
}

static uint64_t ms_ns(int64_t ms)
{
	return ms < 0 ? UINT64_MAX : (uint64_t)ms * 1000000ull;
}

/* Pure sleeps only: a wait on descriptors ends when another thread
 * writes, and must not be made to run out its timeout while that thread
 * is held. */
uint64_t sched_sleep_ns(struct tracer *tr, int hook, const struct user_regs_struct *r)
{
	const char *n = hook_defs[hook].name;
	if (!strcmp(n, "sched_yield") || !strcmp(n, "thrd_yield"))
		return 0;
	if (!strcmp(n, "usleep"))
		return (uint64_t)(uint32_t)r->rdi * 1000ull;
	if (!strcmp(n, "sleep"))
		return (uint64_t)(uint32_t)r->rdi * 1000000000ull;
	if (!strcmp(n, "nanosleep") || !strcmp(n, "thrd_sleep"))
		return timespec_ns(tr, r->rdi);
	if (!strcmp(n, "clock_nanosleep")) /* absolute: no longer than its offset from 0 */
		return r->rsi & 1 ? UINT64_MAX : timespec_ns(tr, r->rdx);
	if (!strcmp(n, "poll") && r->rsi == 0)
		return ms_ns((int32_t)r->rdx);
	if (!strcmp(n, "select") && r->rdi == 0 && !r->rsi && !r->rdx && !r->rcx) {
		int64_t tv[2];
		if (!r->r8 || ptu_read(tr->proc->pid, r->r8, tv, sizeof tv) < 0 || tv[0] < 0 || tv[1] < 0)
			return UINT64_MAX;
		return (uint64_t)tv[0] * 1000000000ull + (uint64_t)tv[1] * 1000ull;
	}
	return UINT64_MAX;
}

bool sched_is_sleep_call(int hook)
{
	return hook >= 0 && hook_defs[hook].op == OP_SLEEP;
}

bool sched_others_could_run(struct tracer *tr, struct tthread *t, bool last_resorts)
{
	for (size_t i = 0; i < tr->proc->nlive; i++) {
		struct tthread *o = tr->proc->live[i];
		if (o == t)
			continue;
		int c = model_can_run(tr, o);
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
	size_t nthr = tr->proc->nthr + 1, best = 0;
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
