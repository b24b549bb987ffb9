/*
 * barrier_never: a barrier for three threads that only two ever reach
 * (main and one worker): a deadlock on every run.  The deadlock report
 * must name the line of each wait (marked below).
 */
#include <pthread.h>

static pthread_barrier_t gate;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&gate); /* WORKER WAIT LINE */
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_barrier_init(&gate, NULL, 3);
	pthread_create(&t, NULL, worker, NULL);
	pthread_barrier_wait(&gate); /* MAIN WAIT LINE */
	pthread_join(t, NULL);
	return 0;
}
