/*
 * bench/minimize: a bug that needs about ten context switches in a run of
 * about 10^4 events.  Two workers take turns at a relay: worker w makes
 * five attempts, its k-th passes the baton on (stage 2k+w -> 2k+w+1) only
 * if the other worker has just passed it back; between attempts each does
 * NOISE lock/unlock pairs on a lock of its own.  main aborts when the baton
 * went all the way (stage 10): only a run in which the attempts alternate
 * A0 B0 A1 B1 ... B4 fails, i.e. one with a switch at each hand-over.
 * Every attempt reads and writes the stage whatever it holds, so each
 * thread's events are the same in every run.
 *
 * Usage: minimize_target [NOISE=500]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own_lock[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
long stage;
static long noise = 500;
static volatile long work[2];

__attribute__((noinline)) static void attempt(long want)
{
	pthread_mutex_lock(&stage_lock);
	long s = stage;
	stage = s == want ? s + 1 : s;
	pthread_mutex_unlock(&stage_lock);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long w = (long)arg;
	for (long k = 0; k < 5; k++) {
		for (long i = 0; i < noise; i++) {
			pthread_mutex_lock(&own_lock[w]);
			work[w]++;
			pthread_mutex_unlock(&own_lock[w]);
		}
		attempt(2 * k + w);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		noise = strtol(argv[1], NULL, 10);
	pthread_t t[2];
	for (long w = 0; w < 2; w++)
		if (pthread_create(&t[w], NULL, worker, (void *)w) != 0)
			return 2;
	for (long w = 0; w < 2; w++)
		pthread_join(t[w], NULL);
	if (stage == 10)
		abort(); /* the relay went all the way round */
	printf("stage %ld\n", stage);
	return 0;
}
