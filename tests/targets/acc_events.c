/*
 * acc_events (access breakpoints, cost): a worker increments a counter
 * that main also writes, ROUNDS times with no lock call: every load and
 * store is a shared access, an event that is never disarmed.  bench/access
 * divides the recording's extra time by these events.  Correct (main only
 * reads the counter after the join): exit 0.
 *
 * Usage: acc_events [ROUNDS=20000]
 * Built -O0 -g (bin/acc_events) and -O2 -g (bin/acc_events_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long rounds = 20000;
volatile long counter;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++)
		counter = counter + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1)
		rounds = atol(argv[1]);
	pthread_create(&t, NULL, worker, NULL);
	counter = 0; /* main's store, after the worker exists: shared */
	pthread_join(t, NULL);
	printf("counter=%ld\n", counter);
	return 0;
}
