/*
 * exit_three: main returns without joining its workers, and a bug needs
 * the three workers in one order before the process ends (issue 14: a
 * process exit is a scheduling point).
 *
 * A relay of three legs over `stage` (0 at start), each leg one critical
 * section of relay_lock run by its own worker:
 *   leg 1, worker T2:  stage 0 -> 1
 *   leg 2, worker T3:  stage 1 -> 2
 *   leg 3, worker T1:  stage 2 -> 3, and T1 aborts (CHECK LINE)
 * A leg whose predecessor has not run leaves stage as it is.  main
 * creates T1, T2, T3 and returns 0 at once: the workers that have not
 * finished die with the process.  Natively T1 starts first (T2 and T3
 * begin with busy work) and finds stage 0, so the program exits 0; the
 * only failing order is T2's leg, then T3's, then T1's, all before main's
 * exit takes effect: SIGABRT in T1.  Unreachable when the exit ends the
 * process at once (the workers never run under a serializing scheduler).
 *
 * Usage: exit_three [DELAY=20000000]   (loop iterations)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t relay_lock = PTHREAD_MUTEX_INITIALIZER;
int stage;
static long delay;

__attribute__((noinline)) static void busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void run_leg(int leg)
{
	pthread_mutex_lock(&relay_lock);
	int s = stage;
	stage = s == leg - 1 ? leg : s;
	pthread_mutex_unlock(&relay_lock);
	if (stage == 3)
		abort(); /* CHECK LINE */
}

__attribute__((noinline)) static void *worker(void *arg)
{
	static const int leg_of[4] = { 0, 3, 1, 2 };
	int k = (int)(intptr_t)arg;
	busy((k - 1) * delay);
	run_leg(leg_of[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 20000000;
	for (intptr_t k = 1; k <= 3; k++)
		if (pthread_create(&t, NULL, worker, (void *)k) != 0)
			return 2;
	return 0;
}
