/*
 * glib_contend: a GMutex counter four threads contend for (issue 29's
 * performance item, bench/glib).  Every 8th critical section of thread 0
 * yields the CPU while it holds the lock, so the others find it taken
 * and wait on its futex word in libglib: each hand-over is a futex wake
 * and a futex wait, the cost a recording must not multiply.  Threads 2
 * and 3 try the lock first in every other critical section, as GLib's
 * own mutex test does (g_mutex_trylock, then g_mutex_lock when taken).
 *
 * Usage: glib_contend [ITERATIONS=2000]   (per thread)
 * Prints "count=4*ITERATIONS"; exits 0 iff the count is right (the
 * program is correct under every order).
 * Lock `count_lock` (a global GMutex), shared `count`.
 */
#include <assert.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

GMutex count_lock;
long count;

static long iterations;

/* One critical section; the yielder gives the CPU away inside every 8th. */
__attribute__((noinline)) static void increment(long i, int yields, int tries)
{
	if (!(tries && i % 2 && g_mutex_trylock(&count_lock))) /* TRYLOCK LINE */
		g_mutex_lock(&count_lock); /* LOCK LINE */
	count++;
	if (yields && i % 8 == 0)
		g_thread_yield();
	g_mutex_unlock(&count_lock); /* UNLOCK LINE */
}

static gpointer worker(gpointer arg)
{
	int n = GPOINTER_TO_INT(arg);
	for (long i = 0; i < iterations; i++)
		increment(i, n == 0, n >= 2);
	return NULL;
}

int main(int argc, char **argv)
{
	iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	if (iterations < 0) {
		fprintf(stderr, "usage: glib_contend [ITERATIONS=2000]\n");
		return 2;
	}
	GThread *t[THREADS];
	for (int i = 0; i < THREADS; i++)
		t[i] = g_thread_new("worker", worker, GINT_TO_POINTER(i));
	for (int i = 0; i < THREADS; i++)
		g_thread_join(t[i]);
	printf("count=%ld\n", count);
	assert(count == (long)THREADS * iterations); /* ASSERT LINE */
	return 0;
}
