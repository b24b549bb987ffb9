/*
 * explore_rare: a lost update on a rarely accessed variable beside a hot
 * one (variable bound v = 1, depth 2), a target for `avtrace explore`.
 *
 * Two workers (T1, T2) each run ROUNDS rounds; a round increments the hot
 * counter `hot` under hot_lock (correct).  Once, before round RARE_AT, a
 * worker takes a checkpoint: it increments `checkpoints` without any lock
 * (read, then write: the bug).  main asserts after the joins that
 * hot == 2 * ROUNDS and checkpoints == 2.
 *
 * T2 starts with busy work (DELAY), so natively T1 is done before T2
 * begins; serialized by the recorder (main runs until it blocks in
 * pthread_join, then T1, then T2) too.  Prints "hot=60 checkpoints=2",
 * exits 0.  The order that fails: one worker is preempted between its read
 * and its write of `checkpoints` (the event boundary READ RARE -> WRITE
 * RARE) and the other reads `checkpoints` before that write:
 *   T1 reads checkpoints (0), T2 reads it (0) and writes 1,
 *   T1 writes 1
 * loses a checkpoint: SIGABRT in T0 at the line marked CHECK LINE, in
 * main.  Under PCT (d = 2) the one change point must fall on that single
 * read out of about 250 events; under PCT with variable bounding the
 * variable is chosen first (checkpoints, 1 of Q), then one of its 4
 * accesses, so it should need far fewer runs.
 *
 * Usage: explore_rare [DELAY=50000000]   (loop iterations; under a
 *        serializing scheduler 0 will do)
 * Prints "hot=N checkpoints=N"; exits 0, or SIGABRT.
 *
 * Recorded events (annotations share their line with the access), 254:
 *   T0 start, create T1, create T2, join T1, join T2, exit
 *   each worker T1, T2 (124): start; rounds 0 .. RARE_AT-1, 4 events
 *      each: acquire hot_lock (HOT LOCK), read hot (READ HOT),
 *      write hot (WRITE HOT), release hot_lock (HOT UNLOCK);
 *      read checkpoints (READ RARE), write checkpoints (WRITE RARE);
 *      rounds RARE_AT .. ROUNDS-1, 4 events each; exit
 * Hand schedule: tests/e2e/schedules/explore_rare_bug.sched.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* targets.mk builds tests/targets/NAME.c without -I include */
#include "../../include/avtrace.h"

#define ROUNDS 30  /* hot rounds per worker */
#define RARE_AT 15 /* the checkpoint comes before this round */

static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
long hot;         /* rounds done, under hot_lock */
long checkpoints; /* checkpoints taken, unprotected */
static long delay;

/* Busy work, not sleep (STYLE.md): keeps T2 off both variables in a
 * native run until T1 is done. */
__attribute__((noinline)) static void busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void round_hot(void)
{
	long h;
	pthread_mutex_lock(&hot_lock); /* HOT LOCK */
	AVT_READ(&hot); h = hot; /* READ HOT */
	AVT_WRITE(&hot); hot = h + 1; /* WRITE HOT */
	pthread_mutex_unlock(&hot_lock); /* HOT UNLOCK */
}

/* The bug: a read-modify-write of a shared counter with no lock. */
__attribute__((noinline)) static void checkpoint(void)
{
	long c;
	AVT_READ(&checkpoints); c = checkpoints; /* READ RARE */
	AVT_WRITE(&checkpoints); checkpoints = c + 1; /* WRITE RARE */
}

/* arg: the worker's number (1, 2) */
__attribute__((noinline)) static void *worker(void *arg)
{
	if ((intptr_t)arg == 2)
		busy(delay); /* natively: T1 is done before T2 starts */
	for (int i = 0; i < ROUNDS; i++) {
		if (i == RARE_AT)
			checkpoint();
		round_hot();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	if (pthread_create(&a, NULL, worker, (void *)1) != 0 ||
	    pthread_create(&b, NULL, worker, (void *)2) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("hot=%ld checkpoints=%ld\n", hot, checkpoints);
	assert(hot == 2 * ROUNDS && checkpoints == 2); /* CHECK LINE */
	return 0;
}
