/*
 * stdin_sum: main reads whitespace-separated numbers from stdin, a worker
 * thread adds each to a sum under a lock, main prints it.  Exits 1 when
 * stdin held no number: a replay must give it the recorded stdin again.
 * Correct program.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long pending, sum;
static int have, done;

static void *adder(void *arg)
{
	pthread_mutex_lock(&m);
	for (;;) {
		while (!have && !done)
			pthread_cond_wait(&c, &m);
		if (have) {
			sum += pending;
			have = 0;
			pthread_cond_signal(&c);
		} else if (done) {
			break;
		}
	}
	pthread_mutex_unlock(&m);
	return arg;
}

int main(void)
{
	pthread_t t;
	long v, n = 0;
	pthread_create(&t, NULL, adder, NULL);
	while (scanf("%ld", &v) == 1) {
		pthread_mutex_lock(&m);
		while (have)
			pthread_cond_wait(&c, &m);
		pending = v;
		have = 1;
		n++;
		pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
	}
	pthread_mutex_lock(&m);
	while (have)
		pthread_cond_wait(&c, &m);
	done = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("%ld numbers, sum %ld\n", n, sum);
	return n ? 0 : 1;
}
