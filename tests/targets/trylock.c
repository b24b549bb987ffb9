/*
 * trylock: failing try/timed locks whose failures do not depend on the
 * schedule.  main locks `held_lock`, creates one thread, joins it, and only
 * then unlocks: so while the thread lives, `held_lock` is held by T0.  The
 * thread calls pthread_mutex_trylock(&held_lock) K times (each must fail
 * with EBUSY), pthread_mutex_timedlock(&held_lock) once with a deadline
 * one second in the past (must fail with ETIMEDOUT), and
 * pthread_mutex_trylock(&free_lock) once (must succeed; then unlocks it).
 *
 * Usage: trylock [K=5]
 * Exits 0 iff every call returned what is said above.
 *
 * A recording must contain, under any schedule:
 *   acquire       obj_name held_lock   1   (T0)
 *   release       obj_name held_lock   1   (T0, after the join)
 *   trylock_fail  obj_name held_lock   K+1 (T1: K at <TRYLOCK LINE>, func
 *                                      try_held; 1 at <TIMEDLOCK LINE>, func
 *                                      timed_held, flagged timed out)
 *   acquire       obj_name free_lock   1   (T1, the successful trylock)
 *   release       obj_name free_lock   1   (T1)
 *   create 1, join 1
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

static long tries;

__attribute__((noinline)) static int try_held(void)
{
	return pthread_mutex_trylock(&held_lock); /* TRYLOCK LINE */
}

__attribute__((noinline)) static int timed_held(void)
{
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec -= 1;
	return pthread_mutex_timedlock(&held_lock, &deadline); /* TIMEDLOCK LINE */
}

__attribute__((noinline)) static int try_free(void)
{
	int r = pthread_mutex_trylock(&free_lock); /* FREE TRYLOCK LINE */
	if (r == 0)
		pthread_mutex_unlock(&free_lock);
	return r;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long bad = 0;
	(void)arg;
	for (long i = 0; i < tries; i++)
		if (try_held() != EBUSY)
			bad++;
	if (timed_held() != ETIMEDOUT)
		bad++;
	if (try_free() != 0)
		bad++;
	return (void *)(intptr_t)bad;
}

int main(int argc, char **argv)
{
	tries = argc > 1 ? strtol(argv[1], NULL, 10) : 5;
	if (tries < 0) {
		fprintf(stderr, "usage: trylock [TRIES=5]\n");
		return 2;
	}

	pthread_t tid;
	void *bad;
	pthread_mutex_lock(&held_lock);
	if (pthread_create(&tid, NULL, worker, NULL) != 0)
		return 2;
	pthread_join(tid, &bad);
	pthread_mutex_unlock(&held_lock);

	printf("unexpected results: %ld\n", (long)(intptr_t)bad);
	return bad == 0 ? 0 : 1;
}
