/*
 * The decision each stop's handler returns (tracer/loop.c, loop_decide and
 * loop_on_gone), as data, for stops built by hand: no ptrace.  The threads'
 * tids are of no task (ptrace and /proc answer "no such task"), which the
 * handlers take as a thread whose registers cannot be read.
 */
#include <check.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "tracer/ptrace_util.h"
#include "tracer/tracer_int.h"
#include "unit_util.h"

#define NO_TASK 4194304 /* above any pid_max */

static struct tracer tr;
static struct process proc;
static struct process *procs[1] = { &proc };
static struct tthread th[2];
static struct tracer_priv_thread priv[2];
static struct tthread *thr[2];

static void setup(void)
{
	memset(&tr, 0, sizeof tr);
	memset(&proc, 0, sizeof proc);
	tr.procs = procs;
	tr.nprocs = 1;
	tr.proc = &proc;
	proc.pid = NO_TASK;
	proc.alive = true;
	proc.memfd = -1;
	tr.current = NO_THREAD;
	for (uint32_t i = 0; i < 2; i++) {
		memset(&th[i], 0, sizeof th[i]);
		memset(&priv[i], 0, sizeof priv[i]);
		th[i].lid = i;
		th[i].tid = NO_TASK + 1 + (int)i;
		th[i].state = TS_READY;
		th[i].priv = &priv[i];
		priv[i].proc = &proc;
		thr[i] = &th[i];
	}
	proc.thr = thr;
	proc.nthr = 2;
}

static struct ptu_status stop(enum ptu_stop kind, int sig)
{
	struct ptu_status s;
	memset(&s, 0, sizeof s);
	s.stop = kind;
	s.sig = sig;
	s.stopped = kind != PTU_EXITED && kind != PTU_KILLED;
	return s;
}

START_TEST(new_thread_first_stop_is_held)
{
	struct ptu_status s = stop(PTU_EV_STOP, SIGTRAP);
	th[1].state = TS_NEW;
	struct next n = loop_decide(&tr, &th[1], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_HOLD);
	ck_assert_int_eq(th[1].state, TS_READY);
	/* the same as a SIGSTOP (a traced, not seized, start) */
	s = stop(PTU_SIGNAL, SIGSTOP);
	th[1].state = TS_NEW;
	n = loop_decide(&tr, &th[1], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_HOLD);
	ck_assert_int_eq(th[1].state, TS_READY);
}
END_TEST

START_TEST(late_interrupt_is_no_point)
{
	struct ptu_status s = stop(PTU_EV_STOP, SIGTRAP);
	/* another thread, running: it goes on */
	th[1].state = TS_RUNNING;
	ck_assert_int_eq(loop_decide(&tr, &th[1], &s, &th[0]).kind, NX_RESUME);
	/* another thread, stopped: it stays so */
	th[1].state = TS_READY;
	ck_assert_int_eq(loop_decide(&tr, &th[1], &s, &th[0]).kind, NX_HOLD);
	/* the running thread with no interrupt of ours pending: on */
	th[0].state = TS_RUNNING;
	ck_assert_int_eq(loop_decide(&tr, &th[0], &s, &th[0]).kind, NX_RESUME);
}
END_TEST

START_TEST(interrupt_ends_turn)
{
	struct ptu_status s = stop(PTU_EV_STOP, SIGTRAP);
	th[0].state = TS_RUNNING;
	/* committed into a wait: it fell asleep there */
	priv[0].interrupt_pending = true;
	priv[0].expect_block = true;
	struct next n = loop_decide(&tr, &th[0], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_STOP);
	ck_assert_int_eq(n.state, TS_KWAIT);
	ck_assert(!priv[0].interrupt_pending && !priv[0].expect_block);
	ck_assert_uint_eq(tr.stats.kernel_waits, 1);
	/* set aside asleep in something the model does not know */
	priv[0].interrupt_pending = true;
	tr.interrupt_blocked = true;
	n = loop_decide(&tr, &th[0], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_STOP);
	ck_assert_int_eq(n.state, TS_KWAIT);
	ck_assert_int_eq(th[0].wait, TW_UNKNOWN);
	/* its slice is over: ready, its turn used */
	priv[0].interrupt_pending = true;
	tr.interrupt_blocked = false;
	th[0].wait = TW_NONE;
	n = loop_decide(&tr, &th[0], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_STOP);
	ck_assert_int_eq(n.state, TS_READY);
	ck_assert(th[0].preempted && th[0].sliced);
	ck_assert_uint_eq(tr.stats.preemptions, 1);
}
END_TEST

START_TEST(exit_of_another_thread_goes_on)
{
	struct ptu_status s = stop(PTU_EV_EXIT, SIGTRAP);
	struct next n = loop_decide(&tr, &th[1], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_RESUME);
	ck_assert(tr.exiting);
	ck_assert(priv[1].exit_seen);
}
END_TEST

START_TEST(harmless_signal_is_delivered)
{
	struct ptu_status s = stop(PTU_SIGNAL, SIGCHLD);
	struct next n = loop_decide(&tr, &th[1], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_RESUME);
	ck_assert_int_eq(priv[1].pending_sig, SIGCHLD);
	s = stop(PTU_OTHER, 0);
	ck_assert_int_eq(loop_decide(&tr, &th[1], &s, &th[0]).kind, NX_RESUME);
}
END_TEST

START_TEST(gone)
{
	struct ptu_status s = stop(PTU_EXITED, 0);
	struct next n = loop_on_gone(&tr, th[1].tid, &s);
	ck_assert_int_eq(n.kind, NX_STOP);
	ck_assert_int_eq(n.state, TS_DEAD);
	ck_assert(proc.alive);
	s = stop(PTU_KILLED, SIGKILL);
	n = loop_on_gone(&tr, proc.pid, &s);
	ck_assert_int_eq(n.kind, NX_EXITED);
	ck_assert(!proc.alive);
	ck_assert_int_eq(proc.exit_status, 128 + SIGKILL);
	ck_assert_int_eq(proc.exit_signal, SIGKILL);
	ck_assert_int_eq(th[0].state, TS_DEAD);
	ck_assert_int_eq(th[1].state, TS_DEAD);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracer_decide");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, new_thread_first_stop_is_held);
	tcase_add_test(tc, late_interrupt_is_no_point);
	tcase_add_test(tc, interrupt_ends_turn);
	tcase_add_test(tc, exit_of_another_thread_goes_on);
	tcase_add_test(tc, harmless_signal_is_delivered);
	tcase_add_test(tc, gone);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
