/*
 * exit_thread: a worker ends the whole process with exit(3) while main
 * waits for it in pthread_join.  The recorded run exits 3; the trace has
 * the worker's exit and no join by main (main never returned from it).
 */
#include <pthread.h>
#include <stdlib.h>

static void *worker(void *arg)
{
	(void)arg;
	exit(3);
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	return 0;
}
