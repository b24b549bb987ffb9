/*
 * Timer signals caught by a handler (issue 30, shape 4).
 *
 * A timer's SIGALRM, a signal from another process or thread: where it
 * lands in the thread that takes it depends on the clock, and its
 * handler's events land there too.  A replay that delivered it whenever
 * the kernel did would put the handler's events elsewhere than the run it
 * replays (a download accelerator's progress handler: "T1's event 1
 * differs from the recording"), and the failure the run showed would not
 * be confirmed.
 *
 * So every such delivery is the sink's to decide (tracer_sink.signal):
 * the recorder, and a run that makes its own order (explore), deliver it
 * at once and note where (the thread and its events so far: a trace's
 * signal record); a replay that follows a schedule drops the kernel's and
 * raises its own copy (tracer_raise_signal) when the thread reaches the
 * recorded point, and delivers that one.  Faults (SIGSEGV and the like
 * raised by an instruction) are where their instruction is: not held.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrace_util.h"
#include "tracer_int.h"

/* Raised by an instruction of the thread (si_code > 0 from the kernel). */
static bool is_fault(int sig, const siginfo_t *si)
{
	switch (sig) {
	case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGTRAP: case SIGSYS:
		return si && si->si_code > 0;
	default:
		return false;
	}
}

bool sig_pass(struct tracer *tr, struct tthread *t, struct ptu_status *s, int sig)
{
	if (!tr->sink.signal || sig < 1 || sig > 64 || sig == SIGSTOP || sig == SIGCONT)
		return true;
	const siginfo_t *si = ptu_siginfo(s);
	if (is_fault(sig, si) || !(ptu_signal_mask(tr->proc->pid, "SigCgt") & (1ull << (sig - 1))))
		return true;
	bool raised = si && si->si_code == SI_TKILL && si->si_pid == getpid();
	/* only the clock's (setitimer, alarm, timer_create): a signal a
	 * thread sends comes at an event of the sender, which the schedule
	 * orders already (holding those broke wait_signalled's replay:
	 * raised after the receiver's event, it came before the instruction
	 * that event stands for) */
	if (!raised && !(si && (si->si_code == SI_KERNEL || si->si_code == SI_TIMER)))
		return true;
	return tr->sink.signal(tr->sink.ctx, tr, t, sig, raised);
}

/* A thread stopped at a request is moved back before its breakpoint: the
 * signal, pending at its resume, is delivered there, before the request
 * commits; its handler returns to the breakpoint, which makes the request
 * again.  (Committed first, the request's event would come before the
 * handler's, and its call would run only after them.) */
static void withdraw_request(struct tthread *t)
{
	struct user_regs_struct r;
	struct tracer_priv_thread *p = t->priv;
	if (t->state != TS_REQ || !p->stop_pc || ptu_getregs(t->tid, &r) < 0)
		return;
	r.rip = p->stop_pc;
	if (ptu_setregs(t->tid, &r) < 0)
		return;
	p->regs_valid = false;
	p->resume_pc = 0;
	t->state = TS_READY;
}

int tracer_raise_signal(struct tracer *tr, struct tthread *t, int sig)
{
	if (syscall(SYS_tgkill, tr->proc->pid, t->tid, sig) < 0)
		return -1;
	withdraw_request(t);
	return 0;
}
