/*
 * acc_twostage (issue 30, shape 2; access breakpoints, unannotated): 100
 * threads, N writers in two stages and one reader.  After SCTBench's
 * twostage_100_bad (written here anew).
 *
 *   writer (T1..TN): stage 1 under lock1: data1 = 1 (STAGE ONE LINE);
 *                    stage 2 under lock2: data2 = data1 + 1 (STAGE TWO
 *                    LINE; data1 read without lock1: the racing pair)
 *   reader (TN+1):   under lock1: t1 = data1 (READ ONE LINE), 0: done;
 *                    under lock2: t2 = data2 (READ TWO LINE);
 *                    t2 != t1 + 1: "Bug found", abort (CHECK LINE)
 *
 * The stages of a writer are not one atomic step: a reader between a
 * writer's stage 1 and the first stage 2 of any writer sees data1 = 1 and
 * data2 = 0: SIGABRT in the reader.  Natively, and serialized as the
 * recorder runs threads (in creation order), every writer is done before
 * the reader reads: exit 0.
 *
 * Usage: acc_twostage [N=99]   (writers, 1..255; N + 1 threads)
 * Built -O0 -g (bin/acc_twostage) and -O2 -g (bin/acc_twostage_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock2 = PTHREAD_MUTEX_INITIALIZER;
int data1, data2;

__attribute__((noinline)) static void *writer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock1);
	data1 = 1; /* STAGE ONE LINE */
	pthread_mutex_unlock(&lock1);
	pthread_mutex_lock(&lock2);
	data2 = data1 + 1; /* STAGE TWO LINE */
	pthread_mutex_unlock(&lock2);
	return NULL;
}

__attribute__((noinline)) static void *reader(void *arg)
{
	(void)arg;
	int t1, t2;
	pthread_mutex_lock(&lock1);
	t1 = data1; /* READ ONE LINE */
	pthread_mutex_unlock(&lock1);
	if (t1 == 0)
		return NULL;
	pthread_mutex_lock(&lock2);
	t2 = data2; /* READ TWO LINE */
	pthread_mutex_unlock(&lock2);
	if (t2 != t1 + 1) {
		fprintf(stderr, "Bug found: data1=%d data2=%d\n", t1, t2);
		abort(); /* CHECK LINE */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t t[256];
	int n = argc > 1 ? atoi(argv[1]) : 99;
	if (n < 1 || n > 255)
		n = 99;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, writer, NULL))
			return 2;
	if (pthread_create(&t[n], NULL, reader, NULL))
		return 2;
	for (int i = 0; i <= n; i++)
		pthread_join(t[i], NULL);
	printf("data1=%d data2=%d\n", data1, data2);
	return 0;
}
