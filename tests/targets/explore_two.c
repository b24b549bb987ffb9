/*
 * explore_two: two distinct failures, each of its own thread order, that
 * only exploration finds (no detector predicts an order of critical
 * sections that share no data it sees): a target for counting bugs.
 *
 * Worker T1 runs two critical sections of log_lock, worker T2 one; each
 * appends its thread's number to `order`.  main checks the order after the
 * joins:
 *   2 1 1  (T2 before T1):             abort at FIRST LINE
 *   1 2 1  (T2 between T1's sections): abort at BETWEEN LINE
 *   1 1 2  (the natural order):        prints "order=112", exits 0
 * T2 starts with busy work (DELAY), so natively T1 is done before T2
 * begins; serialized by the recorder (main runs until it blocks in
 * pthread_join, then T1, T2 by logical id) too.
 *
 * Usage: explore_two [DELAY=20000000]   (loop iterations)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int order[3];
static int n;
static long delay = 20000000;

static void append(int who)
{
	pthread_mutex_lock(&log_lock);
	order[n++] = who;
	pthread_mutex_unlock(&log_lock);
}

static void *first(void *arg)
{
	(void)arg;
	append(1);
	append(1);
	return NULL;
}

static void *second(void *arg)
{
	(void)arg;
	for (volatile long i = 0; i < delay; i++)
		;
	append(2);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1)
		delay = atol(argv[1]);
	pthread_create(&a, NULL, first, NULL);
	pthread_create(&b, NULL, second, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (order[0] == 2)
		abort(); /* FIRST LINE */
	if (order[1] == 2)
		abort(); /* BETWEEN LINE */
	printf("order=%d%d%d\n", order[0], order[1], order[2]);
	return 0;
}
