/*
 * barrier: N threads x R rounds of pthread_barrier_wait on the global
 * `round_barrier` (count N).  Before each wait a thread counts its arrival
 * (an atomic, not a sync call); after it, it checks that all N arrivals of
 * that round happened.  Exactly one waiter per round gets
 * PTHREAD_BARRIER_SERIAL_THREAD.
 *
 * Usage: barrier [N=4] [R=3]
 * Exits 0 iff every check held and there were exactly R serial returns.
 *
 * A recording must contain, under any schedule:
 *   barrier  obj_name round_barrier   N*R   (12 by default), func
 *            wait_round, site barrier.c:<BARRIER LINE>; R of them per thread
 *   create N (by T0), join N (by T0); main does not wait on the barrier
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

pthread_barrier_t round_barrier;
long arrived;
long serial_returns;

static long nthreads, rounds;

__attribute__((noinline)) static int wait_round(void)
{
	return pthread_barrier_wait(&round_barrier); /* BARRIER LINE */
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long bad = 0;
	(void)arg;
	for (long r = 0; r < rounds; r++) {
		__atomic_fetch_add(&arrived, 1, __ATOMIC_SEQ_CST);
		if (wait_round() == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_fetch_add(&serial_returns, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < nthreads * (r + 1))
			bad++;
	}
	return (void *)(intptr_t)bad;
}

static long arg_or(int argc, char **argv, int i, long def)
{
	return argc > i ? strtol(argv[i], NULL, 10) : def;
}

int main(int argc, char **argv)
{
	nthreads = arg_or(argc, argv, 1, 4);
	rounds = arg_or(argc, argv, 2, 3);
	if (nthreads < 1 || nthreads > 256 || rounds < 0) {
		fprintf(stderr, "usage: barrier [THREADS=4] [ROUNDS=3]\n");
		return 2;
	}
	pthread_barrier_init(&round_barrier, NULL, (unsigned)nthreads);

	pthread_t tids[256];
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL) != 0)
			return 2;
	long bad = 0;
	for (long i = 0; i < nthreads; i++) {
		void *ret;
		pthread_join(tids[i], &ret);
		bad += (long)(intptr_t)ret;
	}

	printf("rounds=%ld serial=%ld bad=%ld\n", rounds, serial_returns, bad);
	return bad == 0 && serial_returns == rounds ? 0 : 1;
}
