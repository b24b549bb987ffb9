/*
 * Blocking calls under many hand-overs (issue 29, "Fidelity"): every kind
 * of wait the kernel times or ends must return exactly as it does
 * natively while other threads hand a mutex back and forth, so avtrace
 * stops, sets aside and resumes the waiters often (interrupts, group
 * stops, agent hand-over scripts).
 *
 * Each waiter thread makes its calls ROUNDS times, each round after a few
 * lock/unlock pairs of its own (so a wait starts right after a hand-over):
 *   futexer  FUTEX_WAIT with no timeout on a generation word the waker
 *            bumps and then wakes (a return with the word unchanged is a
 *            wake by nobody); FUTEX_WAIT with a relative timeout, and
 *            FUTEX_WAIT_BITSET with absolute deadlines (CLOCK_MONOTONIC
 *            and FUTEX_CLOCK_REALTIME), on a word nobody wakes
 *   sleeper  nanosleep, clock_nanosleep to an absolute deadline, poll
 *            with a timeout on a pipe nobody writes
 *   reader   read on a pipe the waker writes one byte a round into
 *   conder   pthread_cond_timedwait (CLOCK_MONOTONIC) nobody signals
 * Two lockers and the waker meanwhile take and release one mutex many
 * times.
 *
 * Every check is what the kernel guarantees natively, never a guessed
 * duration: a timeout returns its timeout code once its clock has reached
 * the deadline (elapsed >= timeout, a lower bound only), an untimed wait
 * returns when its condition holds, nothing returns EINTR (no signal is
 * sent).  Any deviation: prints what and abort()s.  Natively it always
 * prints "ok" and exits 0.
 *
 * With SIGNALS 1 a pester thread sends the four waiters SIGUSR1 (handler
 * with SA_RESTART) every 2 ms until they are done: the untimed futex wait
 * and the read are restarted by the kernel (EINTR there is avtrace's);
 * the timed calls may natively return EINTR and are made again for the
 * time left (pthread_cond_timedwait never returns it).
 *
 * usage: fidelity_waits [ROUNDS [TIMEOUT_MS [LOCKS [SIGNALS]]]]
 *        (default 3 10 150 0)
 */
#include <errno.h>
#include <signal.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int rounds = 3;
static long tmo_ms = 10;
static int locks = 150;            /* lock/unlock pairs per locker */
static uint32_t gen;               /* bumped by the waker once a round */
static uint32_t never;             /* nobody changes or wakes it */
static int data_pipe[2];           /* the waker writes one byte a round */
static int idle_pipe[2];           /* nobody writes */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;          /* nobody signals it */
static long shared;                /* under m */
static int signals;                /* the pester thread runs */
static pid_t waiter_tid[4];        /* futexer, sleeper, reader, conder */
static int waiters_done;
static volatile sig_atomic_t caught;

static void on_usr1(int sig)
{
	caught++;
}

/* A timed call interrupted by a handled signal: natively possible only
 * when signals are sent (the caller makes it again for the time left). */
static bool again(long rc, int err)
{
	return signals && rc == -1 && err == EINTR;
}

static uint64_t left(uint64_t deadline, uint64_t now)
{
	return deadline > now ? deadline - now : 0;
}

static void fail(const char *what, const char *why)
{
	/* on both: a replay captures stdout */
	printf("fidelity_waits: %s: %s (errno %d)\n", what, why, errno);
	fprintf(stderr, "fidelity_waits: %s: %s\n", what, why);
	fflush(NULL);
	abort();
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec ts_of(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	return ts;
}

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts, uint32_t mask)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, mask);
}

/* A few hand-overs of m: the next wait starts right after one.  glibc's
 * lock and unlock never set errno (their futex calls leave it alone), so
 * a value put there before must still be there after them. */
static void churn(int n)
{
	for (int i = 0; i < n; i++) {
		errno = 4242 + i;
		pthread_mutex_lock(&m);
		shared++;
		pthread_mutex_unlock(&m);
		if (errno != 4242 + i)
			fail("pthread_mutex_lock/unlock", "changed errno");
	}
}

/* A timeout: -1/ETIMEDOUT (or rc 0 where the call returns 0), and the
 * clock at least at the deadline. */
static void timed_out(const char *what, long rc, int err, long want_rc, uint64_t after, uint64_t deadline)
{
	if (rc != want_rc)
		fail(what, rc == 0 ? "returned 0 (woken by nobody)" : rc > 0 ? "ready with nothing to read"
								    : strerror(err));
	if (want_rc == -1 && err != ETIMEDOUT)
		fail(what, strerror(err));
	if (after < deadline)
		fail(what, "timed out before its time");
}

static void untimed_futex(int r)
{
	while (__atomic_load_n(&gen, __ATOMIC_SEQ_CST) == (uint32_t)r) {
		long rc = futex(&gen, FUTEX_WAIT_PRIVATE, (uint32_t)r, NULL, 0);
		int err = errno;
		if (__atomic_load_n(&gen, __ATOMIC_SEQ_CST) != (uint32_t)r)
			break; /* woken, or the word changed before it slept */
		if (rc == 0)
			fail("futex wait", "returned 0 with the word unchanged (woken by nobody)");
		fail("futex wait", err == EAGAIN ? "EAGAIN with the word unchanged" : strerror(err));
	}
}

static void timed_futexes(void)
{
	uint64_t t = tmo_ms * 1000000ull;
	struct timespec rel, abs;
	uint64_t dl = now_ns(CLOCK_MONOTONIC) + t;
	long rc;
	do {
		rel = ts_of(left(dl, now_ns(CLOCK_MONOTONIC)));
		rc = futex(&never, FUTEX_WAIT_PRIVATE, 0, &rel, 0);
	} while (again(rc, errno));
	timed_out("futex wait with a relative timeout", rc, errno, -1, now_ns(CLOCK_MONOTONIC), dl);

	dl = now_ns(CLOCK_MONOTONIC) + t;
	abs = ts_of(dl);
	do
		rc = futex(&never, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, FUTEX_BITSET_MATCH_ANY);
	while (again(rc, errno));
	timed_out("FUTEX_WAIT_BITSET to a CLOCK_MONOTONIC deadline", rc, errno, -1, now_ns(CLOCK_MONOTONIC), dl);

	dl = now_ns(CLOCK_REALTIME) + t;
	abs = ts_of(dl);
	do
		rc = futex(&never, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &abs,
			   FUTEX_BITSET_MATCH_ANY);
	while (again(rc, errno));
	timed_out("FUTEX_WAIT_BITSET to a CLOCK_REALTIME deadline", rc, errno, -1, now_ns(CLOCK_REALTIME), dl);
}

static void waiter_begins(int i)
{
	__atomic_store_n(&waiter_tid[i], (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
}

static void waiter_ends(void)
{
	__atomic_add_fetch(&waiters_done, 1, __ATOMIC_SEQ_CST);
}

static void *futexer(void *arg)
{
	waiter_begins(0);
	for (int r = 0; r < rounds; r++) {
		churn(3);
		untimed_futex(r);
		churn(3);
		timed_futexes();
	}
	waiter_ends();
	return NULL;
}

static void *sleeper(void *arg)
{
	uint64_t t = tmo_ms * 1000000ull;
	waiter_begins(1);
	for (int r = 0; r < rounds; r++) {
		churn(3);
		struct timespec rel = ts_of(t), rem;
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		long rc;
		for (;;) {
			rc = nanosleep(&rel, &rem);
			if (!again(rc, errno))
				break;
			rel = rem;
		}
		timed_out("nanosleep", rc == 0 ? -1 : rc, rc == 0 ? ETIMEDOUT : errno, -1,
			  now_ns(CLOCK_MONOTONIC), t0 + t);

		churn(3);
		uint64_t dl = now_ns(CLOCK_MONOTONIC) + t;
		struct timespec abs = ts_of(dl);
		int e;
		while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL)) == EINTR && signals)
			;
		timed_out("clock_nanosleep to a deadline", e == 0 ? -1 : e, e == 0 ? ETIMEDOUT : e, -1,
			  now_ns(CLOCK_MONOTONIC), dl);

		churn(3);
		struct pollfd p = { .fd = idle_pipe[0], .events = POLLIN };
		dl = now_ns(CLOCK_MONOTONIC) + t;
		do
			rc = poll(&p, 1, (int)((left(dl, now_ns(CLOCK_MONOTONIC)) + 999999) / 1000000));
		while (again(rc, errno));
		timed_out("poll with a timeout", rc, errno, 0, now_ns(CLOCK_MONOTONIC), dl);
	}
	waiter_ends();
	return NULL;
}

static void *reader(void *arg)
{
	waiter_begins(2);
	for (int r = 0; r < rounds; r++) {
		churn(3);
		unsigned char ch;
		ssize_t n = read(data_pipe[0], &ch, 1);
		if (n != 1)
			fail("read on a pipe", n < 0 ? strerror(errno) : "returned no byte");
		if (ch != (unsigned char)r)
			fail("read on a pipe", "read a byte not written yet");
	}
	waiter_ends();
	return NULL;
}

static void *conder(void *arg)
{
	uint64_t t = tmo_ms * 1000000ull;
	waiter_begins(3);
	for (int r = 0; r < rounds; r++) {
		churn(3);
		uint64_t dl = now_ns(CLOCK_MONOTONIC) + t;
		struct timespec abs = ts_of(dl);
		pthread_mutex_lock(&cm);
		int e = pthread_cond_timedwait(&cv, &cm, &abs);
		uint64_t after = now_ns(CLOCK_MONOTONIC);
		pthread_mutex_unlock(&cm);
		/* POSIX allows spurious wakeups, but glibc gives none with no
		 * signaller: one seen is avtrace's */
		timed_out("pthread_cond_timedwait", e == ETIMEDOUT ? -1 : e == 0 ? 0 : 1,
			  e == ETIMEDOUT ? ETIMEDOUT : e, -1, after, dl);
	}
	waiter_ends();
	return NULL;
}

/* Releases a round of the futexer and the reader after lock work of its
 * own (they may or may not be asleep yet: either is correct). */
static void *waker(void *arg)
{
	for (int r = 0; r < rounds; r++) {
		churn(locks / rounds);
		__atomic_store_n(&gen, (uint32_t)r + 1, __ATOMIC_SEQ_CST);
		futex(&gen, FUTEX_WAKE_PRIVATE, 1, NULL, 0);
		unsigned char ch = (unsigned char)r;
		if (write(data_pipe[1], &ch, 1) != 1)
			fail("waker", strerror(errno));
	}
	return NULL;
}

/* SIGUSR1 to every waiter every 2 ms until all four are done. */
static void *pester(void *arg)
{
	while (__atomic_load_n(&waiters_done, __ATOMIC_SEQ_CST) < 4) {
		for (int i = 0; i < 4; i++) {
			pid_t tid = __atomic_load_n(&waiter_tid[i], __ATOMIC_SEQ_CST);
			if (tid)
				syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
		}
		struct timespec ts = { 0, 2000000 };
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return NULL;
}

static void *locker(void *arg)
{
	churn(locks);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		tmo_ms = atol(argv[2]);
	if (argc > 3)
		locks = atoi(argv[3]);
	if (argc > 4)
		signals = atoi(argv[4]);
	if (rounds < 1 || rounds > 255 || tmo_ms < 1 || tmo_ms > 1000 || locks < rounds) {
		fprintf(stderr, "usage: fidelity_waits [ROUNDS [TIMEOUT_MS [LOCKS [SIGNALS]]]]\n");
		return 2;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(data_pipe) || pipe(idle_pipe))
		return 2;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	void *(*fn[])(void *) = { futexer, sleeper, reader, conder, waker, locker, locker, pester };
	enum { N = sizeof fn / sizeof fn[0] };
	int n = signals ? N : N - 1;
	pthread_t th[N];
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fn[i], NULL))
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	long want = 2L * locks + (locks / rounds) * rounds + 21L * rounds; /* churn()s: 6+9+3+3 a round */
	if (shared != want) {
		fprintf(stderr, "fidelity_waits: %ld lock/unlock pairs, not %ld\n", shared, want);
		abort();
	}
	puts("ok");
	return 0;
}
