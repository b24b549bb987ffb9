/*
 * workqueue: a correct bounded work queue (capacity 8) served by W worker
 * threads (default 8).  main submits J jobs (default 64), then shuts the
 * queue down (sets `shutting_down`, broadcasts `work_ready`) and joins the
 * workers.  Each worker adds its job's result to `total` under
 * `result_lock`.  Used as a "must report zero bugs" target: every shared
 * variable is accessed under its lock and every wait is in a loop.
 *
 * Usage: workqueue [W=8] [J=64]
 * Prints the total; exits 0 iff total == sum of job*job for job < J.
 *
 * A recording must contain, under any schedule (W = number of condition
 * waits, schedule-dependent; a wait is a `wait` event plus a wake `acquire`):
 *   release    obj_name queue_lock   2*J + W_threads + 1
 *              (J submits, J takes, each worker's last look, the shutdown)
 *   acquire    obj_name queue_lock   that + W
 *   signal     obj_name work_ready   J    (func submit)
 *   signal     obj_name slot_free    J    (func take)
 *   broadcast  obj_name work_ready   1    (func shutdown)
 *   acquire    obj_name result_lock  J,  release obj_name result_lock  J
 *   create W_threads, join W_threads
 * With the defaults: 137 releases of queue_lock, 64+64+1 signals/broadcast.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define CAPACITY 8
#define MAX_WORKERS 64

pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
pthread_cond_t slot_free = PTHREAD_COND_INITIALIZER;
long jobs[CAPACITY];
int jobs_head, jobs_count;
bool shutting_down;

pthread_mutex_t result_lock = PTHREAD_MUTEX_INITIALIZER;
long total;

__attribute__((noinline)) static void submit(long job)
{
	pthread_mutex_lock(&queue_lock);
	while (jobs_count == CAPACITY)
		pthread_cond_wait(&slot_free, &queue_lock);
	jobs[(jobs_head + jobs_count) % CAPACITY] = job;
	jobs_count++;
	pthread_cond_signal(&work_ready);
	pthread_mutex_unlock(&queue_lock);
}

__attribute__((noinline)) static void shutdown_queue(void)
{
	pthread_mutex_lock(&queue_lock);
	shutting_down = true;
	pthread_cond_broadcast(&work_ready);
	pthread_mutex_unlock(&queue_lock);
}

/* Returns false when the queue is empty and shut down. */
__attribute__((noinline)) static bool take(long *job)
{
	pthread_mutex_lock(&queue_lock);
	while (jobs_count == 0 && !shutting_down)
		pthread_cond_wait(&work_ready, &queue_lock);
	if (jobs_count == 0) {
		pthread_mutex_unlock(&queue_lock);
		return false;
	}
	*job = jobs[jobs_head];
	jobs_head = (jobs_head + 1) % CAPACITY;
	jobs_count--;
	pthread_cond_signal(&slot_free);
	pthread_mutex_unlock(&queue_lock);
	return true;
}

__attribute__((noinline)) static long run_job(long job)
{
	volatile long r = 0;
	for (long i = 0; i < job; i++)
		r += job;
	return r;
}

__attribute__((noinline)) static void add_result(long r)
{
	pthread_mutex_lock(&result_lock);
	total += r;
	pthread_mutex_unlock(&result_lock);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long job;
	(void)arg;
	while (take(&job))
		add_result(run_job(job));
	return NULL;
}

static long arg_or(int argc, char **argv, int i, long def)
{
	return argc > i ? strtol(argv[i], NULL, 10) : def;
}

int main(int argc, char **argv)
{
	long nworkers = arg_or(argc, argv, 1, 8);
	long njobs = arg_or(argc, argv, 2, 64);
	if (nworkers < 1 || nworkers > MAX_WORKERS || njobs < 0) {
		fprintf(stderr, "usage: workqueue [WORKERS=8] [JOBS=64]\n");
		return 2;
	}

	pthread_t tids[MAX_WORKERS];
	for (long i = 0; i < nworkers; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL) != 0)
			return 2;
	for (long j = 0; j < njobs; j++)
		submit(j);
	shutdown_queue();
	for (long i = 0; i < nworkers; i++)
		pthread_join(tids[i], NULL);

	long expect = 0;
	for (long j = 0; j < njobs; j++)
		expect += j * j;
	printf("total=%ld\n", total);
	return total == expect ? 0 : 1;
}
