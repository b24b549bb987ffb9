/*
 * Blocking calls must return under avtrace exactly as the kernel returns
 * them natively (issue 29, "Fidelity"): a timed wait times out only once
 * its time has passed, an untimed one returns only when it is woken or its
 * condition holds, and no call returns EINTR (nothing here installs a
 * signal handler, so the kernel never lets one be seen).
 *
 * The waiter makes each kind of blocking call in turn while a busy thread
 * computes beside it (so a serializing scheduler has a reason to stop and
 * switch threads while the waiter sleeps), and a waker releases the
 * untimed waits.  Every check compares with what the kernel guarantees,
 * never with a guessed duration: elapsed >= timeout for a timeout, the
 * woken value for a wake.  Correct: prints "ok" and exits 0; any early or
 * interrupted return prints what and exits 1.
 *
 * usage: wait_fidelity [TIMEOUT_MS]   (default 40)
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long timeout_ms = 40;
static int failures;
static uint32_t word;          /* futex word of the untimed wait */
static uint32_t never;         /* futex word nobody wakes */
static int wake_pipe[2];       /* the waker writes one byte */
static int idle_pipe[2];       /* nobody ever writes */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t b1, b2; /* the waiter is about to wait (b1: futex, b2: read) */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void bad(const char *what, const char *why)
{
	printf("%s: %s\n", what, why);
	failures++;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static struct timespec rel(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	return ts;
}

/* Computes (no shared memory, no call) while the waiter sleeps: a
 * scheduler that serializes threads has this one to run meanwhile. */
static void *busy(void *arg)
{
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < 60000000ul; i++)
		x = x * 6364136223846793005ul + 1;
	return NULL;
}

/* Releases the waiter's untimed waits.  The waiter may or may not be
 * asleep yet when the wake comes: both are correct, the kernel's answer
 * (a wake, or EAGAIN / data already there) is what is checked. */
static void *waker(void *arg)
{
	pthread_barrier_wait(&b1);
	__atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
	futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL);
	pthread_barrier_wait(&b2);
	if (write(wake_pipe[1], "x", 1) != 1)
		bad("waker", strerror(errno));
	return NULL;
}

static void timed_futex(void)
{
	struct timespec ts = rel(timeout_ms);
	double t0 = now_ms();
	long r = futex(&never, FUTEX_WAIT_PRIVATE, 0, &ts);
	double el = now_ms() - t0;
	if (r != -1 || errno != ETIMEDOUT)
		bad("futex wait with timeout", r == 0 ? "returned 0 (woken by nobody)" : strerror(errno));
	else if (el < timeout_ms)
		bad("futex wait with timeout", "timed out before its time");
}

static void untimed_futex(void)
{
	pthread_barrier_wait(&b1);
	for (;;) {
		long r = futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL);
		if (r == -1 && errno == EINTR) {
			bad("futex wait", "EINTR");
			return;
		}
		if (__atomic_load_n(&word, __ATOMIC_SEQ_CST) == 1)
			return;
		if (r == 0) {
			bad("futex wait", "returned 0 with the word unchanged (woken by nobody)");
			return;
		}
	}
}

static void sleep_ns(void)
{
	struct timespec ts = rel(timeout_ms), rem;
	double t0 = now_ms();
	int r = nanosleep(&ts, &rem);
	double el = now_ms() - t0;
	if (r != 0)
		bad("nanosleep", strerror(errno));
	else if (el < timeout_ms)
		bad("nanosleep", "returned before its time");
}

static void poll_idle(void)
{
	struct pollfd p = { .fd = idle_pipe[0], .events = POLLIN };
	double t0 = now_ms();
	int r = poll(&p, 1, (int)timeout_ms);
	double el = now_ms() - t0;
	if (r != 0)
		bad("poll with timeout", r < 0 ? strerror(errno) : "ready with no data written");
	else if (el < timeout_ms)
		bad("poll with timeout", "timed out before its time");
}

static void read_pipe(void)
{
	char ch;
	pthread_barrier_wait(&b2);
	ssize_t r = read(wake_pipe[0], &ch, 1);
	if (r != 1)
		bad("read on a pipe", r < 0 ? strerror(errno) : "returned no byte");
}

static void cond_timed(void)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += (timeout_ms % 1000) * 1000000L;
	dl.tv_sec += timeout_ms / 1000 + dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&m);
	int r = pthread_cond_timedwait(&c, &m, &dl);
	struct timespec after;
	clock_gettime(CLOCK_REALTIME, &after);
	pthread_mutex_unlock(&m);
	/* POSIX allows spurious wakeups of a condition wait, but the kernel
	 * gives none here (nobody signals c): one seen is avtrace's. */
	if (r != ETIMEDOUT)
		bad("pthread_cond_timedwait", r == 0 ? "returned 0 (signalled by nobody)" : strerror(r));
	else if (after.tv_sec < dl.tv_sec || (after.tv_sec == dl.tv_sec && after.tv_nsec < dl.tv_nsec))
		bad("pthread_cond_timedwait", "timed out before its deadline");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		timeout_ms = atol(argv[1]);
	if (pipe(wake_pipe) || pipe(idle_pipe))
		return 2;
	pthread_barrier_init(&b1, NULL, 2);
	pthread_barrier_init(&b2, NULL, 2);
	pthread_t tb, tw;
	pthread_create(&tb, NULL, busy, NULL);
	pthread_create(&tw, NULL, waker, NULL);
	timed_futex();
	untimed_futex();
	sleep_ns();
	poll_idle();
	read_pipe();
	cond_timed();
	timed_futex();
	pthread_join(tb, NULL);
	pthread_join(tw, NULL);
	if (failures)
		return 1;
	puts("ok");
	return 0;
}
