/*
 * lockheavy: a benchmark target that is almost all lock traffic.  T threads
 * (default 2) each do I (default 200,000) lock / increment / unlock of
 * `heavy_counter` under `heavy_lock`.  Note the argument order: iterations
 * first (benchmarks vary it), threads second.
 *
 * Usage: lockheavy [I=200000] [T=2]
 * Prints "heavy_counter=T*I"; exits 0 iff heavy_counter == T*I.
 *
 * A recording must contain, under any schedule:
 *   acquire  obj_name heavy_lock  T*I   (400,000 by default)
 *   release  obj_name heavy_lock  T*I
 *   create T, join T (by T0)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t heavy_lock = PTHREAD_MUTEX_INITIALIZER;
long heavy_counter;

static long iterations;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++) {
		pthread_mutex_lock(&heavy_lock);
		heavy_counter++;
		pthread_mutex_unlock(&heavy_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	long nthreads = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
	if (iterations < 0 || nthreads < 1 || nthreads > 256) {
		fprintf(stderr, "usage: lockheavy [ITERATIONS=200000] [THREADS=2]\n");
		return 2;
	}

	pthread_t tids[256];
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL) != 0)
			return 2;
	for (long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);

	printf("heavy_counter=%ld\n", heavy_counter);
	return heavy_counter == nthreads * iterations ? 0 : 1;
}
