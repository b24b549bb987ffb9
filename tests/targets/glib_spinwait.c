/*
 * glib_spinwait: the shape of GLib's thread-pool test (issue 29): main
 * hands a job to a new thread and then spins on a plain atomic counter
 * the thread sets, `while (g_atomic_int_get (&job.started) == 0);`, with
 * no call and no event in the loop, before its next lock.  Correct in
 * every order.
 *
 *   main:   g_thread_new(worker), spin until job.started, lock, unlock, join
 *   worker: lock, job.started = 1, unlock
 *
 * Under exploration main is often the thread a walk picked to make its
 * next event (the lock after the spin), and SURW held that decision
 * through SURW_COMMITTED_SLICES x yield_limit slices of spinning (1 s of
 * CPU per round) before it let the worker run: each run's schedule then
 * had "yield T0 100".  A spin (the same registers at two slice ends) no
 * longer holds it: "yield T0 10" at most.
 *
 * Usage: glib_spinwait [ROUNDS=4]
 */
#include <glib.h>
#include <stdlib.h>

struct job {
	GMutex lock;
	gint started;
};

static gpointer worker(gpointer arg)
{
	struct job *j = arg;
	g_mutex_lock(&j->lock);
	g_atomic_int_set(&j->started, 1);
	g_mutex_unlock(&j->lock);
	return NULL;
}

__attribute__((noinline)) static void one_round(void)
{
	struct job j; /* on main's stack, as GLib's test keeps its counters */
	g_mutex_init(&j.lock);
	j.started = 0;
	GThread *t = g_thread_new("worker", worker, &j);
	while (g_atomic_int_get(&j.started) == 0) /* SPIN LINE */
		;
	g_mutex_lock(&j.lock);
	g_mutex_unlock(&j.lock);
	g_thread_join(t);
	g_mutex_clear(&j.lock);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	for (int r = 0; r < rounds; r++)
		one_round();
	return 0;
}
