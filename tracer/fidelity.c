/*
 * Blocking calls return as the kernel would have returned them without
 * avtrace (issue 29, "Fidelity").
 *
 * The scheduler keeps a thread stopped inside a blocking call while others
 * run (a thread set aside in a kernel wait, a sleep run to its end while
 * the others are held).  The kernel keeps the call's deadline: resumed
 * after it, a timed wait restarts and times out at once, as it should.
 * But a signal that came while it was held is delivered first, and the
 * kernel turns the interrupted call into EINTR: a timed wait whose time
 * had passed long before the signal came returns "interrupted" (GLib's
 * g_cond_wait_until then reports a wakeup that never happened).
 *
 * So: when a thread is found stopped (an interrupt or group stop) inside
 * a fresh timed call, the time is noted (the call began no later: an
 * upper bound of its start; a call resumed and stopped again shows
 * restart_syscall and keeps it); when a caught signal is about to be delivered to that thread
 * while it is still inside the call, and the call's timeout had run out
 * by then, the call is made to return what its timeout returns
 * (-ETIMEDOUT, or 0) and is not restarted; the handler runs after it, as
 * it would have natively.  A call whose deadline may not have passed gets
 * the signal as the kernel gives it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "tracer/ptrace_util.h"
#include "tracer/tracer_int.h"

/* the kernel's restart codes, as an interrupted call's rax shows them */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

static bool interrupted_call(const struct user_regs_struct *r)
{
	long rax = (long)r->rax;
	return rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
	       rax == -ERESTART_RESTARTBLOCK;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool read_timespec(pid_t tid, uint64_t addr, uint64_t *ns)
{
	struct timespec ts;
	if (!addr || ptu_read(tid, addr, &ts, sizeof ts) < 0 || ts.tv_sec < 0 || ts.tv_nsec < 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return true;
}

/* The timed calls this knows, with their timeout: relative (from the call's
 * start) in *rel, or absolute on *clock in *abs; *ret is what the call
 * returns when it times out.  False: not a timed call (or no timeout). */
static bool timed_call(pid_t tid, long nr, const struct user_regs_struct *r, uint64_t *rel,
		       uint64_t *abs, clockid_t *clock, long *ret)
{
	*rel = *abs = 0;
	*clock = CLOCK_MONOTONIC;
	*ret = 0;
	switch (nr) {
	case SYS_futex: {
		int op = (int)r->rsi & FUTEX_CMD_MASK;
		*ret = -ETIMEDOUT;
		if (op == FUTEX_WAIT)
			return read_timespec(tid, r->r10, rel);
		if (op == FUTEX_WAIT_BITSET) {
			if (r->rsi & FUTEX_CLOCK_REALTIME)
				*clock = CLOCK_REALTIME;
			return read_timespec(tid, r->r10, abs);
		}
		return false;
	}
	case SYS_nanosleep:
		return read_timespec(tid, r->rdi, rel);
	case SYS_clock_nanosleep:
		*clock = (clockid_t)r->rdi;
		if (r->rsi & TIMER_ABSTIME)
			return read_timespec(tid, r->rdx, abs);
		return read_timespec(tid, r->rdx, rel);
	case SYS_poll:
		if ((int)r->rdx < 0)
			return false;
		*rel = (uint64_t)(int)r->rdx * 1000000ull;
		return true;
	case SYS_ppoll:
		return read_timespec(tid, r->rdx, rel);
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
		if ((int)r->r10 < 0)
			return false;
		*rel = (uint64_t)(int)r->r10 * 1000000ull;
		return true;
	default:
		return false;
	}
}

void fidelity_stopped(struct tthread *t)
{
	struct user_regs_struct r;
	if (ptu_getregs(t->tid, &r) < 0 || !interrupted_call(&r)) {
		t->priv->held_since = 0;
		return;
	}
	long nr = (long)r.orig_rax;
	if (nr == SYS_restart_syscall)
		return; /* the same call, resumed and set aside again: keep its start */
	uint64_t rel, abs;
	clockid_t clock;
	long ret;
	if (!timed_call(t->tid, nr, &r, &rel, &abs, &clock, &ret)) {
		t->priv->held_since = 0;
		return;
	}
	t->priv->held_since = clock_ns(CLOCK_MONOTONIC);
	t->priv->held_nr = nr;
}

void fidelity_left(struct tthread *t)
{
	t->priv->held_since = 0;
}

bool fidelity_before_signal(struct tthread *t)
{
	uint64_t since = t->priv->held_since;
	t->priv->held_since = 0;
	if (!since)
		return false;
	struct user_regs_struct r;
	if (ptu_getregs(t->tid, &r) < 0 || !interrupted_call(&r))
		return false;
	long nr = (long)r.orig_rax;
	if (nr != SYS_restart_syscall && nr != t->priv->held_nr)
		return false;
	uint64_t rel, abs;
	clockid_t clock;
	long ret;
	if (!timed_call(t->tid, t->priv->held_nr, &r, &rel, &abs, &clock, &ret))
		return false;
	bool passed = abs ? clock_ns(clock) >= abs : clock_ns(CLOCK_MONOTONIC) >= since + rel;
	if (!passed)
		return false;
	if (t->priv->held_nr == SYS_poll || t->priv->held_nr == SYS_ppoll) {
		/* a poll that timed out says no descriptor was ready */
		int fd = ptu_open_mem(t->tid);
		for (uint64_t i = 0; fd >= 0 && i < r.rsi && i < 4096; i++) {
			short none = 0;
			ptu_write(fd, r.rdi + i * sizeof(struct pollfd) + offsetof(struct pollfd, revents),
				  &none, sizeof none);
		}
		if (fd >= 0)
			close(fd);
	}
	r.rax = (uint64_t)ret;
	r.orig_rax = (uint64_t)-1; /* returns now: no restart after the handler */
	return ptu_setregs(t->tid, &r) == 0;
}

bool fidelity_in_interrupted_call(const struct tthread *t)
{
	struct user_regs_struct r;
	return ptu_getregs(t->tid, &r) == 0 && interrupted_call(&r);
}

bool tracer_wait_ends_alone(const struct tthread *t)
{
	struct user_regs_struct r;
	if (t->state != TS_KWAIT || ptu_getregs(t->tid, &r) < 0)
		return false;
	/* seen asleep, but its call had ended when the stop came (a timeout
	 * ran out between the tick and the interrupt): it runs on */
	if (!interrupted_call(&r))
		return true;
	long nr = (long)r.orig_rax;
	/* only timed calls restart this way (a futex wait, a sleep or a poll
	 * with a timeout, resumed and set aside again) */
	if (nr == SYS_restart_syscall)
		return true;
	uint64_t rel, abs;
	clockid_t clock;
	long ret;
	return timed_call(t->tid, nr, &r, &rel, &abs, &clock, &ret);
}
