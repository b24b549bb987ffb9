/*
 * glib_lockspin: the shape of GLib's mutex and rec-mutex perf and
 * contended cases (issue 29): each helper spins in
 * `while (do_addition (&x))`, a lock, a test of x, an unlock, until main
 * sets x with g_atomic_int_set; then all count x up to COUNT under the
 * lock.  Correct in every order.
 *
 *   helpers: while (lock; more = x != COUNT; if (more && x != -1) x++; unlock; more);
 *   main:    create helpers, g_atomic_int_set(&x, 0), the same loop, join
 *
 * The spin makes events (the lock's acquire and release, the reads of x),
 * so it was never seen as one: a priority scheduler that ranked a helper
 * above main kept running it, main never reached its store, and the run
 * ended at its time limit.
 *
 * Usage: glib_lockspin [HELPERS=2]
 */
#include <glib.h>
#include <stdlib.h>

#define MAX_HELPERS 8

static gint x = -1;
static gint count;

static gboolean do_addition(gint *value)
{
	static GMutex lock;
	gboolean more;

	g_mutex_lock(&lock);
	if ((more = *value != count)) /* SPIN LINE */
		if (*value != -1)
			(*value)++;
	g_mutex_unlock(&lock);
	return more;
}

static gpointer addition_thread(gpointer value)
{
	while (do_addition(value))
		;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	GThread *t[MAX_HELPERS];

	if (n < 1 || n > MAX_HELPERS)
		n = 2;
	count = n + 1;
	for (int i = 0; i < n; i++)
		t[i] = g_thread_new("helper", addition_thread, &x);
	g_atomic_int_set(&x, 0);
	addition_thread(&x);
	g_assert_cmpint(g_atomic_int_get(&x), ==, count);
	for (int i = 0; i < n; i++)
		g_thread_join(t[i]);
	return 0;
}
