/*
 * glib_pool_ok: a correct GThreadPool program (tests/e2e/test_glib29.sh).
 * main hands the pool's two workers jobs two at a time (submit_two: two
 * g_thread_pool_push calls, each locking the pool's queue inside libglib);
 * each job adds one to `done` atomically.  After the pool is freed (waiting
 * for every job) done is 2 x ROUNDS.
 *
 * The queue's critical sections are libglib's own code, whose accesses are
 * no events: a prediction that reorders them guesses at data the trace
 * never saw (GLib's thread-pool test: INFEASIBLE).
 *
 * Usage: glib_pool_ok [ROUNDS=4]; prints "done N", exits 0.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

static gint done;

static void work(gpointer data, gpointer user)
{
	(void)data, (void)user;
	g_atomic_int_add(&done, 1);
}

static __attribute__((noinline)) void submit_two(GThreadPool *pool, int i)
{
	g_thread_pool_push(pool, GINT_TO_POINTER(2 * i + 1), NULL);
	g_thread_pool_push(pool, GINT_TO_POINTER(2 * i + 2), NULL);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	GThreadPool *pool = g_thread_pool_new(work, NULL, 2, TRUE, NULL);
	if (!pool)
		return 2;
	for (int i = 0; i < rounds; i++)
		submit_two(pool, i);
	g_thread_pool_free(pool, FALSE, TRUE);
	printf("done %d\n", g_atomic_int_get(&done));
	return g_atomic_int_get(&done) == 2 * rounds ? 0 : 1;
}
