/*
 * explore_hundred: a two-stage publish/consume race among 100 workers, a
 * target for `avtrace explore` with many threads.
 *
 * Worker 1 (T1) publishes in two stages: it claims the slot (stage = 1),
 * writes the payload, then marks it published (stage = 2).  Workers 2 ..
 * 100 (T2 .. T100) each count themselves in under count_lock, then read
 * the stage and, if it is not 0, consume the payload and assert it is
 * there.  The bug: a consumer takes "claimed" (1) for "published" (2).
 * It fails only if a consumer reads the stage between T1's two stage
 * writes, that is when T1 is preempted at exactly one of its three
 * events and a consumer runs then:
 *   T1 stage = 1, Tk reads stage (1), Tk reads payload (0)
 * fails the assertion at CHECK LINE in consume(): SIGABRT in Tk.
 * Consumers start with busy work (DELAY), so natively T1 is done long
 * before any of them reads; serialized by the recorder (main runs until
 * it blocks in pthread_join, then T1, then T2 ...) too: every consumer
 * reads stage 2.
 *
 * PCT must put a change point on one event among some 1,000; a uniform
 * walk over the interleavings of the 101 accesses of `stage` puts a
 * consumer's read between T1's two writes in all but 2 of every 101.
 *
 * Usage: explore_hundred [DELAY=1000000]   (loop iterations; under a
 *        serializing scheduler 0 will do)
 * Prints "consumed=99 stage=2"; exits 0, or SIGABRT.
 *
 * Recorded events (annotations share their line with the access), 999:
 *   T0 start, create T1 .. T100, join T1 .. T100, exit (202)
 *   T1: start, write stage (STAGE ONE), write payload (PUBLISH),
 *       write stage (STAGE TWO), exit (5)
 *   T2 .. T100 (8 each, 792): start, acquire count_lock (COUNT LOCK),
 *       read consumed, write consumed (COUNT), release count_lock
 *       (COUNT UNLOCK), read stage (READ STAGE), read payload
 *       (READ PAYLOAD), exit
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* targets.mk builds tests/targets/NAME.c without -I include */
#include "../../include/avtrace.h"

#define WORKERS 100

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
long stage;    /* 0 empty, 1 claimed, 2 published */
long payload;  /* 42 once published */
long consumed; /* consumers counted in, under count_lock */
static long delay;

__attribute__((noinline)) static void busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void publish(void)
{
	AVT_WRITE(&stage); stage = 1; /* STAGE ONE */
	AVT_WRITE(&payload); payload = 42; /* PUBLISH */
	AVT_WRITE(&stage); stage = 2; /* STAGE TWO */
}

__attribute__((noinline)) static void consume(void)
{
	long s, p;
	pthread_mutex_lock(&count_lock); /* COUNT LOCK */
	AVT_READ(&consumed); s = consumed;
	AVT_WRITE(&consumed); consumed = s + 1; /* COUNT */
	pthread_mutex_unlock(&count_lock); /* COUNT UNLOCK */
	AVT_READ(&stage); s = stage; /* READ STAGE */
	if (s != 0) { /* the bug: 1 is not published yet */
		AVT_READ(&payload); p = payload; /* READ PAYLOAD */
		assert(p == 42); /* CHECK LINE */
	}
}

static void *worker(void *arg)
{
	if ((intptr_t)arg == 1) {
		publish();
		return NULL;
	}
	busy(delay); /* natively: the publisher is done first */
	consume();
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t t[WORKERS];
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	for (intptr_t i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
			return 2;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("consumed=%ld stage=%ld\n", consumed, stage);
	assert(consumed == WORKERS - 1 && stage == 2); /* FINAL CHECK */
	return 0;
}
