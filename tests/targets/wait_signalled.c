/*
 * A timed wait, then a signal (the shape of GLib's cond test
 * "wait-until/contended-and-interrupted"): main waits on a futex word with
 * a relative timeout nobody ends early; a second thread sleeps five times
 * that long, then sends main a signal whose handler has no SA_RESTART,
 * then releases main's second, untimed wait.
 *
 * The kernel's answer is fixed: main's timed wait ends ETIMEDOUT when its
 * time has passed, long before the signal comes; the signal then interrupts
 * the untimed wait (EINTR there is expected, main waits again).  A tracer
 * that keeps main stopped in its timed wait past its time and lets the
 * signal come first makes that wait return EINTR: the program prints what
 * it saw and exits 1.  Correct: prints "ok", exits 0.
 *
 * usage: wait_signalled [TIMEOUT_MS]   (default 20)
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long timeout_ms = 20;
static pid_t main_tid;
static uint32_t never;       /* nobody wakes it */
static uint32_t released;    /* 1 once the sender is done */
static uint32_t waiting;     /* main is about to make its timed wait */
static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	handled = 1;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static void *sender(void *arg)
{
	/* start the clock once main is (all but) in its timed wait */
	while (!__atomic_load_n(&waiting, __ATOMIC_ACQUIRE))
		futex(&waiting, FUTEX_WAIT_PRIVATE, 0, NULL);
	struct timespec ts = { 0, timeout_ms * 5 * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	futex(&released, FUTEX_WAKE_PRIVATE, 1, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		timeout_ms = atol(argv[1]);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal; /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	main_tid = (pid_t)syscall(SYS_gettid);
	pthread_t t;
	pthread_create(&t, NULL, sender, NULL);

	struct timespec ts = { 0, timeout_ms * 1000000L };
	__atomic_store_n(&waiting, 1, __ATOMIC_RELEASE);
	futex(&waiting, FUTEX_WAKE_PRIVATE, 1, NULL);
	long r = futex(&never, FUTEX_WAIT_PRIVATE, 0, &ts);
	int err = errno;
	int bad = 0;
	if (r != -1 || err != ETIMEDOUT) {
		printf("timed futex wait: %s (expected a timeout)\n", r == 0 ? "woken by nobody" : strerror(err));
		bad = 1;
	}
	while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
		futex(&released, FUTEX_WAIT_PRIVATE, 0, NULL); /* EINTR here is the kernel's */
	pthread_join(t, NULL);
	if (!handled) {
		puts("the signal was never handled");
		bad = 1;
	}
	if (bad)
		return 1;
	puts("ok");
	return 0;
}
