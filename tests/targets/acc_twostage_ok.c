/*
 * acc_twostage_ok: acc_twostage's correct counterpart (issue 30, shape
 * 2).  The same N writers and one reader, but a writer holds lock1 across
 * both stages (lock2 nested) and the reader reads data1 and data2 under
 * both locks: it never sees one stage without the other.  Exits 0 under
 * every schedule: no report.
 *
 * Usage: acc_twostage_ok [N=99]   (writers, 1..255; N + 1 threads)
 * Built -O0 -g (bin/acc_twostage_ok) and -O2 -g (bin/acc_twostage_ok_O2).
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
	data1 = 1;
	pthread_mutex_lock(&lock2);
	data2 = data1 + 1;
	pthread_mutex_unlock(&lock2);
	pthread_mutex_unlock(&lock1);
	return NULL;
}

__attribute__((noinline)) static void *reader(void *arg)
{
	(void)arg;
	int t1, t2;
	pthread_mutex_lock(&lock1);
	pthread_mutex_lock(&lock2);
	t1 = data1;
	t2 = data2;
	pthread_mutex_unlock(&lock2);
	pthread_mutex_unlock(&lock1);
	if (t1 != 0 && t2 != t1 + 1) {
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
