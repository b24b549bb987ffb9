/*
 * The one decoder of wait statuses (tracer/ptrace_util.c): every kind of
 * stop a status can say, built with the kernel's encoding, no ptrace.
 */
#include <check.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "tracer/ptrace_util.h"
#include "unit_util.h"

/* the kernel's encodings (wait(2), ptrace(2)) */
#define EXITED(code) (((code) & 0xff) << 8)
#define STOPPED(sig) (((sig) << 8) | 0x7f)
#define EVENT(ev) (STOPPED(SIGTRAP) | ((ev) << 16))

START_TEST(decode_gone)
{
	struct ptu_status s;
	ptu_decode(EXITED(3), &s);
	ck_assert_int_eq(s.stop, PTU_EXITED);
	ck_assert_int_eq(s.code, 3);
	ck_assert(!s.stopped);
	ptu_decode(SIGKILL, &s);
	ck_assert_int_eq(s.stop, PTU_KILLED);
	ck_assert_int_eq(s.sig, SIGKILL);
	ck_assert(!s.stopped);
	ptu_decode(SIGSEGV | 0x80, &s); /* core dumped */
	ck_assert_int_eq(s.stop, PTU_KILLED);
	ck_assert_int_eq(s.sig, SIGSEGV);
}
END_TEST

START_TEST(decode_signal_stops)
{
	struct ptu_status s;
	ptu_decode(STOPPED(SIGTRAP), &s);
	ck_assert_int_eq(s.stop, PTU_SIGNAL);
	ck_assert_int_eq(s.sig, SIGTRAP);
	ck_assert(s.stopped);
	ptu_decode(STOPPED(SIGUSR1), &s);
	ck_assert_int_eq(s.stop, PTU_SIGNAL);
	ck_assert_int_eq(s.sig, SIGUSR1);
	/* a group-stop or an interrupt of a seized task */
	ptu_decode(STOPPED(SIGSTOP) | (PTRACE_EVENT_STOP << 16), &s);
	ck_assert_int_eq(s.stop, PTU_EV_STOP);
	ck_assert_int_eq(s.sig, SIGSTOP);
	ck_assert(s.stopped);
}
END_TEST

START_TEST(decode_events)
{
	struct ptu_status s;
	ptu_decode(EVENT(PTRACE_EVENT_CLONE), &s);
	ck_assert_int_eq(s.stop, PTU_EV_CLONE);
	ptu_decode(EVENT(PTRACE_EVENT_FORK), &s);
	ck_assert_int_eq(s.stop, PTU_EV_FORK);
	ck_assert(!s.vfork);
	ptu_decode(EVENT(PTRACE_EVENT_VFORK), &s);
	ck_assert_int_eq(s.stop, PTU_EV_FORK);
	ck_assert(s.vfork);
	ptu_decode(EVENT(PTRACE_EVENT_EXEC), &s);
	ck_assert_int_eq(s.stop, PTU_EV_EXEC);
	ptu_decode(EVENT(PTRACE_EVENT_EXIT), &s);
	ck_assert_int_eq(s.stop, PTU_EV_EXIT);
	ck_assert(s.stopped);
	/* an event stop is not a SIGTRAP signal stop (WSTOPSIG says SIGTRAP) */
	ck_assert_int_eq(s.sig, SIGTRAP);
	ptu_decode(EVENT(PTRACE_EVENT_VFORK_DONE), &s);
	ck_assert_int_eq(s.stop, PTU_EV_VFORK_DONE);
	ck_assert(s.stopped);
	ck_assert_str_eq(ptu_stop_name(PTU_EV_EXEC), "exec");
}
END_TEST

START_TEST(resume_gone_thread)
{
	/* no such task (pid_max is below 2^22): gone, not an error */
	ck_assert_int_eq(ptu_resume(4194304 + 7, 0), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracer_ptu");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, decode_gone);
	tcase_add_test(tc, decode_signal_stops);
	tcase_add_test(tc, decode_events);
	tcase_add_test(tc, resume_gone_thread);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
