/*
 * condvar: a correct bounded queue (capacity 4) between one producer and
 * one consumer thread, ITEMS items (default 100), with `queue_lock` and the
 * condition variables `not_empty` and `not_full`.  After the last item the
 * producer sets `done` and broadcasts `not_empty`.  Signals are sent
 * unconditionally, so their counts do not depend on the schedule; the number
 * of waits does.
 *
 * Usage: condvar [ITEMS=100]
 * Exits 0 iff the consumer received 0..ITEMS-1 in order.
 *
 * Event model: a condition wait is a `wait` event (obj = the condition,
 * obj2 = the mutex it gives up) and, when it returns, an `acquire` of the
 * mutex (flagged as a wake).  So, with W = waits on not_empty + waits on
 * not_full (W >= 0, schedule-dependent):
 *   release    obj_name queue_lock   2*ITEMS + 2   (202: ITEMS puts, ITEMS
 *                                    gets, the producer's final critical
 *                                    section, the consumer's last look)
 *   acquire    obj_name queue_lock   2*ITEMS + 2 + W   (i.e. releases + W)
 *   signal     obj_name not_empty    ITEMS   (func put)
 *   signal     obj_name not_full     ITEMS   (func get)
 *   broadcast  obj_name not_empty    1       (func finish)
 *   wait       obj_name not_empty / not_full   W in total, each with the
 *              mutex queue_lock
 *   create 2, join 2
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CAPACITY 4

pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
long queue[CAPACITY];
int queue_head, queue_count;
bool done;

static long items;

__attribute__((noinline)) static void put(long item)
{
	pthread_mutex_lock(&queue_lock);
	while (queue_count == CAPACITY)
		pthread_cond_wait(&not_full, &queue_lock); /* PUT WAIT LINE */
	queue[(queue_head + queue_count) % CAPACITY] = item;
	queue_count++;
	pthread_cond_signal(&not_empty); /* PUT SIGNAL LINE */
	pthread_mutex_unlock(&queue_lock);
}

__attribute__((noinline)) static void finish(void)
{
	pthread_mutex_lock(&queue_lock);
	done = true;
	pthread_cond_broadcast(&not_empty); /* BROADCAST LINE */
	pthread_mutex_unlock(&queue_lock);
}

/* Returns false once the queue is empty and the producer is done. */
__attribute__((noinline)) static bool get(long *item)
{
	pthread_mutex_lock(&queue_lock);
	while (queue_count == 0 && !done)
		pthread_cond_wait(&not_empty, &queue_lock); /* GET WAIT LINE */
	if (queue_count == 0) {
		pthread_mutex_unlock(&queue_lock);
		return false;
	}
	*item = queue[queue_head];
	queue_head = (queue_head + 1) % CAPACITY;
	queue_count--;
	pthread_cond_signal(&not_full); /* GET SIGNAL LINE */
	pthread_mutex_unlock(&queue_lock);
	return true;
}

__attribute__((noinline)) static void *producer(void *arg)
{
	(void)arg;
	for (long i = 0; i < items; i++)
		put(i);
	finish();
	return NULL;
}

__attribute__((noinline)) static void *consumer(void *arg)
{
	long expect = 0, item;
	(void)arg;
	while (get(&item)) {
		if (item != expect)
			return (void *)(intptr_t)-1;
		expect++;
	}
	return (void *)(intptr_t)expect;
}

int main(int argc, char **argv)
{
	items = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	if (items < 0) {
		fprintf(stderr, "usage: condvar [ITEMS=100]\n");
		return 2;
	}

	pthread_t prod, cons;
	void *got;
	if (pthread_create(&prod, NULL, producer, NULL) != 0 ||
	    pthread_create(&cons, NULL, consumer, NULL) != 0)
		return 2;
	pthread_join(prod, NULL);
	pthread_join(cons, &got);

	printf("consumed=%ld\n", (long)(intptr_t)got);
	return (long)(intptr_t)got == items ? 0 : 1;
}
