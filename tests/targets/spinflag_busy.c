/*
 * spinflag_busy: spinflag.c without sched_yield().  main creates a worker,
 * then both meet through two atomic flags polled in a pure busy loop (no
 * pthread call, not even a syscall): the worker sets `spinning` and spins
 * until `ready`; main spins until `spinning`, then sets `ready`.  Whichever
 * thread a serializing recorder runs first ends up spinning on a flag only
 * the other thread can set, and only time-slice preemption gets it out.
 * Afterwards the worker does one locked increment.
 *
 * Usage: spinflag_busy
 * Exits 0 iff flag_counter == 1.  Must not hang under a recorder.
 *
 * A recording must contain:
 *   acquire obj_name flag_lock 1, release obj_name flag_lock 1 (the worker)
 *   create 1, join 1 (by T0)
 *   no event for the flags themselves
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int ready, spinning;
pthread_mutex_t flag_lock = PTHREAD_MUTEX_INITIALIZER;
long flag_counter;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	atomic_store(&spinning, 1);
	while (!atomic_load(&ready)) /* SPIN LINE */
		continue;
	pthread_mutex_lock(&flag_lock);
	flag_counter++;
	pthread_mutex_unlock(&flag_lock);
	return NULL;
}

int main(void)
{
	pthread_t tid;
	if (pthread_create(&tid, NULL, worker, NULL) != 0)
		return 2;
	while (!atomic_load(&spinning)) /* MAIN SPIN LINE */
		continue;
	atomic_store(&ready, 1);
	pthread_join(tid, NULL);

	printf("flag_counter=%ld\n", flag_counter);
	return flag_counter == 1 ? 0 : 1;
}
