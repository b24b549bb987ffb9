/*
 * Scheduling: the record policy's rounds (tracer/sched.c) and the yield
 * steps of schedules (trace/schedule.c) that keep an explored run's
 * event-less turns.
 */
#include <check.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace/schedule.h"
#include "tracer/ptrace_util.h"
#include "tracer/tracer_int.h"
#include "unit_util.h"

/* ---- round robin */

static struct tracer tr;
static struct process proc;
static struct process *procs[1] = { &proc };
static struct tthread th[4];
static struct tthread *thp[4];

static void mk(size_t n)
{
	memset(&tr, 0, sizeof tr);
	memset(&proc, 0, sizeof proc);
	tr.procs = procs;
	tr.nprocs = 1;
	tr.proc = &proc;
	memset(th, 0, sizeof th);
	for (size_t i = 0; i < n; i++) {
		th[i].lid = (uint32_t)i;
		th[i].state = TS_READY;
		thp[i] = &th[i];
	}
	proc.thr = thp;
	proc.nthr = n;
	tr.current = UINT32_MAX;
}

/* A compute-bound thread beside a sleeper: the runnable thread spun
 * through its slice, the sleeper is a last resort.  The last resort gets
 * a turn, and then the runnable one again: it must never starve (the
 * preempted flag used to stay set, so every later pick went to the
 * sleeper). */
START_TEST(test_last_resort_starts_a_round)
{
	mk(2);
	struct tthread *run[1] = { &th[0] }, *last[1] = { &th[1] };
	bool use_last;
	th[0].preempted = true;
	tr.current = 0;
	ck_assert_int_eq(tracer_pick_round_robin(&tr, run, 1, last, 1, &use_last), 0);
	ck_assert(use_last);
	ck_assert(!th[0].preempted);
	tr.current = 1;
	ck_assert_int_eq(tracer_pick_round_robin(&tr, run, 1, last, 1, &use_last), 0);
	ck_assert(!use_last);
}
END_TEST

/* The current thread keeps running while its turn lasts; a thread whose
 * turn is used comes after those whose turn is not. */
START_TEST(test_turns)
{
	mk(3);
	struct tthread *run[3] = { &th[0], &th[1], &th[2] };
	bool use_last;
	tr.current = 1;
	ck_assert_int_eq(tracer_pick_round_robin(&tr, run, 3, NULL, 0, &use_last), 1);
	th[1].preempted = true;
	ck_assert_int_eq(tracer_pick_round_robin(&tr, run, 3, NULL, 0, &use_last), 2);
	th[2].preempted = true;
	ck_assert_int_eq(tracer_pick_round_robin(&tr, run, 3, NULL, 0, &use_last), 0);
	th[0].preempted = true; /* everyone used it, no last resort: round robin */
	ck_assert_int_eq(tracer_pick_round_robin(&tr, run, 3, NULL, 0, &use_last), 2);
	ck_assert(!use_last);
}
END_TEST

/* ---- yield steps */

START_TEST(test_yield_round_trip)
{
	char path[] = "/tmp/avt_test_sched_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	struct schedule *s = schedule_new();
	ck_assert_int_eq(schedule_append_run(s, 0, 3), 0);
	ck_assert_int_eq(schedule_append_yield(s, 2, 4), 0);
	ck_assert_int_eq(schedule_append_yield(s, 2, 1), 0); /* merges */
	ck_assert_int_eq(schedule_append_run(s, 2, 1), 0);   /* a run never merges into a yield */
	ck_assert_int_eq(schedule_append_yield(s, 1, 0), -1);
	s->has_free = 1;
	ck_assert_uint_eq(s->nsteps, 3);
	ck_assert_uint_eq(schedule_total_events(s), 4);
	ck_assert_int_eq(schedule_write(s, path), 0);
	schedule_free(s);

	char err[256];
	s = schedule_read(path, err, sizeof err);
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_uint_eq(s->nsteps, 3);
	ck_assert_uint_eq(s->steps[1].kind, SCHED_YIELD);
	ck_assert_uint_eq(s->steps[1].thread, 2);
	ck_assert_uint_eq(s->steps[1].count, 5);
	ck_assert_uint_eq(s->steps[2].kind, SCHED_RUN);
	schedule_free(s);

	FILE *f = fopen(path, "w");
	fputs("avtrace-schedule 1\nyield T1\n", f);
	fclose(f);
	ck_assert_ptr_null(schedule_read(path, err, sizeof err));
	ck_assert_msg(strstr(err, ":2: count must be a positive integer") != NULL, "%s", err);
	f = fopen(path, "w");
	fputs("avtrace-schedule 1\nfree\nyield T1 1\n", f);
	fclose(f);
	ck_assert_ptr_null(schedule_read(path, err, sizeof err));
	ck_assert_msg(strstr(err, ":3: 'yield' after 'free'") != NULL, "%s", err);
	unlink(path);
}
END_TEST

/* ---- a sleep only the process's own threads can end (loop.c's stuck
 * turn): a private futex wait with no timeout, and nothing else */

enum sleep_kind { SLEEP_WAIT, SLEEP_BITSET, SLEEP_TIMED, SLEEP_SHARED, SLEEP_READ };

/* A child asleep as kind says; its pid once /proc says it sleeps. */
static pid_t sleeper(enum sleep_kind kind)
{
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static int word;
		struct timespec t = { 600, 0 };
		switch (kind) {
		case SLEEP_WAIT:
			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
			break;
		case SLEEP_BITSET:
			syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL,
				FUTEX_BITSET_MATCH_ANY);
			break;
		case SLEEP_TIMED:
			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
			break;
		case SLEEP_SHARED:
			syscall(SYS_futex, &word, FUTEX_WAIT, 0, NULL, NULL, 0);
			break;
		case SLEEP_READ: {
			char c;
			close(fds[1]);
			(void)!read(fds[0], &c, 1);
			break;
		}
		}
		_exit(0);
	}
	/* told by the child's state, not by the clock (bounded: 5 s) */
	for (int i = 0; i < 50000 && ptu_thread_state(pid, pid) != 'S'; i++)
		usleep(100);
	ck_assert_int_eq(ptu_thread_state(pid, pid), 'S');
	close(fds[0]);
	close(fds[1]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

START_TEST(test_futex_untimed)
{
	static const struct {
		enum sleep_kind kind;
		bool stuck;
	} cases[] = {
		{ SLEEP_WAIT, true },    /* a contended internal lock */
		{ SLEEP_BITSET, true },  /* a condition wait, glibc's */
		{ SLEEP_TIMED, false },  /* its timeout ends it */
		{ SLEEP_SHARED, false }, /* another process may wake it */
		{ SLEEP_READ, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pid_t pid = sleeper(cases[i].kind);
		ck_assert_msg(ptu_thread_futex_untimed(pid, pid) == cases[i].stuck, "case %zu", i);
		reap(pid);
	}
	/* a thread that is not in a system call */
	ck_assert(!ptu_thread_futex_untimed(getpid(), getpid()));
}
END_TEST

static Suite *sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *rr = tcase_create("round_robin");
	TCase *y = tcase_create("yield");
	tcase_add_test(rr, test_last_resort_starts_a_round);
	tcase_add_test(rr, test_turns);
	suite_add_tcase(s, rr);
	tcase_add_test(y, test_yield_round_trip);
	suite_add_tcase(s, y);
	TCase *st = tcase_create("stuck");
	tcase_add_test(st, test_futex_untimed);
	suite_add_tcase(s, st);
	return s;
}

int main(void)
{
	return unit_run(sched_suite());
}
