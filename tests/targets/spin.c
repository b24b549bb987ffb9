/*
 * spin: N threads each do M increments of `spin_counter` under the global
 * pthread_spinlock_t `counter_spin`.
 *
 * Usage: spin [N=2] [M=100]
 * Prints "spin_counter=N*M"; exits 0 iff spin_counter == N*M.
 *
 * A recording must contain, under any schedule:
 *   acquire  obj_name counter_spin   N*M   (200 by default), func increment
 *   release  obj_name counter_spin   N*M
 *   create N (by T0), join N (by T0)
 * A serializing recorder must model the spinlock's owner: a thread that
 * spins on a lock held by a stopped thread never blocks in the kernel.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_spinlock_t counter_spin;
long spin_counter;

static long iterations;

__attribute__((noinline)) static void increment(void)
{
	pthread_spin_lock(&counter_spin); /* LOCK LINE */
	spin_counter++;
	pthread_spin_unlock(&counter_spin); /* UNLOCK LINE */
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
	long nthreads = arg_or(argc, argv, 1, 2);
	iterations = arg_or(argc, argv, 2, 100);
	if (nthreads < 1 || nthreads > 256 || iterations < 0) {
		fprintf(stderr, "usage: spin [THREADS=2] [ITERATIONS=100]\n");
		return 2;
	}
	pthread_spin_init(&counter_spin, PTHREAD_PROCESS_PRIVATE);

	pthread_t tids[256];
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL) != 0)
			return 2;
	for (long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);

	printf("spin_counter=%ld\n", spin_counter);
	return spin_counter == nthreads * iterations ? 0 : 1;
}
