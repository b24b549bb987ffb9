/*
 * spec_mylock: the bank bug (examples/bank.c) with a lock of the
 * program's own, my_lock/my_unlock on a spinning word, which avtrace
 * knows only from a sync spec naming them (tests/e2e/test_syncspec.sh,
 * docs/sync-spec.md):
 *
 *   my_lock acquire
 *   my_unlock release
 *
 * deposit() reads the balance in one critical section and writes it in
 * another; alice deposits 50, bob (after other work) 25.  Natively 175;
 * alice reads 100, bob reads 100, alice writes, bob writes: SIGABRT.
 *
 * Usage: spec_mylock [DELAY=50000000]
 * Lock `balance_lock` (a struct my_lock), shared `balance`.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

struct my_lock {
	int word;
};

struct my_lock balance_lock;
long balance = 100;

static long delay;

__attribute__((noinline)) void my_lock(struct my_lock *l)
{
	while (__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

__attribute__((noinline)) void my_unlock(struct my_lock *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
}

__attribute__((noinline)) static long read_balance(void)
{
	my_lock(&balance_lock); /* READ LOCK LINE */
	long b = balance; /* READ LINE */
	my_unlock(&balance_lock);
	return b;
}

__attribute__((noinline)) static void write_balance(long b)
{
	my_lock(&balance_lock); /* WRITE LOCK LINE */
	balance = b; /* WRITE LINE */
	my_unlock(&balance_lock);
}

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) static void deposit(long amount)
{
	long b = read_balance();
	write_balance(b + amount);
}

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static void *alice(void *arg)
{
	(void)arg;
	deposit(50);
	return NULL;
}

static void *bob(void *arg)
{
	(void)arg;
	other_work(delay);
	deposit(25);
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	pthread_t a, b;
	if (pthread_create(&a, NULL, alice, NULL) != 0 || pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance=%ld\n", balance);
	assert(balance == 175); /* ASSERT LINE */
	return 0;
}
