/*
 * spinflag: ad hoc synchronization that a recorder cannot see.  main
 * creates a worker, then both meet through two atomic flags, polled with
 * sched_yield() (no pthread call): the worker sets `spinning` and spins
 * until `ready`; main spins until `spinning`, then sets `ready`.  Whichever
 * thread a serializing recorder runs first ends up spinning on a flag only
 * the other thread can set, so the recorder must take the CPU away from a
 * thread that makes no sync call (spinflag_busy.c: not even a syscall).
 * Afterwards the worker does one locked increment.
 *
 * Usage: spinflag
 * Exits 0 iff flag_counter == 1.  Must not hang under a recorder.
 *
 * A recording must contain:
 *   acquire obj_name flag_lock 1, release obj_name flag_lock 1 (the worker)
 *   create 1, join 1 (by T0)
 *   no event for the flags themselves
 */
#include <pthread.h>
#include <sched.h>
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
		sched_yield();
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
		sched_yield();
	atomic_store(&ready, 1);
	pthread_join(tid, NULL);

	printf("flag_counter=%ld\n", flag_counter);
	return flag_counter == 1 ? 0 : 1;
}
