/*
 * explore_checker: updaters before the checker, a thread order that no
 * natural run comes close to (a target for `avtrace explore`).
 *
 * Two updaters, A and B, each apply one half of a combined update in two
 * steps, each step its own critical section of state_lock:
 *   step 1: set its own flag (a_step1 or b_step1);
 *   step 2: commit: finished = a_step1 && b_step1.
 * The checker asserts, under the same lock, that the combined update is
 * never seen half-applied: not (a_step1 && b_step1 && !finished).  The
 * bug: the two steps should be one critical section.
 *
 * main creates the checker first (T1), then updater A (T2), then updater B
 * (T3).  The updaters start with busy work (DELAY), so natively the
 * checker checks before either update; serialized by the recorder (main
 * runs until it blocks in pthread_join, then T1, T2, T3 by logical id) the
 * checker runs whole before either updater starts.  Either way the checker
 * sees nothing, and the program exits 0.  The order that fails:
 *   updater A step 1, updater B step 1, then the checker's check
 * (before the later updater's step 2; the roles of A and B may swap)
 * fails the assertion at the line marked CHECK LINE: SIGABRT in T1, in
 * `checker`.  For exploration that is a PCT bug of depth 2: the checker
 * has the lowest priority and one change point falls between the later
 * updater's step 1 and its step 2.
 *
 * Usage: explore_checker [DELAY=50000000]   (loop iterations of busy work
 *        per updater; under a serializing scheduler 0 will do)
 * Prints "finished=1"; exits 0, or SIGABRT.
 *
 * Recorded events (annotations share their line with the access):
 *   T0 start, create T1, create T2, create T3, join T1, join T2, join T3,
 *      exit
 *   T1 (checker) start, acquire state_lock (CHECKER LOCK),
 *      read a_step1 (CHECK A), read b_step1 (CHECK B),
 *      read finished (CHECK FINISHED), release state_lock (CHECKER UNLOCK),
 *      exit
 *   T2, T3 (updaters A, B) start, acquire state_lock (STEP1 LOCK),
 *      write a_step1 / b_step1 (STEP1 LINE), release (STEP1 UNLOCK),
 *      acquire (STEP2 LOCK), read a_step1 (STEP2 READ A),
 *      read b_step1 (STEP2 READ B), write finished (COMMIT LINE),
 *      release (STEP2 UNLOCK), exit
 * The same per thread in every order (the commit always writes), so any
 * schedule can be followed event by event.  Hand schedule:
 * tests/e2e/schedules/explore_checker_bug.sched.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* targets.mk builds tests/targets/NAME.c without -I include */
#include "../../include/avtrace.h"

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
int a_step1;  /* updater A has applied its half */
int b_step1;  /* updater B has applied its half */
int finished; /* both halves applied and committed */
static long delay;

/* Busy work, not sleep (STYLE.md): keeps the updaters off the state in a
 * native run until the checker has checked. */
__attribute__((noinline)) static void busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	int a, b, f;
	(void)arg;
	pthread_mutex_lock(&state_lock); /* CHECKER LOCK */
	AVT_READ(&a_step1); a = a_step1; /* CHECK A */
	AVT_READ(&b_step1); b = b_step1; /* CHECK B */
	AVT_READ(&finished); f = finished; /* CHECK FINISHED */
	pthread_mutex_unlock(&state_lock); /* CHECKER UNLOCK */
	assert(!(a && b && !f)); /* CHECK LINE */
	return NULL;
}

__attribute__((noinline)) static void *updater(void *arg)
{
	int *mine = arg;
	int a, b;
	busy(delay); /* the checker checks meanwhile, natively */
	pthread_mutex_lock(&state_lock); /* STEP1 LOCK */
	AVT_WRITE(mine); *mine = 1; /* STEP1 LINE */
	pthread_mutex_unlock(&state_lock); /* STEP1 UNLOCK */
	/* the window: both halves may be applied here, not yet committed */
	pthread_mutex_lock(&state_lock); /* STEP2 LOCK */
	AVT_READ(&a_step1); a = a_step1; /* STEP2 READ A */
	AVT_READ(&b_step1); b = b_step1; /* STEP2 READ B */
	AVT_WRITE(&finished); finished = a && b; /* COMMIT LINE */
	pthread_mutex_unlock(&state_lock); /* STEP2 UNLOCK */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t c, ua, ub;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	if (pthread_create(&c, NULL, checker, NULL) != 0 ||
	    pthread_create(&ua, NULL, updater, &a_step1) != 0 ||
	    pthread_create(&ub, NULL, updater, &b_step1) != 0)
		return 2;
	pthread_join(c, NULL);
	pthread_join(ua, NULL);
	pthread_join(ub, NULL);
	printf("finished=%d\n", finished);
	return 0;
}
