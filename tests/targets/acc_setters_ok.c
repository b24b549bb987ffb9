/*
 * acc_setters_ok (access breakpoints, correct counterpart of shapes 2 and
 * 6): acc_setters with the two stores and the two loads each under
 * `ab_lock`.  The setters' silent stores are still stores.  No schedule
 * makes the checker see (1, 0): `avtrace test` must report nothing.
 *
 * Usage: acc_setters_ok [N=4]   (1..64)
 * Built -O0 -g (bin/acc_setters_ok) and -O2 -g (bin/acc_setters_ok_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int a, b;
pthread_mutex_t ab_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void *setter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ab_lock);
	a = 1;
	b = -1;
	pthread_mutex_unlock(&ab_lock);
	return NULL;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ab_lock);
	int x = a;
	int y = b;
	pthread_mutex_unlock(&ab_lock);
	if (x == 1 && y != -1) {
		fprintf(stderr, "inconsistent: a=%d b=%d\n", x, y);
		exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[65];
	if (n < 1 || n > 64)
		n = 4;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, setter, NULL);
	pthread_create(&t[n], NULL, checker, NULL);
	for (int i = 0; i <= n; i++)
		pthread_join(t[i], NULL);
	printf("a=%d b=%d\n", a, b);
	return 0;
}
