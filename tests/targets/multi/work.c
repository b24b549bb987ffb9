#include <stdlib.h>

#include "multi.h"

struct pool pool = { .m = PTHREAD_MUTEX_INITIALIZER };

struct job {
	long id;
	pthread_mutex_t lock;
	long done;
};

__attribute__((noinline)) void work_locked(int who)
{
	pthread_mutex_lock(&pool.m); /* WORK LOCK LINE */
	pool.items[who & 3]++;
	pthread_mutex_unlock(&pool.m); /* WORK UNLOCK LINE */
}

/* A lock on the heap: named by its allocation site. */
__attribute__((noinline)) void job_run(void)
{
	struct job *j = malloc(sizeof *j); /* JOB MALLOC LINE */
	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_lock(&j->lock); /* JOB LOCK LINE */
	j->done = 1;
	pthread_mutex_unlock(&j->lock);
	pthread_mutex_destroy(&j->lock);
	free(j);
}
