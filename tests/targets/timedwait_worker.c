/*
 * Timed condition waits beside a worker (the shape of a compressor's
 * progress loop): main waits in pthread_cond_timedwait with a 300 ms
 * timeout, again and again, until a worker that computes without any
 * pthread call for a while sets `finished` under the lock and signals.
 * Correct: exits 0.  Under a serializing scheduler the worker must run
 * while main waits; a wait must not run to its full timeout each time
 * while the worker sits stopped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int finished;
static unsigned long result;

static __attribute__((noinline)) unsigned long compute(unsigned long n)
{
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static void *worker(void *arg)
{
	unsigned long n = *(unsigned long *)arg;
	for (int part = 0; part < 4; part++) {
		unsigned long x = compute(n / 4);
		pthread_mutex_lock(&lock);
		result += x & 1;
		if (part == 3)
			finished = 1;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? (unsigned long)atol(argv[1]) : 40000000ul;
	pthread_t t;
	pthread_create(&t, NULL, worker, &n);
	int waits = 0;
	pthread_mutex_lock(&lock);
	while (!finished) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 300000000l;
		if (ts.tv_nsec >= 1000000000l) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000l;
		}
		pthread_cond_timedwait(&cond, &lock, &ts);
		waits++;
	}
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
	printf("finished %lu\n", result);
	return 0;
}
