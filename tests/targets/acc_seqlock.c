/*
 * acc_seqlock (access breakpoints, correct lock-free code): a sequence
 * lock in C11 atomics.  The writer makes the sequence odd, stores both
 * halves, makes it even; the reader retries until it read an even,
 * unchanged sequence around its two loads, and then requires the halves
 * equal.  Correct under every interleaving: `avtrace test` must report
 * nothing.  Unannotated.
 * Built -O0 -g (bin/acc_seqlock) and -O2 -g (bin/acc_seqlock_O2).
 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 3

static atomic_uint seq;
static atomic_long lo, hi;

__attribute__((noinline)) static void *writer(void *arg)
{
	(void)arg;
	for (long v = 1; v <= ROUNDS; v++) {
		atomic_fetch_add(&seq, 1);
		atomic_store(&lo, v);
		atomic_store(&hi, v);
		atomic_fetch_add(&seq, 1);
	}
	return NULL;
}

__attribute__((noinline)) static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		unsigned s1, s2;
		long a, b;
		do {
			s1 = atomic_load(&seq);
			a = atomic_load(&lo);
			b = atomic_load(&hi);
			s2 = atomic_load(&seq);
		} while ((s1 & 1) || s1 != s2);
		if (a != b) {
			fprintf(stderr, "torn read: %ld %ld\n", a, b);
			exit(1);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	pthread_create(&t1, NULL, writer, NULL);
	pthread_create(&t2, NULL, reader, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("lo=%ld hi=%ld\n", atomic_load(&lo), atomic_load(&hi));
	return 0;
}
