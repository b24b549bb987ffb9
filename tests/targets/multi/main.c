/*
 * multi: two workers each call work_locked() (work.c, lock pool.m) and
 * lib_bump() (lib.c in libmulti.so, lock lib_state.lock) twice; main then
 * runs job_run() once (a heap-allocated mutex).  Exits 0 iff the counts add
 * up.  A recording holds 4 acquires of pool.m at the WORK LOCK LINE, 4 of
 * lib_state.lock at the LIB LOCK LINE, 1 of the heap lock at JOB LOCK LINE.
 */
#include <stdio.h>

#include "multi.h"

__attribute__((noinline)) static void *worker(void *arg)
{
	int who = (int)(long)arg;
	for (int i = 0; i < 2; i++) {
		work_locked(who);
		lib_bump();
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	job_run();
	long sum = pool.items[0] + pool.items[1];
	printf("sum=%ld generation=%d\n", sum, lib_state.generation);
	return sum == 4 && lib_state.generation == 4 ? 0 : 1;
}
