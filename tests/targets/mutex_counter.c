/*
 * mutex_counter: N threads each do M increments of `counter` under the
 * global mutex `counter_lock`.
 *
 * Usage: mutex_counter [N=4] [M=50]         (N up to 1024)
 * Prints "counter=N*M"; exits 0 iff counter == N*M.
 *
 * A recording must contain, under any schedule:
 *   acquire  obj_name counter_lock   N*M   site mutex_counter.c:<LOCK LINE>,
 *                                          func increment
 *   release  obj_name counter_lock   N*M   site mutex_counter.c:<UNLOCK LINE>
 *   create   N (all by T0, children T1..TN), join N (all by T0)
 *   threads  N+1 (T0..TN)
 * libc may add events on its own internal locks (at thread creation and
 * exit), so count per object name, not all acquires.
 *
 * Built four ways (tests/targets/targets.mk): bin/mutex_counter,
 * bin/mutex_counter_stripped (dynamic, no symbol table),
 * bin/mutex_counter_static (-static) and bin/mutex_counter_static_stripped.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
long counter;

static long iterations;

__attribute__((noinline)) static void increment(void)
{
	pthread_mutex_lock(&counter_lock); /* LOCK LINE */
	counter++;
	pthread_mutex_unlock(&counter_lock); /* UNLOCK LINE */
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++)
		increment();
	return NULL;
}

static long arg_or(int argc, char **argv, int i, long def)
{
	return argc > i ? strtol(argv[i], NULL, 10) : def;
}

int main(int argc, char **argv)
{
	long nthreads = arg_or(argc, argv, 1, 4);
	iterations = arg_or(argc, argv, 2, 50);
	if (nthreads < 1 || nthreads > 1024 || iterations < 0) {
		fprintf(stderr, "usage: mutex_counter [THREADS=4] [ITERATIONS=50]\n");
		return 2;
	}

	pthread_t *tids = calloc((size_t)nthreads, sizeof(*tids));
	if (!tids)
		return 2;
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 2;
		}
	for (long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	free(tids);

	printf("counter=%ld\n", counter);
	return counter == nthreads * iterations ? 0 : 1;
}
