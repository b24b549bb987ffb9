/*
 * crash: two threads each do K locked increments of `crash_counter` under
 * `crash_lock`; main joins both, then calls crash_here(), which stores
 * through the NULL pointer `crash_ptr` at the line marked CRASH LINE.
 *
 * Usage: crash [K=5]
 * Dies of SIGSEGV (shell status 139) under any schedule.
 *
 * A recording must contain, under any schedule:
 *   acquire       obj_name crash_lock   2*K   (10 by default)
 *   release       obj_name crash_lock   2*K
 *   create 2, join 2 (by T0)
 *   fatal_signal  SIGSEGV, thread T0, site crash.c:<CRASH LINE>, func
 *                 crash_here — the last event of the trace
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;
long crash_counter;
/* volatile: the compiler must not see (and trap on) a constant NULL. */
int *volatile crash_ptr;

static long iterations;

__attribute__((noinline)) static void increment(void)
{
	pthread_mutex_lock(&crash_lock);
	crash_counter++;
	pthread_mutex_unlock(&crash_lock);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++)
		increment();
	return NULL;
}

__attribute__((noinline)) static void crash_here(long value)
{
	*crash_ptr = (int)value; /* CRASH LINE */
}

int main(int argc, char **argv)
{
	iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 5;

	pthread_t a, b;
	if (pthread_create(&a, NULL, worker, NULL) != 0 ||
	    pthread_create(&b, NULL, worker, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	crash_here(crash_counter);
	return 0;
}
