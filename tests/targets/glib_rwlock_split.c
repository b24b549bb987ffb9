/*
 * glib_rwlock_split: a GRWLock whose writer updates a pair in two write
 * critical sections instead of one (the bug); the reader checks, under
 * the read lock, that both halves agree.
 *
 *   writer:  (lo++ ; hi++), each under its own writer lock
 *   reader:  (busy with other work first) read lock, assert lo == hi
 *
 * Natively the writer is done long before the reader looks.  The reader
 * between the writer's two critical sections sees lo != hi: SIGABRT.
 * -DGLIB_RWLOCK_OK (glib_rwlock_ok.c) updates both in one: correct.
 *
 * Usage: glib_rwlock_split [DELAY=50000000]
 * Lock `pair_lock` (a global GRWLock), shared `lo`, `hi`.
 */
#include <assert.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

GRWLock pair_lock;
long lo, hi;

static long delay;

__attribute__((noinline)) static void update(void)
{
	g_rw_lock_writer_lock(&pair_lock); /* LO LOCK LINE */
	lo++;
#ifndef GLIB_RWLOCK_OK
	g_rw_lock_writer_unlock(&pair_lock);
	/* the bug: the pair is half updated here, and unlocked */
	g_rw_lock_writer_lock(&pair_lock); /* HI LOCK LINE */
#endif
	hi++;
	g_rw_lock_writer_unlock(&pair_lock);
}

__attribute__((noinline)) static void check(void)
{
	g_rw_lock_reader_lock(&pair_lock); /* READ LOCK LINE */
	assert(lo == hi); /* CHECK LINE */
	g_rw_lock_reader_unlock(&pair_lock);
}

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static gpointer writer(gpointer arg)
{
	(void)arg;
	update();
	return NULL;
}

static gpointer reader(gpointer arg)
{
	(void)arg;
	other_work(delay);
	check();
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	GThread *w = g_thread_new("writer", writer, NULL);
	GThread *r = g_thread_new("reader", reader, NULL);
	g_thread_join(w);
	g_thread_join(r);
	printf("lo=%ld hi=%ld\n", lo, hi);
	return 0;
}
