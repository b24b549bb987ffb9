/*
 * cond_never: a worker waits on a condition variable that nobody ever
 * signals, and main joins it: a deadlock on every run.  The deadlock
 * report must name the line of the wait (marked below).
 */
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!ready)
		pthread_cond_wait(&ready_cond, &lock); /* WAIT LINE */
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	return 0;
}
