/*
 * A worker that sleeps in a loop beside a compute-bound main: main starts
 * a thread running `while (!done) usleep(50000);`, computes for about
 * 0.1 s without any pthread call, sets done and joins.  Correct: exits 0.
 * Under a serializing scheduler the worker's sleep is a scheduling point:
 * main must get the CPU back (fairness), never wait for ever.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int done;

static void *sleeper(void *arg)
{
	(void)arg;
	while (!done)
		usleep(50000);
	return NULL;
}

static __attribute__((noinline)) unsigned long compute(unsigned long n)
{
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? (unsigned long)atol(argv[1]) : 60000000ul;
	pthread_t t;
	pthread_create(&t, NULL, sleeper, NULL);
	unsigned long x = compute(n);
	done = 1;
	pthread_join(t, NULL);
	printf("done %lu\n", x & 1);
	return 0;
}
