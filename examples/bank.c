/*
 * bank: the README demo, a lost update.
 *
 * deposit() reads the balance in one critical section and writes the new
 * balance in another, so the lock protects each access but not the
 * read-modify-write as a whole.  Two clients deposit concurrently:
 *
 *   alice:  deposit(50)
 *   bob:    (busy with other work first) deposit(25)
 *
 * In a natural run bob's long preamble lets alice finish first, the
 * balance ends at 100 + 50 + 25 = 175 and the assert holds.  The order
 *   alice reads 100, bob reads 100, alice writes 150, bob writes 125
 * loses alice's deposit and the assert at the end of main fails (SIGABRT).
 *
 * Usage: bank [DELAY=150000000]   (bob's preamble, loop iterations)
 *
 * Shared state for --watch: `balance` (a global long), lock
 * `balance_lock`.  Sites: READ LINE and WRITE LINE below.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance = 100;

static long delay;

__attribute__((noinline)) static long read_balance(void)
{
	pthread_mutex_lock(&balance_lock);
	long b = balance; /* READ LINE */
	pthread_mutex_unlock(&balance_lock);
	return b;
}

__attribute__((noinline)) static void write_balance(long b)
{
	pthread_mutex_lock(&balance_lock);
	balance = b; /* WRITE LINE */
	pthread_mutex_unlock(&balance_lock);
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

__attribute__((noinline)) static void *alice(void *arg)
{
	(void)arg;
	deposit(50);
	return NULL;
}

__attribute__((noinline)) static void *bob(void *arg)
{
	(void)arg;
	other_work(delay);
	deposit(25);
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;

	pthread_t a, b;
	if (pthread_create(&a, NULL, alice, NULL) != 0 ||
	    pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	printf("balance=%ld\n", balance);
	assert(balance == 175); /* ASSERT LINE */
	return 0;
}
