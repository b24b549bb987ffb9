/*
 * tree_bank_ok: tree_bank.c fixed, the correct counterpart run by the
 * process tree tests of issue 28 (tests/e2e/test_tree28.sh).  deposit()
 * reads and writes `balance` in one critical section, so no order of the
 * two deposits loses one: avtrace test must exit 0 with no report.
 *
 * Usage: tree_bank_ok [INITIAL=100]  (prints balance=INITIAL+75)
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance;

__attribute__((noinline)) static void deposit(long amount)
{
	pthread_mutex_lock(&balance_lock);
	long b = balance;
	balance = b + amount;
	pthread_mutex_unlock(&balance_lock);
}

/* Other work first (no shared memory, no lock): natively the first
 * deposit is long done when the second starts, even on a loaded machine
 * (without it, one run in a hundred of tree_forktwo lost a deposit). */
__attribute__((noinline)) static void other_work(void)
{
	for (volatile long i = 0; i < 20000; i++)
		;
}

__attribute__((noinline)) static void *alice(void *arg)
{
	(void)arg;
	deposit(50);
	return NULL;
}

__attribute__((noinline)) static void *bob(void *arg)
{
	(void)arg;
	other_work();
	deposit(25);
	return NULL;
}

int main(int argc, char **argv)
{
	long initial = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	balance = initial;

	pthread_t a, b;
	if (pthread_create(&a, NULL, alice, NULL) != 0 ||
	    pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	printf("balance=%ld\n", balance);
	assert(balance == initial + 75);
	return 0;
}
