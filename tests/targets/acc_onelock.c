/*
 * acc_onelock (access breakpoints, correct counterpart of shape 1): the
 * acc_wronglock program with both kinds of threads under lock_a.
 *
 * Every read-modify-write of `hits` holds lock_a: no schedule loses an
 * update, and `avtrace test` must report nothing.
 * Built -O0 -g (bin/acc_onelock) and -O2 -g (bin/acc_onelock_O2).
 */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
long hits;

__attribute__((noinline)) long bump(long v)
{
	__asm__ volatile("" ::: "memory");
	return v + 1;
}

__attribute__((noinline)) static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock_a);
		long v = hits;
		hits = bump(v); /* HITS LINE */
		pthread_mutex_unlock(&lock_a);
	}
	return NULL;
}

__attribute__((noinline)) static void *auditor(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock_a);
		long v = hits;
		hits = bump(v);
		pthread_mutex_unlock(&lock_a);
	}
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	pthread_create(&t1, NULL, adder, NULL);
	pthread_create(&t2, NULL, auditor, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	if (hits != 2 * ROUNDS) {
		fprintf(stderr, "lost update: hits=%ld, expected %d\n", hits, 2 * ROUNDS);
		return 1;
	}
	printf("hits=%ld\n", hits);
	return 0;
}
