/*
 * The futex feature (tracer/futex.c) without ptrace: the classes of futex
 * operations, the seccomp stop's decoding, and what a wake does to the
 * waiters of the model.  Threads have tids of no task, which the handlers
 * take as a thread whose registers cannot be read.
 */
#include <check.h>
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/agent_proto.h"
#include "tracer/ptrace_util.h"
#include "tracer/tracer_int.h"
#include "unit_util.h"

#define NO_TASK 4194304 /* above any pid_max */
#define WORD 0x5000u

static struct tracer tr;
static struct process proc;
static struct tthread th[3];
static struct tracer_priv_thread priv[3];
static struct tthread *thr[3];

static void setup(void)
{
	memset(&tr, 0, sizeof tr);
	memset(&proc, 0, sizeof proc);
	tr.opts.futex = true;
	tr.proc = &proc;
	proc.pid = NO_TASK;
	proc.alive = true;
	proc.memfd = -1;
	for (uint32_t i = 0; i < 3; i++) {
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
	proc.nthr = 3;
}

START_TEST(classify)
{
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_WAIT_PRIVATE), FC_WAIT);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME), FC_WAIT);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_WAKE_PRIVATE), FC_WAKE);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_CMP_REQUEUE), FC_WAKE);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_WAKE_OP_PRIVATE), FC_WAKE);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_UNLOCK_PI), FC_WAKE);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_LOCK_PI_PRIVATE), FC_LOCK_PI);
	ck_assert_int_eq(futex_classify(SYS_futex, FUTEX_FD), FC_NONE);
	ck_assert_int_eq(futex_classify(449 /* futex_waitv */, 0), FC_WAIT);
	ck_assert_int_eq(futex_classify(SYS_read, FUTEX_WAIT), FC_NONE);
}
END_TEST

START_TEST(decode_seccomp)
{
	struct ptu_status s;
	ptu_decode((SIGTRAP << 8 | 0x7f) | (PTRACE_EVENT_SECCOMP << 16), &s);
	ck_assert_int_eq(s.stop, PTU_EV_SECCOMP);
	ck_assert(s.stopped);
	ck_assert_str_eq(ptu_stop_name(PTU_EV_SECCOMP), "seccomp");
}
END_TEST

/* A seccomp stop whose registers cannot be read: the call just runs. */
START_TEST(seccomp_stop_unreadable_runs_on)
{
	struct ptu_status s;
	memset(&s, 0, sizeof s);
	s.stop = PTU_EV_SECCOMP;
	s.stopped = true;
	th[0].state = TS_RUNNING;
	struct next n = loop_decide(&tr, &th[0], &s, &th[0]);
	ck_assert_int_eq(n.kind, NX_LET_GO);
	ck_assert_int_eq(th[0].state, TS_RUNNING);
}
END_TEST

/* The filter, in a child nobody traces: the kernel's SECCOMP_RET_TRACE
 * with no tracer fails a futex call with ENOSYS (what a process of the
 * program left untraced would get); the agent's marked WAIT and WAKE run
 * (val3 means nothing to them), a marked WAKE_BITSET (val3 its bitset)
 * does not; other calls are untouched.  Exit code: the first case that
 * went wrong, 0 if none. */
static int filter_child(void)
{
	static uint32_t w;
	const uint32_t mark = AVT_AGENT_FUTEX_MARK;
	if (futex_filter_install() < 0)
		return 1;
	if (syscall(SYS_futex, &w, FUTEX_WAKE, 1, NULL, NULL, 0) != -1 || errno != ENOSYS)
		return 2;
	if (syscall(SYS_futex, &w, FUTEX_WAKE, 1, NULL, NULL, mark) != 0)
		return 3;
	if (syscall(SYS_futex, &w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, mark) != 0)
		return 4;
	/* the word is not 1: a marked wait returns EAGAIN at once, run */
	if (syscall(SYS_futex, &w, FUTEX_WAIT, 1, NULL, NULL, mark) != -1 || errno != EAGAIN)
		return 5;
	if (syscall(SYS_futex, &w, FUTEX_WAKE_BITSET, 1, NULL, NULL, mark) != -1 || errno != ENOSYS)
		return 6;
	if (syscall(SYS_futex, &w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0) != -1 || errno != ENOSYS)
		return 7;
	if (syscall(SYS_getpid) != getpid())
		return 8;
	return 0;
}

START_TEST(filter_untraced_and_agent_mark)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(filter_child());
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

static void asleep_on(struct tthread *t, uint64_t word, uint64_t seq)
{
	t->state = TS_KWAIT;
	t->wait = TW_FUTEX;
	t->wait_obj = word;
	t->wait_seq = seq;
	t->priv->fx.in_wait = true;
}

static void wake_request(struct tthread *t, unsigned op, uint64_t word, uint64_t n)
{
	memset(&t->req, 0, sizeof t->req);
	t->state = TS_REQ;
	t->req.hook = HK_FUTEX;
	t->req.kind = AVT_EV_FUTEX_WAKE;
	t->req.obj = word;
	t->req.obj2 = n;
	t->req.size = (uint16_t)op;
}

/* An untimed waiter nobody woke cannot run (no rescue left); a wake of one
 * on its word releases the oldest waiter, not the other. */
START_TEST(wake_releases_oldest_waiter)
{
	asleep_on(&th[1], WORD, 2);
	asleep_on(&th[2], WORD, 1);
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 0);
	ck_assert_int_eq(model_can_run(&tr, &th[2]), 0);
	wake_request(&th[0], FUTEX_WAKE_PRIVATE, WORD, 1);
	ck_assert_int_eq(model_can_commit(&tr, &th[0]), 1);
	futex_commit(&tr, &th[0]);
	ck_assert_int_eq(th[0].nevents, 1);
	ck_assert(th[2].woken);
	ck_assert(!th[1].woken);
	tr.rescue = 0; /* (an event gives the unwoken a few last-resort runs) */
	ck_assert_int_eq(model_can_run(&tr, &th[2]), 1);
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 0);
	/* a wake of another word wakes nobody here */
	wake_request(&th[0], FUTEX_WAKE, WORD + 4, 8);
	futex_commit(&tr, &th[0]);
	ck_assert(!th[1].woken);
}
END_TEST

/* A requeue wakes n on the word and moves the rest to the second word. */
START_TEST(requeue_moves_the_rest)
{
	asleep_on(&th[1], WORD, 1);
	asleep_on(&th[2], WORD, 2);
	wake_request(&th[0], FUTEX_CMP_REQUEUE_PRIVATE, WORD, 1);
	th[0].priv->fx.word2 = WORD + 8;
	th[0].priv->fx.n2 = 10;
	futex_commit(&tr, &th[0]);
	ck_assert(th[1].woken);
	ck_assert(!th[2].woken);
	ck_assert_uint_eq(th[2].wait_obj, WORD + 8);
}
END_TEST

/* A timed waiter may always run as a last resort (it times out); back at
 * another point, it is no waiter any more. */
START_TEST(timed_wait_and_wait_over)
{
	asleep_on(&th[1], WORD, 1);
	th[1].priv->fx.timed = true;
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 2);
	th[1].priv->expect_block = true;
	futex_wait_over(&th[1]);
	ck_assert_int_eq(th[1].wait, TW_NONE);
	ck_assert(!th[1].priv->expect_block);
	ck_assert(!th[1].priv->fx.in_wait);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracer_futex");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, classify);
	tcase_add_test(tc, decode_seccomp);
	tcase_add_test(tc, filter_untraced_and_agent_mark);
	tcase_add_test(tc, seccomp_stop_unreadable_runs_on);
	tcase_add_test(tc, wake_releases_oldest_waiter);
	tcase_add_test(tc, requeue_moves_the_rest);
	tcase_add_test(tc, timed_wait_and_wait_over);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
