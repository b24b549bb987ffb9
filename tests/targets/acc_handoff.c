/*
 * acc_handoff (access breakpoints, correct lock-free code): a spin-flag
 * hand-off.  The producer stores the payload, then releases `ready`; the
 * consumer spins on an acquire load of `ready`, then reads the payload.
 * Correct under every interleaving: `avtrace test` must report nothing.
 * The consumer is created first, so the natural run starts with it
 * spinning (preempted after its slice).  Unannotated.
 * Built -O0 -g (bin/acc_handoff) and -O2 -g (bin/acc_handoff_O2).
 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long payload;
static atomic_int ready;

__attribute__((noinline)) static void *consumer(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&ready, memory_order_acquire))
		;
	if (payload != 42) {
		fprintf(stderr, "payload %ld before it was ready\n", payload);
		exit(1);
	}
	return NULL;
}

__attribute__((noinline)) static void *producer(void *arg)
{
	(void)arg;
	payload = 42;
	atomic_store_explicit(&ready, 1, memory_order_release);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	pthread_create(&t1, NULL, consumer, NULL);
	pthread_create(&t2, NULL, producer, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("payload=%ld\n", payload);
	return 0;
}
