/*
 * allocheavy: 2 threads x N (default 20000) iterations of malloc, a locked
 * increment, free: the benchmark for the cost of the heap hooks
 * (bench/record-overhead compares record with and without --no-heap).
 * A recording holds 2N acquires and releases of `alloc_lock`.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
long alloc_counter;
static long iters = 20000;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		long *p = malloc(32);
		pthread_mutex_lock(&alloc_lock);
		*p = ++alloc_counter;
		pthread_mutex_unlock(&alloc_lock);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	if (argc > 1)
		iters = atol(argv[1]);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("alloc_counter=%ld\n", alloc_counter);
	return alloc_counter == 2 * iters ? 0 : 1;
}
