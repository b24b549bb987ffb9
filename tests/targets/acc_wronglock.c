/*
 * acc_wronglock (access breakpoints, shape 1): a counter updated by two
 * kinds of threads under two different locks.  Unannotated.
 *
 *   adder   (T1): ROUNDS x { lock(lock_a); v = hits; hits = bump(v); unlock }
 *   auditor (T2): ROUNDS x { lock(lock_b); v = hits; hits = bump(v); unlock }
 *
 * Each read-modify-write is protected, but by a different lock, so the
 * other kind's write can fall between the read and the write (HITS LINE):
 * a lost update, and main exits 1 ("lost update").  The natural run (T1
 * to its end, then T2) is correct: exit 0.  The load and the store are
 * separate instructions at -O0 and at -O2 (bump() is not inlined).
 * Built -O0 -g (bin/acc_wronglock) and -O2 -g (bin/acc_wronglock_O2).
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
		pthread_mutex_lock(&lock_b);
		long v = hits;
		hits = bump(v);
		pthread_mutex_unlock(&lock_b);
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
