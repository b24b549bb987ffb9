/*
 * exit_locked: a correct program that ends with a lock held and a thread
 * blocked on it.  main takes `lock`, starts a worker that blocks in
 * pthread_mutex_lock(&lock), prints "bye" and returns 0: the process ends
 * with the worker still waiting.  Nothing is wrong: exit 0, no report (it
 * must not be called a deadlock).
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	counter++;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_mutex_lock(&lock);
	pthread_create(&t, NULL, worker, NULL);
	printf("bye\n");
	return 0;
}
