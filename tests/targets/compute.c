/*
 * compute: a benchmark target that is almost all computation.  Two threads
 * each crunch WORK/2 million iterations of an integer hash, in CHUNKS=8
 * chunks, and add each chunk's result to `checksum` under `result_lock`.
 * The default WORK (42) takes about 0.3 s on one CPU at -O0.
 *
 * Usage: compute [WORK=42]   (millions of iterations in total)
 * Prints "checksum=..." (the same under every schedule: a sum of the same
 * chunk results) and exits 0.
 *
 * A recording must contain, under any schedule (few events on purpose):
 *   acquire  obj_name result_lock  16,  release obj_name result_lock  16
 *   create 2, join 2 (by T0)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNKS 8

pthread_mutex_t result_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t checksum;

static long chunk_iters;

__attribute__((noinline)) static uint64_t crunch(uint64_t seed, long n)
{
	uint64_t x = seed;
	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	for (int c = 0; c < CHUNKS; c++) {
		uint64_t r = crunch(seed + (uint64_t)c, chunk_iters);
		pthread_mutex_lock(&result_lock);
		checksum += r;
		pthread_mutex_unlock(&result_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long work = argc > 1 ? strtol(argv[1], NULL, 10) : 42;
	if (work < 0) {
		fprintf(stderr, "usage: compute [MILLIONS=42]\n");
		return 2;
	}
	chunk_iters = work * 1000000 / 2 / CHUNKS;

	pthread_t a, b;
	if (pthread_create(&a, NULL, worker, (void *)(uintptr_t)1) != 0 ||
	    pthread_create(&b, NULL, worker, (void *)(uintptr_t)1001) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	printf("checksum=%016llx\n", (unsigned long long)checksum);
	return 0;
}
