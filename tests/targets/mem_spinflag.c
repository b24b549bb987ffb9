/*
 * mem_spinflag: a CORRECT hand-off through a spin flag, for false
 * positives.  The producer writes `data`, then sets the atomic `flag`
 * (release); the consumer spins until it sees the flag (acquire), then
 * reads `data`.  Every order of the two threads is correct: a detector
 * must report nothing, and every replay must pass.
 *
 * The consumer (T1, created first) does long busy work (DELAY) before it
 * looks at the flag, so in the natural run the producer (T2) has set it
 * and the consumer's spin loop reads the flag exactly once.  (A spin on
 * an annotated or watched read is an event per iteration: see
 * docs/memory-access.md.)
 *
 * Built twice (tests/targets/mem/mem.h): bin/mem_spinflag annotated,
 * bin/mem_spinflag_plain without annotations (watch data, flag).
 *
 * Usage: mem_spinflag [DELAY=150000000]   (loop iterations)
 * Prints "data=42"; exits 0 (1 if the hand-off failed, which it cannot).
 *
 * Annotated recording:
 *   T2 (producer): begin (ATOMIC BEGIN), write data (WRITE DATA),
 *      write flag (SET FLAG), end (ATOMIC END)
 *   T1 (consumer): read flag (SPIN LINE) once, read data (READ DATA)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem/mem.h"

long data;
atomic_int flag;
static long delay;

__attribute__((noinline)) static void *producer(void *arg)
{
	(void)arg;
	AVT_ATOMIC_BEGIN(); /* ATOMIC BEGIN */
	AVT_WRITE(&data); data = 42; /* WRITE DATA */
	AVT_WRITE(&flag); atomic_store_explicit(&flag, 1, memory_order_release); /* SET FLAG */
	AVT_ATOMIC_END(); /* ATOMIC END */
	return NULL;
}

__attribute__((noinline)) static void *consumer(void *arg)
{
	long seen;
	(void)arg;
	mem_busy(delay); /* the producer is done by then, in a natural run */
	for (;;) {
		AVT_READ(&flag); if (atomic_load_explicit(&flag, memory_order_acquire)) break; /* SPIN LINE */
	}
	AVT_READ(&data); seen = data; /* READ DATA */
	return (void *)(intptr_t)seen;
}

int main(int argc, char **argv)
{
	pthread_t c, p;
	void *seen;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;
	if (pthread_create(&c, NULL, consumer, NULL) != 0 ||
	    pthread_create(&p, NULL, producer, NULL) != 0)
		return 2;
	pthread_join(c, &seen);
	pthread_join(p, NULL);
	printf("data=%ld\n", (long)(intptr_t)seen);
	return (intptr_t)seen == 42 ? 0 : 1;
}
