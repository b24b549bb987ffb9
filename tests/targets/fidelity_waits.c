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
 * ever sent).  Any deviation: prints what and abort()s.  Natively it
 * always prints "ok" and exits 0.
 *
 * usage: fidelity_waits [ROUNDS [TIMEOUT_MS [LOCKS]]]   (default 3 10 150)
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

static void fail(const char *what, const char *why)
{
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

/* A few hand-overs of m: the next wait starts right after one. */
static void churn(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		shared++;
		pthread_mutex_unlock(&m);
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
	struct timespec rel = ts_of(t), abs;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	long rc = futex(&never, FUTEX_WAIT_PRIVATE, 0, &rel, 0);
	timed_out("futex wait with a relative timeout", rc, errno, -1, now_ns(CLOCK_MONOTONIC), t0 + t);

	uint64_t dl = now_ns(CLOCK_MONOTONIC) + t;
	abs = ts_of(dl);
	rc = futex(&never, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, FUTEX_BITSET_MATCH_ANY);
	timed_out("FUTEX_WAIT_BITSET to a CLOCK_MONOTONIC deadline", rc, errno, -1, now_ns(CLOCK_MONOTONIC), dl);

	dl = now_ns(CLOCK_REALTIME) + t;
	abs = ts_of(dl);
	rc = futex(&never, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, &abs, FUTEX_BITSET_MATCH_ANY);
	timed_out("FUTEX_WAIT_BITSET to a CLOCK_REALTIME deadline", rc, errno, -1, now_ns(CLOCK_REALTIME), dl);
}

static void *futexer(void *arg)
{
	for (int r = 0; r < rounds; r++) {
		churn(3);
		untimed_futex(r);
		churn(3);
		timed_futexes();
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	uint64_t t = tmo_ms * 1000000ull;
	for (int r = 0; r < rounds; r++) {
		churn(3);
		struct timespec rel = ts_of(t), rem;
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		long rc = nanosleep(&rel, &rem);
		timed_out("nanosleep", rc == 0 ? -1 : rc, rc == 0 ? ETIMEDOUT : errno, -1,
			  now_ns(CLOCK_MONOTONIC), t0 + t);

		churn(3);
		uint64_t dl = now_ns(CLOCK_MONOTONIC) + t;
		struct timespec abs = ts_of(dl);
		int e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
		timed_out("clock_nanosleep to a deadline", e == 0 ? -1 : e, e == 0 ? ETIMEDOUT : e, -1,
			  now_ns(CLOCK_MONOTONIC), dl);

		churn(3);
		struct pollfd p = { .fd = idle_pipe[0], .events = POLLIN };
		t0 = now_ns(CLOCK_MONOTONIC);
		rc = poll(&p, 1, (int)tmo_ms);
		timed_out("poll with a timeout", rc, errno, 0, now_ns(CLOCK_MONOTONIC), t0 + t);
	}
	return NULL;
}

static void *reader(void *arg)
{
	for (int r = 0; r < rounds; r++) {
		churn(3);
		unsigned char ch;
		ssize_t n = read(data_pipe[0], &ch, 1);
		if (n != 1)
			fail("read on a pipe", n < 0 ? strerror(errno) : "returned no byte");
		if (ch != (unsigned char)r)
			fail("read on a pipe", "read a byte not written yet");
	}
	return NULL;
}

static void *conder(void *arg)
{
	uint64_t t = tmo_ms * 1000000ull;
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
	if (rounds < 1 || rounds > 255 || tmo_ms < 1 || tmo_ms > 1000 || locks < rounds) {
		fprintf(stderr, "usage: fidelity_waits [ROUNDS [TIMEOUT_MS [LOCKS]]]\n");
		return 2;
	}
	if (pipe(data_pipe) || pipe(idle_pipe))
		return 2;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	void *(*fn[])(void *) = { futexer, sleeper, reader, conder, waker, locker, locker };
	enum { N = sizeof fn / sizeof fn[0] };
	pthread_t th[N];
	for (int i = 0; i < N; i++)
		if (pthread_create(&th[i], NULL, fn[i], NULL))
			return 2;
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	long want = 2L * locks + (locks / rounds) * rounds + 21L * rounds; /* churn()s: 6+9+3+3 a round */
	if (shared != want) {
		fprintf(stderr, "fidelity_waits: %ld lock/unlock pairs, not %ld\n", shared, want);
		abort();
	}
	puts("ok");
	return 0;
}
