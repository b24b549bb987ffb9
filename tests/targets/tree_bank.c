/*
 * tree_bank: the lost update of examples/bank.c, small, for the process
 * tree tests of issue 28 (tests/e2e/test_tree28.sh).  It is run one
 * process down: exec'd by tree_wrapper.sh, forked and exec'd by
 * tree_runner and tree_spawn, and by ctest in cmake_proj/.
 *
 * deposit() reads `balance` in one critical section and writes it back in
 * a second one.  alice deposits 50, bob does some other work and deposits
 * 25.  Natively alice is done long before bob deposits (creating bob's
 * thread and his other work take far longer than alice's two critical
 * sections), so the total is right; the order
 *   alice reads, bob reads, bob writes, alice writes
 * loses bob's deposit and the assert at the end of main fails (SIGABRT).
 *
 * Usage: tree_bank [INITIAL=100]     (prints balance=INITIAL+75)
 * Sites: TREE BANK READ, TREE BANK WRITE, TREE BANK ASSERT below.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance;

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) static void deposit(long amount)
{
	pthread_mutex_lock(&balance_lock);
	long b = balance; /* TREE BANK READ */
	pthread_mutex_unlock(&balance_lock);
	pthread_mutex_lock(&balance_lock);
	balance = b + amount; /* TREE BANK WRITE */
	pthread_mutex_unlock(&balance_lock);
}

/* Other work first (no shared memory, no lock): natively the first
 * deposit is long done when the second starts, even on a loaded machine
 * (without it, one run in a hundred of tree_forktwo lost a deposit; with
 * 20,000 rounds, a clean-clone CI run's native tree_spawn did once: now
 * some milliseconds).  Its counter is the thread's own stack: no events,
 * and its site is disarmed after 256 private hits. */
__attribute__((noinline)) static void other_work(void)
{
	for (volatile long i = 0; i < 2000000; i++)
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
	assert(balance == initial + 75); /* TREE BANK ASSERT */
	return 0;
}
