/*
 * slow_steps: two threads each take a lock twice in one function, with a
 * long stretch of computation (no event, no system call) in between, about
 * 0.3 s natively.  Correct program (nothing is checked), but the atomicity
 * detectors predict schedules over its windows; replayed with a step time
 * limit far below the computation, every one of them is stuck: the test of
 * an `avtrace test` that must not call that a clean result.
 *
 * Usage: slow_steps [ITERATIONS=150000000]
 */
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared;
static long iterations = 150000000;
static volatile unsigned long sink;

__attribute__((noinline)) static void compute(void)
{
	unsigned long x = 1;
	for (long i = 0; i < iterations; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) static void step(void)
{
	pthread_mutex_lock(&lock);
	long v = shared;
	pthread_mutex_unlock(&lock);
	compute();
	pthread_mutex_lock(&lock);
	shared = v + 1;
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	step();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	step();
	pthread_join(t, NULL);
	return 0;
}
