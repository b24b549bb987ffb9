/*
 * spin_barrier: two workers meet at a spin barrier (an atomic increment,
 * then sched_yield() until both have arrived, the way hand-written
 * barriers in numeric kernels do), and a bug needs one order of their
 * writes before it.
 *
 * Each worker k (T1, T2) writes `last = k` before the barrier; after it,
 * T2 checks that the last writer was T2 (CHECK LINE): true when T1 wrote
 * first, which it does natively (it is created first) and under the
 * recorder (round robin by logical id).  The only failing order: T2's
 * write, then T1's: SIGABRT in T2, after the barrier.  The barrier's
 * spinning has no event of its own: a replay of the failing order must
 * let T1 reach the barrier while T2 spins in it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

int last;

/* The barrier's counter is on the heap: only `last` is watched. */
struct arg {
	int k;
	atomic_int *arrived;
};

__attribute__((noinline)) static void spin_barrier(atomic_int *arrived, int n)
{
	int expected = atomic_load(arrived);
	while (!atomic_compare_exchange_weak(arrived, &expected, expected + 1))
		;
	while (atomic_load(arrived) < n)
		sched_yield();
}

__attribute__((noinline)) static void *worker(void *p)
{
	struct arg *a = p;
	int k = a->k;
	last = k;
	spin_barrier(a->arrived, 2);
	if (k == 2 && last != 2)
		abort(); /* CHECK LINE */
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	struct arg a[2];
	atomic_int *arrived = calloc(1, sizeof *arrived);
	for (int k = 1; k <= 2; k++) {
		a[k - 1] = (struct arg){ k, arrived };
		pthread_create(&t[k - 1], NULL, worker, &a[k - 1]);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	printf("last=%d\n", last);
	return 0;
}
