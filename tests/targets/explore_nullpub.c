/*
 * explore_nullpub: a published pointer cleared by a thread that must run
 * all of its work before the publisher's first use (issue 30, shape 6b:
 * one policy is not enough), a target for `avtrace explore`.
 *
 * main publishes `conn` (a pointer to a global object), starts T1, then
 * uses the connection once without checking it (USE, the bug) and polls
 * it POLLS times more, checking each time (safe).  T1 (the closer)
 * polls `conn` WORK times, checked (safe), then clears it (CLOSE).
 * main joins T1 and prints "sum=N".
 *
 * The order that fails: T1 runs all of its WORK + 1 events between
 * main's creating it and main's USE: the unchecked read then loads NULL
 * (a null dereference in the program this stands for; here main notes it
 * and fails its assertion after the join, CHECK: SIGABRT).  A scheduler
 * that gives T1 a higher priority than main finds it in a few runs (PCT
 * depth 3, POS: medians 5 and 15.5 over seeds 1-10, docs/explore.md); a
 * walk that picks among the threads at every event on `conn`, each
 * weighted by its remaining events (SURW), must pick
 * T1 WORK + 1 times in a row against main's POLLS + 1 pending events:
 * about 1 in C(POLLS + WORK + 2, WORK + 1).  Natively and under the
 * recorder main runs first (T1 is only created), so it passes: prints
 * "sum=..." and exits 0.
 *
 * Recorded events (the annotations share their line with the access):
 *   T0: start, write conn (PUBLISH), create T1, read conn (USE),
 *       POLLS reads of conn (POLL), join T1, exit
 *   T1: start, WORK reads of conn (WORK), write conn (CLOSE), exit
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

/* targets.mk builds tests/targets/NAME.c without -I include */
#include "../../include/avtrace.h"

#define POLLS 20 /* main's checked reads after its use */
#define WORK 20  /* the closer's checked reads before it clears */

struct conn {
	long bytes;
};

static struct conn the_conn = { 7 };
struct conn *volatile conn; /* published by main, cleared by T1 */

/* A checked read of conn: what either thread does safely. */
__attribute__((noinline)) static long poll_conn(void)
{
	struct conn *c;
	AVT_READ(&conn); c = conn; /* POLL, WORK */
	return c ? c->bytes : 0;
}

static void *closer(void *arg)
{
	long sum = 0;
	for (int i = 0; i < WORK; i++)
		sum += poll_conn();
	AVT_WRITE(&conn); conn = NULL; /* CLOSE */
	return (void *)sum;
}

int main(void)
{
	pthread_t t;
	struct conn *c;
	long sum;
	int lost;

	AVT_WRITE(&conn); conn = &the_conn; /* PUBLISH */
	if (pthread_create(&t, NULL, closer, NULL))
		return 2;
	AVT_READ(&conn); c = conn; /* USE: the bug, no check */
	/* The dereference would fault here; the failure is told after the
	 * join instead: a run whose main dies while the exited T1 is not yet
	 * joined left `avtrace explore` waiting on it (seen, left alone). */
	lost = c == NULL;
	sum = c ? c->bytes : 0;
	for (int i = 0; i < POLLS; i++)
		sum += poll_conn();
	pthread_join(t, NULL);
	assert(!lost); /* CHECK: main used a NULL connection */
	printf("sum=%ld\n", sum);
	return 0;
}
