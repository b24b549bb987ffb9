/*
 * glib_cond_if: a GCond producer/consumer whose consumer waits under
 * `if` instead of `while` (the bug): a woken consumer does not look again.
 *
 *   first:   get()  -- the queue is empty: it waits on `not_empty`
 *   maker:   put(1), put(2)  -- each signals `not_empty`
 *   second:  (busy with other work first) get()
 *
 * Natively the first consumer wakes and takes an item long before the
 * second one comes.  The order
 *   first waits, maker puts 1 and signals, second takes it, first wakes
 * wakes the first consumer on an empty queue: it takes an item that is
 * not there and the assert fails (SIGABRT).  -DGLIB_COND_OK
 * (glib_cond_ok.c) waits under `while`: correct under every order.
 *
 * Usage: glib_cond_if [DELAY=50000000]
 * Lock `queue_lock` (GMutex), condition `not_empty` (GCond).
 */
#include <assert.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

GMutex queue_lock;
GCond not_empty;
int queue_count;

static long delay;

__attribute__((noinline)) static void put(void)
{
	g_mutex_lock(&queue_lock);
	queue_count++;
	g_cond_signal(&not_empty); /* SIGNAL LINE */
	g_mutex_unlock(&queue_lock);
}

__attribute__((noinline)) static void get(void)
{
	g_mutex_lock(&queue_lock); /* GET LOCK LINE */
#ifndef GLIB_COND_OK
	if (queue_count == 0) /* the bug: `while` */
#else
	while (queue_count == 0)
#endif
		g_cond_wait(&not_empty, &queue_lock); /* WAIT LINE */
	assert(queue_count > 0); /* TAKE LINE */
	queue_count--;
	g_mutex_unlock(&queue_lock);
}

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static gpointer first(gpointer arg)
{
	(void)arg;
	get();
	return NULL;
}

static gpointer second(gpointer arg)
{
	(void)arg;
	other_work(delay);
	get();
	return NULL;
}

static gpointer maker(gpointer arg)
{
	(void)arg;
	put();
	put();
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	GThread *c1 = g_thread_new("first", first, NULL);
	GThread *c2 = g_thread_new("second", second, NULL);
	GThread *p = g_thread_new("maker", maker, NULL);
	g_thread_join(c1);
	g_thread_join(c2);
	g_thread_join(p);
	printf("left=%d\n", queue_count);
	return 0;
}
