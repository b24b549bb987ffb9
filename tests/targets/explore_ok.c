/*
 * explore_ok: the shapes of explore_checker and explore_rare done right;
 * no order of its events fails (a target for `avtrace explore` that must
 * never report a bug).
 *
 * main creates a checker (T1), then two updaters (T2, T3).  Each updater
 * runs ROUNDS rounds incrementing the hot counter `hot` under hot_lock;
 * before round RARE_AT it takes a checkpoint, incrementing the rarely
 * accessed `checkpoints` under hot_lock too; last it applies its half of
 * the combined update (its flag a_step1 or b_step1) and commits it
 * (finished = a_step1 && b_step1) in ONE critical section of state_lock.
 * The checker asserts under state_lock that the combined update is never
 * seen half-applied: not (a_step1 && b_step1 && !finished), which holds
 * in every order since no one can see both flags set before the commit.
 * main asserts after the joins hot == 2 * ROUNDS, checkpoints == 2 and
 * finished == 1.  No busy work: natively the threads run in any order.
 *
 * Usage: explore_ok
 * Prints "hot=40 checkpoints=2 finished=1"; exits 0, in every order.
 * The lines marked CHECK LINE (checker) and FINAL CHECK (main) are the
 * assertions that must never fail.
 *
 * Recorded events (annotations share their line with the access), 199:
 *   T0 start, create T1, create T2, create T3, join T1, join T2, join T3,
 *      exit
 *   T1 (checker): start, acquire state_lock (CHECKER LOCK),
 *      read a_step1, read b_step1, read finished (CHECK A, B, FINISHED),
 *      release state_lock (CHECKER UNLOCK), exit
 *   T2, T3 (updaters, 92 each): start; rounds 0 .. RARE_AT-1, 4 events
 *      each: acquire hot_lock (HOT LOCK), read hot (READ HOT),
 *      write hot (WRITE HOT), release hot_lock (HOT UNLOCK);
 *      acquire hot_lock (RARE LOCK), read checkpoints (READ RARE),
 *      write checkpoints (WRITE RARE), release hot_lock (RARE UNLOCK);
 *      rounds RARE_AT .. ROUNDS-1; acquire state_lock (UPDATE LOCK),
 *      write a_step1 / b_step1 (STEP1 LINE), read a_step1, read b_step1
 *      (UPDATE READ A, B), write finished (COMMIT LINE),
 *      release state_lock (UPDATE UNLOCK); exit
 * Hand schedule (the order that breaks explore_checker, passing here):
 * tests/e2e/schedules/explore_ok_reordered.sched.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

/* targets.mk builds tests/targets/NAME.c without -I include */
#include "../../include/avtrace.h"

#define ROUNDS 20  /* hot rounds per updater */
#define RARE_AT 10 /* the checkpoint comes before this round */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
int a_step1, b_step1, finished; /* under state_lock */
long hot, checkpoints;          /* under hot_lock */

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

__attribute__((noinline)) static void round_hot(void)
{
	long h;
	pthread_mutex_lock(&hot_lock); /* HOT LOCK */
	AVT_READ(&hot); h = hot; /* READ HOT */
	AVT_WRITE(&hot); hot = h + 1; /* WRITE HOT */
	pthread_mutex_unlock(&hot_lock); /* HOT UNLOCK */
}

__attribute__((noinline)) static void checkpoint(void)
{
	long c;
	pthread_mutex_lock(&hot_lock); /* RARE LOCK */
	AVT_READ(&checkpoints); c = checkpoints; /* READ RARE */
	AVT_WRITE(&checkpoints); checkpoints = c + 1; /* WRITE RARE */
	pthread_mutex_unlock(&hot_lock); /* RARE UNLOCK */
}

/* Both steps of the update in one critical section. */
__attribute__((noinline)) static void update(int *mine)
{
	int a, b;
	pthread_mutex_lock(&state_lock); /* UPDATE LOCK */
	AVT_WRITE(mine); *mine = 1; /* STEP1 LINE */
	AVT_READ(&a_step1); a = a_step1; /* UPDATE READ A */
	AVT_READ(&b_step1); b = b_step1; /* UPDATE READ B */
	AVT_WRITE(&finished); finished = a && b; /* COMMIT LINE */
	pthread_mutex_unlock(&state_lock); /* UPDATE UNLOCK */
}

/* arg: the updater's flag, &a_step1 or &b_step1 */
__attribute__((noinline)) static void *updater(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		if (i == RARE_AT)
			checkpoint();
		round_hot();
	}
	update(arg);
	return NULL;
}

int main(void)
{
	pthread_t c, ua, ub;
	if (pthread_create(&c, NULL, checker, NULL) != 0 ||
	    pthread_create(&ua, NULL, updater, &a_step1) != 0 ||
	    pthread_create(&ub, NULL, updater, &b_step1) != 0)
		return 2;
	pthread_join(c, NULL);
	pthread_join(ua, NULL);
	pthread_join(ub, NULL);
	printf("hot=%ld checkpoints=%ld finished=%d\n", hot, checkpoints, finished);
	assert(hot == 2 * ROUNDS && checkpoints == 2 && finished == 1); /* FINAL CHECK */
	return 0;
}
