/*
 * acc_private (access breakpoints, cost): two threads each sweep a heap
 * array of their own, ITER times over LEN longs (about 2 x ITER x LEN
 * loads and stores, 1M each by default), then main sums both under a
 * lock.  Every access is private to one thread: the access breakpoints
 * of the sweep are removed after their budget, so recording costs about
 * what the program costs.  Correct: exit 0, no report.
 *
 * Usage: acc_private [ITER=500] [LEN=1000]
 * Built -O0 -g (bin/acc_private) and -O2 -g (bin/acc_private_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long iter = 500, len = 1000;
static long total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void *sweep(void *arg)
{
	long *a = calloc((size_t)len, sizeof *a), sum = 0;
	(void)arg;
	if (!a)
		return NULL;
	for (long k = 0; k < iter; k++)
		for (long i = 0; i < len; i++)
			a[i] = a[i] + i + k; /* SWEEP LINE */
	for (long i = 0; i < len; i++)
		sum += a[i];
	free(a);
	pthread_mutex_lock(&total_lock);
	total += sum;
	pthread_mutex_unlock(&total_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	if (argc > 1)
		iter = atol(argv[1]);
	if (argc > 2)
		len = atol(argv[2]);
	pthread_create(&t1, NULL, sweep, NULL);
	pthread_create(&t2, NULL, sweep, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("total=%ld\n", total);
	return 0;
}
