/*
 * explore_three: a bug that needs three threads in one order (thread
 * bound t = 3, no preemption inside a thread: the paper's c = 0, like its
 * Figure 8), a target for `avtrace explore`.
 *
 * A relay of three legs over `stage` (0 at start), each leg one critical
 * section of relay_lock run by its own worker:
 *   leg 1, worker T2:  stage 0 -> 1
 *   leg 2, worker T3:  stage 1 -> 2
 *   leg 3, worker T1:  stage 2 -> 3
 * A leg whose predecessor has not run leaves stage as it is (it still
 * writes it back, so every order records the same events).  main asserts
 * after the joins that the relay never finished: stage != 3.
 *
 * main creates T1, T2, T3 in that order.  T2 and T3 start with busy work
 * (DELAY, 2 * DELAY), so natively the legs run T1, T2, T3; serialized by
 * the recorder (main runs until it blocks in pthread_join, then T1, T2,
 * T3 by logical id) too.  T1 finds stage 0, T2 moves it to 1, T3 to 2:
 * prints "stage=2", exits 0.  The only order that fails is
 *   T2's leg, then T3's leg, then T1's leg
 * (stage 3: SIGABRT in T0 at the line marked CHECK LINE, in main).  Every
 * order of two of the workers occurs in a passing order of all three, and
 * neither the natural order (T1 T2 T3) nor its reverse (T3 T2 T1, the
 * other schedule that covers every two-thread order) fails: the relative
 * order of all three threads matters.  Under PCT no change point is
 * needed; the priorities must rank T2 > T3 > T1, and main above T1 (else
 * T1 runs its leg as soon as it is created).
 *
 * Usage: explore_three [DELAY=50000000]   (loop iterations; under a
 *        serializing scheduler 0 will do)
 * Prints "stage=N"; exits 0, or SIGABRT when stage is 3.
 *
 * Recorded events (annotations share their line with the access):
 *   T0 start, create T1, create T2, create T3, join T1, join T2, join T3,
 *      exit
 *   each worker T1, T2, T3: start, acquire relay_lock (LEG LOCK),
 *      read stage (READ STAGE), write stage (WRITE STAGE),
 *      release relay_lock (LEG UNLOCK), exit
 * Hand schedule: tests/e2e/schedules/explore_three_bug.sched.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* targets.mk builds tests/targets/NAME.c without -I include */
#include "../../include/avtrace.h"

static pthread_mutex_t relay_lock = PTHREAD_MUTEX_INITIALIZER;
int stage; /* legs of the relay run so far, in order */
static long delay;

/* Busy work, not sleep (STYLE.md): orders the legs T1, T2, T3 in a
 * native run. */
__attribute__((noinline)) static void busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

/* Run leg `leg` (1, 2 or 3) if leg - 1 has run. */
__attribute__((noinline)) static void run_leg(int leg)
{
	int s;
	pthread_mutex_lock(&relay_lock); /* LEG LOCK */
	AVT_READ(&stage); s = stage; /* READ STAGE */
	AVT_WRITE(&stage); stage = s == leg - 1 ? leg : s; /* WRITE STAGE */
	pthread_mutex_unlock(&relay_lock); /* LEG UNLOCK */
}

/* arg: the worker's number k (T1, T2, T3 as created) */
__attribute__((noinline)) static void *worker(void *arg)
{
	static const int leg_of[4] = { 0, 3, 1, 2 };
	int k = (int)(intptr_t)arg;
	busy((k - 1) * delay); /* natively: legs in creation order */
	run_leg(leg_of[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	for (intptr_t k = 1; k <= 3; k++)
		if (pthread_create(&t[k - 1], NULL, worker, (void *)k) != 0)
			return 2;
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	printf("stage=%d\n", stage);
	assert(stage != 3); /* CHECK LINE */
	return 0;
}
