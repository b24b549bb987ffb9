/*
 * acc_value_fault: a NULL dereference at an access site that the
 * in-process agent handles.  The agent loads each read's value before
 * the program's instruction does (AVT_F_VALUE), so at the NULL pointer
 * its own load faults first; avtrace must drop that fault and let the
 * program's instruction fault where it stands: SIGSEGV at the marked line,
 * in the recording and in its replay, as natively.
 *
 * A worker sums the ints behind N pointers of a table, then main sums
 * them all; entry N - 1 is NULL (main's pass faults there).  The site's
 * hits are shared (both threads read the table), so it is not disarmed
 * and, after its first hits, runs through the agent.
 *
 * Usage: acc_value_fault [N=100]   (1 <= N <= 2000)
 * Exits by SIGSEGV, always.
 * Built -O0 -g (bin/acc_value_fault) and -O2 -g (bin/acc_value_fault_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int vals[4] = { 1, 2, 3, 4 };
int *volatile ptrs[2000];

__attribute__((noinline)) static long sum(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += *ptrs[i]; /* DEREF LINE */
	return s;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	return (void *)sum((int)(long)arg - 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	if (n < 1 || n > 2000) {
		fprintf(stderr, "usage: acc_value_fault [N=100]   (1 <= N <= 2000)\n");
		return 2;
	}
	for (int i = 0; i < n - 1; i++)
		ptrs[i] = &vals[i % 4];
	ptrs[n - 1] = NULL;
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, worker, (void *)(long)n);
	pthread_join(t, &r);
	printf("%ld\n", (long)r + sum(n));
	return 0;
}
