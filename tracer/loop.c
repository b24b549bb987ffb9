/*
 * The event loop: while (dispatch(next_event())).
 *
 * tracer_step() picks a thread (through the sink), commits its request and
 * runs it; run_until_stop() waits for that thread's next scheduling point,
 * handling on the way every stop of every thread (new threads, forks,
 * execs, exits, signals).  A thread reaches a scheduling point when it stops
 * at a hook entry (a request), after a return trampoline (an event emitted),
 * when it dies, or when it is preempted or set aside as blocked.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace_util.h"
#include "trace/log.h"
#include "tracer_int.h"

enum wr {
	WR_WAIT,      /* keep waiting for the running thread */
	WR_POINT,     /* the running thread reached a scheduling point */
	WR_EXITED,    /* the whole target is gone */
	WR_ERROR,
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_regs(struct tthread *t, struct user_regs_struct *r)
{
	if (ptu_setregs(t->tid, r) < 0 && errno != ESRCH)
		avt_debug("setregs T%u: %s", t->lid, strerror(errno));
}

/* Sets r unless the thread has it already (a stop in the jump form resumes
 * where it stands: no ptrace call). */
static void set_regs_if_changed(struct tthread *t, struct user_regs_struct *r,
				const struct user_regs_struct *now)
{
	if (memcmp(r, now, sizeof *r))
		set_regs(t, r);
}

static void resume_raw(struct tthread *t, int sig)
{
	if (ptu_resume(t->tid, sig) < 0)
		avt_debug("resume T%u: %s", t->lid, strerror(errno));
}

/* The one place the session resumes its threads (through ptu_resume, to
 * which ESRCH is "gone", not an error), delivering t's pending signal.
 * grant: hand it the agent's run token, with as many in-process events
 * as the sink allows from here (agent.c); in a script the token is the
 * script's.  A grant may begin a hand-over script: the script's other
 * threads, parked at the agent's entry by agent_grant, go first (their
 * signals wait for their return to the ptrace path). */
static void resume_thread(struct tracer *tr, struct tthread *t, bool grant)
{
	if (grant && !agent_script_on(tr)) {
		agent_grant(tr, t);
		struct tthread *parts[32];
		size_t n = agent_script_parts(tr, parts, 32);
		for (size_t i = 1; i < n; i++) /* parts[0] is t */
			resume_raw(parts[i], 0);
	}
	int sig = t->priv->pending_sig;
	t->priv->pending_sig = 0;
	resume_raw(t, sig);
}

static void resume(struct tracer *tr, struct tthread *t)
{
	resume_thread(tr, t, true);
}

static enum wr act(struct tracer *tr, struct tthread *t, struct tthread *run, struct next *n);

/* ---- signals */

/* Will delivering sig kill the process (default action, neither caught
 * nor ignored)? */
static bool sig_is_fatal(pid_t pid, int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return false;
	default:
		break;
	}
	if (sig >= SIGRTMIN)
		return false;
	uint64_t bit = 1ull << (sig - 1);
	return !(ptu_signal_mask(pid, "SigCgt") & bit) && !(ptu_signal_mask(pid, "SigIgn") & bit);
}

/* A clock's signal the sink dropped (a replay following a schedule
 * raises its own copy where the recording had it, signals.c).  When it
 * found the running thread asleep in a call (pause, sigsuspend, a wait),
 * the call restarts on the resume and the thread sleeps on: its turn
 * ends here, as the tick's interrupt of a sleeper ends it.  The tick
 * alone seldom saw it: the clock's signal woke it every few hundred
 * microseconds (dl_progress: a 200 us timer, T1 in pause() after its last
 * recorded event), its turn went on for seconds, and the pick that raises
 * the recorded signal (replay/policy.c, raise_due) never came.  Left
 * stopped in the signal's stop, it restarts the call when resumed, and a
 * signal raised meanwhile is delivered first.  (Not in a hand-over
 * script: its threads wait for the token in a call of the agent's; nor
 * in a pure sleep that runs to its end while the others are held.) */
static struct next held_signal(struct tracer *tr, struct tthread *t, struct tthread *run)
{
	if (t != run || t->state != TS_RUNNING || agent_script_on(tr) || t->priv->sync_sleep ||
	    !fidelity_in_interrupted_call(t))
		return nx(NX_RESUME);
	fidelity_stopped(t); /* a timed call's start, as at an interrupt */
	if (t->priv->expect_block)
		t->priv->expect_block = false;
	else
		t->wait = TW_UNKNOWN;
	tr->stats.kernel_waits++;
	return nx_stop(TS_KWAIT);
}

/* A fault that a handler catches, raised by an instruction run out of line
 * (an access site's slot): the signal frame names the instruction itself,
 * as natively.  A sanitizer's handler reports where the fault stood and
 * dies: ASan's SEGV report said "(<unknown module>)" and lost the frame of
 * the faulting function.  Only at the slot's first instruction, a place
 * the handler may return to (the site runs again, as the kernel runs a
 * faulting instruction again); a later instruction of a cover has no
 * place of its own in the program's code (the jump covers it).  Slots
 * start at an mmap'd (page-aligned) base, so a slot's start is its pc
 * rounded down to BPT_SLOT_SIZE. */
/* Was sig raised by an instruction (a fault), not sent? */
static bool is_fault(struct ptu_status *s, int sig)
{
	const siginfo_t *si = ptu_siginfo(s);
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) && si &&
	       si->si_code > 0;
}

static void fault_in_place(struct tracer *tr, struct tthread *t, struct ptu_status *s, int sig)
{
	struct user_regs_struct r;
	if (!is_fault(s, sig) || ptu_getregs(t->tid, &r) < 0)
		return;
	uint64_t orig = access_orig_pc(tr, r.rip);
	if (orig == r.rip || access_orig_pc(tr, r.rip & ~(uint64_t)(BPT_SLOT_SIZE - 1)) != orig)
		return;
	r.rip = orig;
	if (ptu_setregs(t->tid, &r) == 0)
		avt_debug("T%u: SIG%s out of line: delivered at 0x%llx", t->lid,
			  sigabbrev_np(sig) ?: "?", (unsigned long long)orig);
}

/* Delivers sig to t, recording it first when it is fatal.  The thread is
 * held instead when the sink asked to stop at the fatal event (replay
 * --gdb leaves the process stopped before the signal).  run: the thread
 * the scheduler runs. */
/*
 * A fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL raised by an instruction, not
 * sent) in a process with AddressSanitizer's runtime: its handler prints
 * the report and exits 1, never returns.  The program died of the fault
 * where it stood, as the plain build does: recorded as the fatal signal,
 * then delivered to the handler, whose report still goes to stderr.  So
 * the ASan build's bug is the plain build's ("SIGSEGV in T0 at
 * crash.c:44"), not "exit status 1".  A program's own handler (no
 * sanitizer) may return and go on: its faults stay signals.
 */
static bool sanitizer_fault(struct tracer *tr, struct ptu_status *s, int sig)
{
	return tracer_asan(tr) && is_fault(s, sig);
}

static struct next on_signal(struct tracer *tr, struct tthread *t, struct ptu_status *s, int sig,
			     struct tthread *run)
{
	if (is_fault(s, sig) && agent_value_fault(tr, t))
		return nx(NX_RESUME); /* the instruction faults next, as natively */
	if (sig_is_fatal(tr->proc->pid, sig) || sanitizer_fault(tr, s, sig)) {
		const siginfo_t *si = ptu_siginfo(s);
		struct user_regs_struct r;
		ptu_getregs(t->tid, &r);
		uint64_t orig = access_orig_pc(tr, r.rip);
		if (orig != r.rip) { /* faulted out of line: it dies where it stood */
			r.rip = orig;
			ptu_setregs(t->tid, &r);
		}
		tr->fatal_pc = r.rip;
		tr->fatal_tid = t->tid;
		uint64_t seq = tr->seq;
		tr_emit(tr, t, AVT_EV_FATAL_SIGNAL, si ? (uint64_t)(uintptr_t)si->si_addr : 0, 0, r.rip,
			AVT_F_SITE_EXACT, (uint16_t)sig);
		tr_capture_stack(tr, t, seq);
		tr->fatal_sig = sig;
	}
	else if (!sig_pass(tr, t, s, sig))
		return held_signal(tr, t, run); /* a replay delivers it where recorded */
	else {
		fault_in_place(tr, t, s, sig);
		if (fidelity_before_signal(t))
			avt_debug("T%u: its timed wait ran out while held: timed out before SIG%s",
				  t->lid, sigabbrev_np(sig) ?: "?");
	}
	t->priv->pending_sig = sig;
	if (tr->fatal_sig && tr->sink_stop)
		return nx_stop(TS_READY);
	return nx(NX_RESUME);
}

/* ---- thread creation, fork, exec */

static bool is_thread_of(pid_t pid, pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	pid_t tgid = -1;
	if (!f)
		return true; /* gone already; treat as ours */
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid == pid;
}

/* Does the clone that stopped t (a thread of tr->proc) make a thread of
 * its process?  The call's flags say (CLONE_THREAD): clone's first
 * argument, clone3's struct clone_args; /proc only where they cannot be
 * read (it cost an open and a read of the status file at every thread). */
static bool clone_makes_thread(struct tracer *tr, const struct tthread *t, pid_t tid)
{
	struct user_regs_struct r;
	uint64_t flags;
	if (ptu_getregs(t->tid, &r) == 0) {
		if (r.orig_rax == SYS_clone)
			return r.rdi & CLONE_THREAD;
		if (r.orig_rax == SYS_clone3 && ptu_read_u64(tr->proc->pid, r.rdi, &flags) == 0)
			return flags & CLONE_THREAD;
	}
	return is_thread_of(tr->proc->pid, tid);
}

/* Returns true when t created a thread of the process (a create event). */
static bool on_clone(struct tracer *tr, struct tthread *t, const struct ptu_status *s)
{
	pid_t tid = (pid_t)s->msg;
	if (!clone_makes_thread(tr, t, tid)) {
		if (tree_focus_fork(tr, tid, false) && watch_arm_thread(tr, t->tid) < 0) /* a process, by clone() */
			avt_warn("T%u: cannot set its watchpoints", t->lid);
		return false;
	}
	uint64_t site = t->priv->create_site;
	struct tthread *c = thread_add(tr, tid, t->lid);
	tree_wait_first_stop(tr, tid);
	c->state = TS_READY;
	/* debug registers are not inherited (PTRACE-NOTES pitfall 4) */
	if (watch_arm_thread(tr, tid) < 0)
		avt_warn("T%u: cannot set its watchpoints", c->lid);
	struct user_regs_struct r;
	if (ptu_getregs(tid, &r) == 0) {
		/* glibc hands a joined thread's thread block (its pthread_t) to
		 * the next thread it creates: a join of that pthread_t is of the
		 * new thread, never of the dead one that had it before */
		process_set_fs(tr->proc, c, r.fs_base);
	}
	tr_emit(tr, t, AVT_EV_CREATE, c->lid, 0, site, 0, 0);
	return true;
}

static int on_exec(struct tracer *tr, struct tthread *t, const struct ptu_status *s)
{
	unsigned long former = s->msg;
	/* the execing thread now has the leader's tid; every other one is gone */
	for (size_t i = 0; i < tr->proc->nthr; i++) {
		struct tthread *o = tr->proc->thr[i];
		if (o && o->state != TS_DEAD && o->tid != (pid_t)former && o != t)
			o->state = TS_DEAD;
		/* the old image's pthread_t values mean nothing in the new one,
		 * which hands the same addresses to its own threads (ASLR off):
		 * a join there must not find a thread of the old image */
		if (o && o != t)
			process_set_fs(tr->proc, o, 0);
	}
	t->tid = tr->proc->pid;
	t->priv->nrets = 0;
	tr->exiting = false; /* the others went by exec, not by an exit */
	tr->stats.execs++;
	char exe[4096], note[4200];
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)tr->proc->pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	free(tr->exe);
	tr->exe = strdup(exe);
	snprintf(note, sizeof note, "exec '%s' by T%u", exe, t->lid);
	if (tr->sink.note)
		tr->sink.note(tr->sink.ctx, tr, note);
	model_release(&tr->proc->model);
	model_init(&tr->proc->model);
	tree_focus_exec(tr);
	return exec_begin(tr);
}

/* ---- stops */

/* A trap at none of our breakpoints: a watchpoint, a breakpoint removed
 * before its stop was seen, or the program's own. */
static struct next trap_unowned(struct tracer *tr, struct tthread *t, struct ptu_status *s,
				struct user_regs_struct *r)
{
	struct next n;
	if (features_on_stray_trap(tr, t, s, r, &n))
		return n;
	uint64_t again;
	if (bpt_retired(&tr->proc->as.bpts, r->rip - 1, &again)) {
		/* it hit one of ours that was removed before its stop was seen:
		 * the instruction (or the slot's copy) runs now, with no event */
		r->rip = again;
		return nx_regs(nx(NX_RESUME), r);
	}
	/* the program's own; say so in the trace, it may not be */
	const siginfo_t *si = ptu_siginfo(s);
	char note[160];
	snprintf(note, sizeof note, "SIGTRAP (si_code %d) at 0x%llx in T%u passed to the program",
		 si ? si->si_code : 0, (unsigned long long)r->rip, t->lid);
	if (tr->sink.note)
		tr->sink.note(tr->sink.ctx, tr, note);
	return on_signal(tr, t, s, SIGTRAP, NULL);
}

/* A SIGTRAP: which breakpoint, and its feature's decision. */
static struct next on_trap(struct tracer *tr, struct tthread *t, struct ptu_status *s)
{
	struct user_regs_struct r;
	fidelity_left(t);
	if (ptu_getregs(t->tid, &r) < 0)
		return nx(NX_HOLD);
	struct bpt *b = bpt_at_trap(&tr->proc->as.bpts, r.rip - 1);
	const struct user_regs_struct now = r;
	if (!b)
		return trap_unowned(tr, t, s, &r);
	r.rip = b->addr;
	if (b->kind == BK_ENTRY) { /* a new image: the core's, not a feature's */
		if (exec_at_entry(tr, t, b, &r) < 0)
			return nx(NX_ERROR);
		return nx_regs(nx(NX_RESUME), &r);
	}
	return features_on_hit(tr, t, b, &r, &now);
}

static struct next on_exit_event(struct tracer *tr, struct tthread *t, const struct ptu_status *s,
				 struct tthread *run)
{
	/* a thread killed by a fatal signal does not "exit": the signal is its
	 * last event */
	if (t == run && !t->priv->exit_seen && !tr->fatal_sig) {
		unsigned long code = s->msg;
		struct user_regs_struct r;
		if (ptu_getregs(t->tid, &r) == 0 && r.orig_rax == SYS_exit) {
			/* one thread's own exit: a request, so a schedule can place it */
			memset(&t->req, 0, sizeof t->req);
			t->req.hook = HK_EXIT;
			t->req.kind = AVT_EV_EXIT;
			t->req.obj = code >> 8;
			t->priv->exit_seen = true;
			return nx_stop(TS_REQ);
		}
		/* exit_group: the process ends here, the other threads are gone
		 * (and must not be committed any more: a join of the exiting
		 * thread would be made up) */
		tr_emit(tr, t, AVT_EV_EXIT, code >> 8, 0, 0, 0, 0);
		tr->exiting = true;
	}
	/* a group exit or a SIGKILL: the process is going; threads it took
	 * down holding locks must not read as a deadlock */
	tr->exiting = true;
	t->priv->exit_seen = true;
	return nx(NX_RESUME);
}

struct next loop_on_gone(struct tracer *tr, pid_t pid, const struct ptu_status *s)
{
	if (pid == tr->proc->pid) {
		for (size_t i = 0; i < tr->proc->nthr; i++)
			if (tr->proc->thr[i])
				tr->proc->thr[i]->state = TS_DEAD;
		tr->proc->alive = false;
		tr->proc->exit_signal = s->stop == PTU_KILLED ? s->sig : 0;
		tr->proc->exit_status = s->stop == PTU_KILLED ? 128 + s->sig : s->code;
		return nx(NX_EXITED);
	}
	return nx_stop(TS_DEAD);
}

/* Is t still where the commit of its request left it, at the first
 * instruction of the hooked call (its out-of-line copy)? */
static bool request_not_begun(struct tthread *t)
{
	struct user_regs_struct r;
	return t->priv->resume_pc && ptu_getregs(t->tid, &r) == 0 && r.rip == t->priv->resume_pc;
}

/* The tick's interrupt of the running thread: where its turn ends. */
static struct next on_interrupt(struct tracer *tr, struct tthread *t)
{
	t->priv->interrupt_pending = false;
	if (agent_busy(tr, t)) {
		/* inside the agent's fast path: not a point to switch at; the
		 * next tick interrupts it again */
		return nx(NX_RESUME);
	}
	if (t->priv->expect_block) {
		t->priv->expect_block = false;
		tr->stats.kernel_waits++;
		return nx_stop(TS_KWAIT);
	}
	if (tr->interrupt_blocked) {
		t->wait = TW_UNKNOWN;
		tr->stats.kernel_waits++;
		return nx_stop(TS_KWAIT);
	}
	if (request_not_begun(t)) {
		/* the slice ended before the thread ran its committed request
		 * (a loaded machine gave it no CPU): the model already counts
		 * it done (an unlock: the lock free), so switching here would
		 * let another thread block on a lock still held.  The next
		 * tick interrupts it again. */
		return nx(NX_RESUME);
	}
	t->state = TS_READY;
	sched_slice_over(tr, t);
	return nx_stop(TS_READY);
}

static struct next on_event_stop(struct tracer *tr, struct tthread *t, struct tthread *run)
{
	fidelity_stopped(t); /* inside a timed call? (a signal may come while it is held) */
	if (t->state == TS_NEW) {
		t->state = TS_READY;
		return nx(NX_HOLD);
	}
	if (t != run || !t->priv->interrupt_pending) {
		/* a group-stop or a late interrupt: not a decision point */
		return nx(t == run || t->state == TS_RUNNING ? NX_RESUME : NX_HOLD);
	}
	futex_stopped(tr, t); /* still in its futex wait, or back out? */
	return on_interrupt(tr, t);
}

/* A stop of a known thread t: its handler's decision (tracer_int.h). */
struct next loop_decide(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			  struct tthread *run)
{
	switch (s->stop) {
	case PTU_SIGNAL:
		if (s->sig == SIGTRAP)
			return on_trap(tr, t, s);
		if (t->state == TS_NEW && s->sig == SIGSTOP) {
			t->state = TS_READY;
			return nx(NX_HOLD);
		}
		return on_signal(tr, t, s, s->sig, run);
	case PTU_EV_CLONE:
		/* the create is an event of its own: the parent stops after it,
		 * so a schedule can run the child before the parent's next step */
		if (on_clone(tr, t, s) && t == run)
			return nx_stop(TS_READY);
		return nx(NX_RESUME);
	case PTU_EV_FORK:
		/* debug registers are not inherited (PTRACE-NOTES pitfall 4) */
		if (tree_focus_fork(tr, (pid_t)s->msg, s->vfork) && watch_arm_thread(tr, t->tid) < 0)
			avt_warn("T%u: cannot set its watchpoints", t->lid);
		return nx(NX_RESUME);
	case PTU_EV_EXEC:
		return on_exec(tr, t, s) < 0 ? nx(NX_ERROR) : nx(NX_RESUME);
	case PTU_EV_EXIT:
		return on_exit_event(tr, t, s, run);
	case PTU_EV_STOP:
		return on_event_stop(tr, t, run);
	case PTU_EV_SECCOMP:
		return features_on_seccomp(tr, t, s);
	default:
		return nx(NX_RESUME);
	}
}

/* The one place a stop's decision is carried out. */
static enum wr act(struct tracer *tr, struct tthread *t, struct tthread *run, struct next *n)
{
	if (n->modules_changed)
		tr_modules_changed(tr);
	if (n->set_regs && t) {
		if (n->only_if_changed)
			set_regs_if_changed(t, &n->regs, &n->was);
		else
			set_regs(t, &n->regs);
	}
	switch (n->kind) {
	case NX_RESUME:
		resume(tr, t);
		return WR_WAIT;
	case NX_LET_GO:
		/* no grant: it may be inside the agent, whose token stays as
		 * it is; a pending signal waits for a signal's stop */
		resume_raw(t, 0);
		return WR_WAIT;
	case NX_STOP:
		if (!t)
			return WR_WAIT;
		if (n->state != TS_NEW)
			t->state = n->state;
		return t == run ? WR_POINT : WR_WAIT;
	case NX_HOLD:
		return WR_WAIT;
	case NX_EXITED:
		return WR_EXITED;
	default:
		return WR_ERROR;
	}
}

static enum wr dispatch(struct tracer *tr, pid_t pid, int st, struct tthread *run)
{
	struct ptu_status s;
	ptu_arrive(pid, st, &s);
	/* the caller's own child (record's stdin tee) ended: nothing of the
	 * program's stopped, the running thread runs on */
	if (tracer_reaped_feeder(tr, pid, &s))
		return WR_WAIT;
	bool gone = s.stop == PTU_EXITED || s.stop == PTU_KILLED;
	/* what the agent did in-process happened before this stop */
	agent_drain(tr, gone && pid == tr->proc->pid);
	if (tree_owns(tr, pid)) {
		tree_on_stop(tr, pid, &s); /* a light process: resumed there */
		return WR_WAIT;
	}
	tr->stats.stops++;
	struct tthread *t = tr_by_tid(tr, pid);
	struct next n;
	if (gone) {
		n = loop_on_gone(tr, pid, &s);
	} else if (!t) {
		/* a new task whose clone/fork event has not come yet */
		if (tr->norphans < (int)(sizeof tr->orphans / sizeof tr->orphans[0]))
			tr->orphans[tr->norphans++] = pid;
		n = nx(NX_HOLD);
	} else {
		/* Any other stop ends a pending interrupt: the kernel drops the
		 * STOP trap it had queued, or (interrupted in that stop)
		 * reports it after the next resume, a late one.  A flag left
		 * set would keep the tick from ever interrupting it again. */
		if (s.stop != PTU_EV_STOP)
			t->priv->interrupt_pending = false;
		n = loop_decide(tr, t, &s, run);
	}
	return act(tr, t, run, &n);
}

/* How long a run kept its thread busy.  A short run counts its wall
 * time; a run that lasts ticks counts, from its first tick on, the time
 * the thread spent on a CPU: on a loaded machine a computing thread may
 * wait for a CPU most of the time, and must not be taken for stuck (or
 * for a spinner) sooner the busier the machine is. */
struct run_clock {
	uint64_t cpu0, wall0;
};

/* Before its first tick a run counts its wall time, at most this much: a
 * run that waited for a CPU longer was on it for less. */
#define PRE_TICK_NS 1000000ull

static uint64_t run_busy_ns(struct tracer *tr, struct tthread *t, uint64_t started,
			    const struct run_clock *rc)
{
	uint64_t pre = (rc->cpu0 ? rc->wall0 : now_ns()) - started;
	if (pre > PRE_TICK_NS)
		pre = PRE_TICK_NS;
	if (!rc->cpu0)
		return pre;
	uint64_t cpu = ptu_thread_cpu_ns(tr->proc->pid, t->tid);
	return pre + (cpu > rc->cpu0 ? cpu - rc->cpu0 : 0);
}

/* Is t the process's only thread?  Then nothing else is to be run while
 * it sleeps in the kernel (a shell waiting for its child, a runner for
 * its test): its sleep ends when the kernel's does, with no interrupt. */
static bool lone(const struct tracer *tr, const struct tthread *t)
{
	for (size_t i = 0; i < tr->proc->nthr; i++)
		if (tr->proc->thr[i] && tr->proc->thr[i] != t && tr->proc->thr[i]->state != TS_DEAD)
			return false;
	return !agent_script_on(tr);
}

static bool others_running(const struct tracer *tr, const struct tthread *t)
{
	for (size_t i = 0; i < tr->proc->nthr; i++)
		if (tr->proc->thr[i] && tr->proc->thr[i] != t && tr->proc->thr[i]->state == TS_RUNNING)
			return true;
	return false;
}

/* Called on every tick while t runs: preempt a spinner, set aside a
 * thread asleep in the kernel. */
static void watch_running(struct tracer *tr, struct tthread *t, uint64_t started,
			  int *sleeping_ticks, struct run_clock *rc)
{
	if (t->priv->interrupt_pending || t->state != TS_RUNNING)
		return;
	if (tracer_interrupted()) { /* SIGINT to avtrace: end the step now */
		tr->interrupt_blocked = true;
		t->priv->interrupt_pending = true;
		ptu_interrupt(t->tid);
		return;
	}
	if (t->priv->sync_sleep)
		return;
	if (!rc->cpu0) { /* a long run: count its time on a CPU (below) */
		rc->cpu0 = ptu_thread_cpu_ns(tr->proc->pid, t->tid);
		rc->wall0 = now_ns();
	}
	char ks = ptu_thread_state(tr->proc->pid, t->tid);
	*sleeping_ticks = (ks == 'S' || ks == 'D') ? *sleeping_ticks + 1 : 0;
	/* the slice is time on a CPU, not on the clock: on a busy machine a
	 * computing thread waits for a CPU, and its slices must end where
	 * they end on an idle one (the same run for the same seed) */
	uint64_t ran = tr->current_busy + run_busy_ns(tr, t, started, rc);
	/* asleep on a private futex with no timeout while no other thread
	 * runs: only a thread we run can wake it, so its turn is over now,
	 * where the clock would end it a slice later (glibc's internal
	 * waits: a condition's signaller waiting for stopped waiters to
	 * leave its group, a contended internal lock) */
	bool stuck = *sleeping_ticks >= 1 && !others_running(tr, t) &&
		     ptu_thread_futex_untimed(tr->proc->pid, t->tid);
	bool asleep = stuck || *sleeping_ticks >= 2 || (t->priv->expect_block && *sleeping_ticks >= 1);
	/* ... but a thread asleep in the kernel spends no CPU time: its turn
	 * ends by the clock, or one asleep on what a stopped thread must
	 * write (with nobody else runnable) would sleep for ever */
	uint64_t slice = (uint64_t)tr->opts.slice_ms * 1000000ull;
	bool slice_over = stuck || ran >= slice || (asleep && now_ns() - started >= slice);
	if (!asleep && !slice_over)
		return;
	/* (in a script, the threads waiting in the agent could) */
	bool others = agent_script_on(tr) || sched_others_could_run(tr, t, false);
	if (asleep && !t->priv->expect_block && !others && !slice_over)
		return; /* nobody else to run: let it sleep */
	if (asleep && lone(tr, t))
		return;
	if (asleep && t->wait == TW_SLEEP && !sched_others_could_run(tr, t, true))
		return; /* a sleeping call and nobody else at all: let it sleep */
	tr->interrupt_blocked = asleep;
	t->priv->interrupt_pending = true;
	tr->stats.stuck_waits += stuck;
	ptu_interrupt(t->tid);
}

/* In a commit into a wait the thread is polled closely (a condition wait
 * should cost microseconds, not a tick), once per run (*polled): after
 * that it is a thread like any other, watched on every tick.  (The wait
 * after the polls used to retry on the tick's EINTR: a thread that ran
 * on for 20 ms and then fell asleep on something a stopped thread had to
 * release slept for ever.) */
static pid_t wait_any(struct tracer *tr, struct tthread *t, int *st, bool *polled)
{
	if (!t->priv->expect_block || t->priv->interrupt_pending || t->priv->sync_sleep || *polled ||
	    lone(tr, t))
		return waitpid(-1, st, __WALL);
	*polled = true;
	for (int spins = 0;; spins++) {
		pid_t p = waitpid(-1, st, __WALL | WNOHANG);
		if (p != 0)
			return p;
		char ks = ptu_thread_state(tr->proc->pid, t->tid);
		if ((ks == 'S' || ks == 'D') && t->wait == TW_SLEEP &&
		    !sched_others_could_run(tr, t, true))
			return waitpid(-1, st, __WALL); /* nobody else: let it sleep */
		if (ks == 'S' || ks == 'D') {
			tr->interrupt_blocked = true;
			t->priv->interrupt_pending = true;
			ptu_interrupt(t->tid);
			return ptu_wait(-1, st, __WALL);
		}
		struct timespec ts = { 0, spins < 10 ? 10000 : 200000 };
		nanosleep(&ts, NULL);
		if (spins > 100)
			return waitpid(-1, st, __WALL); /* EINTR: watch_running */
	}
}

/* The thread of a script (agent.c) that stopped, or NULL. */
static struct tthread *script_part(struct tracer *tr, pid_t pid)
{
	struct tthread *parts[32];
	size_t n = agent_script_parts(tr, parts, 32);
	for (size_t i = 0; i < n; i++)
		if (parts[i] && parts[i]->tid == pid)
			return parts[i];
	return NULL;
}

/* The leader of a process that is exiting is reported only once its
 * other threads are reaped: waited for alone, it never came (a SIGABRT
 * inside a script left the tracer waiting for ever).  A zombie leader is
 * gone, as in run_until_stop; -1 with errno ECHILD. */
static pid_t wait_part(struct tracer *tr, struct tthread *q, int *st)
{
	if (q->tid != tr->proc->pid)
		return ptu_wait(q->tid, st, __WALL);
	for (;;) {
		pid_t p = waitpid(q->tid, st, __WALL | WNOHANG);
		if (p != 0 && !(p < 0 && errno == EINTR))
			return p;
		if (ptu_thread_state(tr->proc->pid, q->tid) == 'Z') {
			errno = ECHILD;
			return -1;
		}
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
}

/* A script's thread stopped where the scheduler decides: the script is
 * over.  Every other thread of it is brought to a stop: those waiting in
 * the agent are woken and take the ptrace path to their request; the one
 * holding the token, if another, is interrupted. */
static void script_over(struct tracer *tr, struct tthread *stopped)
{
	struct tthread *parts[32];
	size_t n = agent_script_parts(tr, parts, 32);
	uint32_t holder = agent_script_end(tr);
	for (size_t i = 0; i < n; i++) {
		struct tthread *q = parts[i];
		if (!q || q == stopped)
			continue;
		while (q->state == TS_RUNNING && tr->proc->alive) {
			if ((uint32_t)q->tid == holder && !q->priv->interrupt_pending) {
				tr->interrupt_blocked = false;
				q->priv->interrupt_pending = true;
				ptu_interrupt(q->tid);
			}
			int st;
			pid_t p = wait_part(tr, q, &st);
			if (p < 0) {
				q->state = TS_DEAD;
				break;
			}
			if (dispatch(tr, p, st, q) == WR_EXITED)
				return;
		}
	}
}

static enum wr run_until_stop(struct tracer *tr, struct tthread *t)
{
	uint64_t started = now_ns();
	int sleeping = 0;
	tr->step_busy = 0;
	bool polled = false;
	struct run_clock rc = { 0, 0 };
	struct tthread *watched = t;
	tr->run_last = NULL;
	for (;;) {
		int st;
		pid_t p = wait_any(tr, watched, &st, &polled);
		if (p < 0) {
			if (errno == EINTR) {
				if (tr->sink.drain_running)
					agent_drain_running(tr);
				/* in a script, the tick watches the token's holder */
				struct tthread *h = agent_script_on(tr) ? agent_script_holder(tr) : t;
				if (h && h != watched) {
					/* the token passed: the slice is the new
					 * holder's from here, as after a pick */
					watched = h;
					started = now_ns();
					sleeping = 0;
					rc = (struct run_clock){ 0, 0 };
					tr->current_busy = 0;
				}
				watch_running(tr, watched, started, &sleeping, &rc);
				continue;
			}
			if (errno == ECHILD) {
				tr->proc->alive = false;
				return WR_EXITED;
			}
			return WR_ERROR;
		}
		struct tthread *part = agent_script_on(tr) ? script_part(tr, p) : NULL;
		enum wr w = dispatch(tr, p, st, part ? part : t);
		if (w != WR_WAIT) {
			if (agent_script_on(tr)) {
				script_over(tr, part);
				tr->run_last = part;
			}
			/* (a hand-over since the last tick: the time is not
			 * the stopped thread's alone; it had little of it) */
			tr->step_busy = !part || part == watched ? run_busy_ns(tr, watched, started, &rc) : 0;
			watched->idle_ns += tr->step_busy;
			return w;
		}
		/* the leader called pthread_exit while others live: it stays a
		 * zombie, never reported; treat it as gone */
		if (t->priv->exit_seen && t->state != TS_DEAD && t->tid == tr->proc->pid &&
		    ptu_thread_state(tr->proc->pid, t->tid) == 'Z') {
			t->state = TS_DEAD;
			if (agent_script_on(tr))
				script_over(tr, t);
			return WR_POINT;
		}
	}
}

static void collect(struct tracer *tr, struct tthread **run, size_t *nrun,
		    struct tthread **last, size_t *nlast)
{
	*nrun = *nlast = 0;
	process_prune(tr->proc);
	for (size_t i = 0; i < tr->proc->nlive; i++) {
		struct tthread *t = tr->proc->live[i];
		int c = model_can_run(tr, t);
		if (c == 1)
			run[(*nrun)++] = t;
		else if (c == 2)
			last[(*nlast)++] = t;
	}
}

static bool all_dead(struct tracer *tr)
{
	for (size_t i = 0; i < tr->proc->nlive; i++)
		if (tr->proc->live[i]->state != TS_DEAD)
			return false;
	return true;
}

/* Every thread has exited but the process's own exit is not reported yet
 * (the leader lingers as a zombie for a moment): wait for it. */
static enum tstep drain_exit(struct tracer *tr)
{
	/* threads parked at a request would hold the dying process up */
	agent_grant(tr, NULL); /* they run side by side: no fast path */
	for (size_t i = 0; i < tr->proc->nthr; i++) {
		struct tthread *t = tr->proc->thr[i];
		if (t && t->state != TS_DEAD && t->state != TS_RUNNING && t->state != TS_NEW) {
			t->state = TS_RUNNING;
			resume_thread(tr, t, false);
		}
	}
	for (;;) {
		int st;
		pid_t p = ptu_wait(-1, &st, __WALL);
		if (p < 0) {
			tr->proc->alive = false;
			return errno == ECHILD ? TSTEP_EXITED : TSTEP_ERROR;
		}
		enum wr w = dispatch(tr, p, st, NULL);
		if (w == WR_EXITED)
			return TSTEP_EXITED;
		if (w == WR_ERROR)
			return TSTEP_ERROR;
	}
}

static void commit(struct tracer *tr, struct tthread *t)
{
	struct user_regs_struct r;
	if (!t->started) {
		t->started = true;
		tr_emit(tr, t, AVT_EV_START, t->parent, 0, 0, 0, 0);
	}
	t->preempted = false;
	t->spinning = false;
	if (t->state != TS_REQ)
		return;
	if (t->req.hook == HK_EXIT) {
		tr_emit(tr, t, AVT_EV_EXIT, t->req.obj, 0, 0, 0, 0);
		return;
	}
	if (t->req.hook == HK_PROBE)
		tr_emit(tr, t, t->req.kind, t->req.obj, 0, t->req.site,
			AVT_F_ANNOTATED | AVT_F_SITE_EXACT, t->req.size);
	else if (t->req.hook == HK_ACCESS)
		access_commit(tr, t);
	else if (t->req.hook == HK_FUTEX)
		futex_commit(tr, t);
	struct user_regs_struct now;
	if (t->priv->regs_valid) {
		r = now = t->priv->regs;
		now.rip = t->priv->stop_rip; /* where it really stands */
	} else if (ptu_getregs(t->tid, &r) < 0) {
		return;
	} else {
		now = r;
	}
	t->priv->regs_valid = false;
	if (t->req.hook >= 0 && hooks_commit(tr, t, &r) < 0)
		avt_warn("T%u: cannot intercept the return of %s", t->lid, hook_defs[t->req.hook].name);
	r.rip = t->priv->resume_pc;
	set_regs_if_changed(t, &r, &now);
}

static enum tstep step(struct tracer *tr)
{
	if (!tr->proc->alive)
		return TSTEP_EXITED;
	if (tr->sink_stop || tracer_interrupted())
		return TSTEP_STOPPED;
	if (tr->fatal_sig || tr->exiting)
		return drain_exit(tr); /* the process is dying: nothing more happens */
	if (tr->candcap < tr->proc->nthr) {
		tr->candcap = tr->proc->nthr * 2;
		tr->run = realloc(tr->run, tr->candcap * sizeof *tr->run);
		tr->last = realloc(tr->last, tr->candcap * sizeof *tr->last);
		BUG_ON(!tr->run || !tr->last);
	}
	struct tthread **run = tr->run, **last = tr->last;
	size_t nrun, nlast;
	bool use_last = false;
	collect(tr, run, &nrun, last, &nlast);
	if (!nrun && !nlast)
		return all_dead(tr) ? drain_exit(tr) : TSTEP_DEADLOCK;
	/* before the fork path's end the focus is an ancestor: its steps
	 * are no schedule's */
	int i = tree_muted(tr) ? tracer_pick_round_robin(tr, run, nrun, last, nlast, &use_last)
			       : tr->sink.pick(tr->sink.ctx, tr, run, nrun, last, nlast, &use_last);
	struct tthread *t = i < 0 ? NULL : use_last ? last[i] : run[i];
	if (!t)
		return TSTEP_STOPPED;
	if (use_last && t->state == TS_KWAIT && t->wait != TW_UNKNOWN && tr->rescue)
		tr->rescue--;
	commit(tr, t);
	if (tr->sink_stop)
		return TSTEP_STOPPED;
	/* the slice counts from when t became the current thread, across its
	 * steps: a thread spinning on watched or annotated reads has an event
	 * every iteration and must still yield */
	if (tr->current != t->lid)
		tr->current_busy = 0;
	tr->current = t->lid;
	t->state = TS_RUNNING;
	if (t->wait != TW_NONE && !t->priv->expect_block) {
		/* resuming a kernel waiter: it either returns (trampoline) or
		 * falls asleep again, which we want to notice quickly */
		t->priv->expect_block = true;
	}
	tr->interrupt_blocked = false;
	t->sliced = false;
	resume(tr, t);
	enum wr w = run_until_stop(tr, t);
	if (t->state == TS_RUNNING)
		t->state = TS_READY;
	if (t->wait == TW_UNKNOWN && (t->state == TS_READY || t->state == TS_REQ)) {
		/* it got out of its unmodelled wait: no waiter any more, or
		 * every later run of it would be watched as one */
		t->wait = TW_NONE;
		t->priv->expect_block = false;
	}
	if (t->state == TS_READY || t->state == TS_REQ)
		futex_wait_over(t); /* likewise out of a futex wait */
	/* a script's turn ended with another thread: it is the current one
	 * now, as if picked there (its time counted since it took over) */
	struct tthread *ended = tr->run_last ? tr->run_last : t;
	if (ended != t) {
		tr->current = ended->lid;
		tr->current_busy = 0;
	}
	tr->current_busy += tr->step_busy;
	if (tr->current_busy >= (uint64_t)tr->opts.slice_ms * 1000000ull) {
		ended->preempted = true;
		tr->current_busy = 0;
	}
	if (w == WR_EXITED)
		return TSTEP_EXITED;
	if (w == WR_ERROR)
		return TSTEP_ERROR;
	return tr->sink_stop ? TSTEP_STOPPED : TSTEP_CONTINUE;
}

/* The recorded process is gone: the rest of the tree runs to its end
 * (a runner's children outlive nothing but it; a killed session kills
 * them). */
static void drain_tree(struct tracer *tr)
{
	while (tree_live(tr)) {
		if (tracer_interrupted())
			tree_kill(tr);
		int st;
		pid_t p = ptu_wait(-1, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		dispatch(tr, p, st, NULL);
	}
}

enum tstep tracer_step(struct tracer *tr)
{
	enum tstep s = step(tr);
	if (s == TSTEP_EXITED) {
		tree_end(tr);
		if (tree_live(tr))
			drain_tree(tr);
	}
	return s;
}

const char *tracer_blocked_on(struct tracer *tr, const struct tthread *t,
			      uint64_t *obj, uint32_t *holder)
{
	*obj = 0;
	*holder = NO_THREAD;
	if (t->state == TS_REQ && model_can_commit(tr, t) != 1) {
		*obj = t->req.obj;
		if (t->req.hook >= 0 && hook_defs[t->req.hook].op == OP_JOIN) {
			/* obj: the logical id of the thread it joins */
			const struct tthread *c = process_by_fs(tr->proc, t->req.obj);
			if (c)
				*obj = c->lid;
			return "join";
		}
		*holder = model_holder(&tr->proc->model, t->req.obj);
		return "lock";
	}
	if (t->state == TS_KWAIT && model_can_wake(tr, t) != 1) {
		*obj = t->wait_obj;
		switch (t->wait) {
		case TW_COND: return "cond";
		case TW_BARRIER: return "barrier";
		case TW_SEM: return "sem";
		case TW_SLEEP: return "sleep";
		case TW_FUTEX: return "futex";
		default: return "kernel";
		}
	}
	return NULL;
}

/* The stop of pid's SIGSTOP, which its threads take after the detach,
 * each on its own: "stopped" is said once it has happened (a look at the
 * process right after avtrace said so found it still running, under
 * load): waited for as our child's stop, or, when it is not our child
 * (a process of a tree), as its state in /proc; until it is stopped or
 * gone, for 10 s at most. */
static void wait_group_stop(pid_t pid)
{
	bool child = true;
	for (int i = 0; i < 10000; i++) {
		int st;
		pid_t p = child ? waitpid(pid, &st, WSTOPPED | WNOHANG) : 0;
		if (p == pid)
			return;
		child &= !(p < 0 && errno == ECHILD);
		char s = ptu_thread_state(pid, pid);
		if ((!child && s == 'T') || s == 'Z' || s == 0)
			return;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* Hands the process to a debugger: every trace of ours taken out (int3s,
 * trampoline return addresses, debug registers, a pc past an int3), a
 * SIGSTOP pending so nothing runs, then every thread detached.  A fatal
 * signal not yet delivered is dropped: continuing re-executes the faulting
 * instruction. */
pid_t tracer_detach_stopped(struct tracer *tr)
{
	timer_stop();
	for (size_t i = 0; i < tr->proc->nthr; i++) {
		struct tthread *t = tr->proc->thr[i];
		if (!t || t->state == TS_DEAD)
			continue;
		struct tracer_priv_thread *p = t->priv;
		for (int k = p->nrets; k-- > 0;)
			ptu_write(tr->proc->memfd, p->rets[k].sp, &p->rets[k].ret, sizeof p->rets[k].ret);
		p->nrets = 0;
		struct user_regs_struct r;
		if (t->state == TS_REQ && p->stop_pc && ptu_getregs(t->tid, &r) == 0) {
			r.rip = p->stop_pc; /* the original instruction is back there */
			ptu_setregs(t->tid, &r);
		}
		ptrace(PTRACE_POKEUSER, t->tid, (void *)offsetof(struct user, u_debugreg[7]), 0L);
	}
	bpt_restore_all(&tr->proc->as.bpts, tr->proc->memfd);
	/* under gdb the program runs on its own: every call goes to libc */
	agent_detach(tr);
	kill(tr->proc->pid, SIGSTOP);
	for (size_t i = 0; i < tr->proc->nthr; i++) {
		struct tthread *t = tr->proc->thr[i];
		if (t && t->state != TS_DEAD)
			ptrace(PTRACE_DETACH, t->tid, 0L, 0L);
	}
	wait_group_stop(tr->proc->pid);
	tr->proc->alive = false;
	/* the filter cannot be taken out of a process (futex.c) */
	if (tr->opts.futex)
		avt_warn("recorded with --futex: the program keeps avtrace's futex filter, and detached "
			 "(gdb takes no seccomp stops) its futex calls fail with ENOSYS");
	return tr->proc->pid;
}
