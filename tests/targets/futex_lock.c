/*
 * futex_lock: the bank's lost update (examples/bank.c) under a hand-written
 * futex mutex instead of pthread_mutex_t: avtrace sees no pthread lock, only
 * the program's own futex calls on `lockword`.
 *
 * The lock: lock takes `lockword` 0 -> 1 by compare-and-swap and, while it
 * is taken, sleeps in FUTEX_WAIT on it; unlock stores 0 and FUTEX_WAKEs one
 * waiter (always: the lock does not count its waiters).
 *
 * main takes the lock before it starts the clients and keeps it until alice
 * has said she is on her way (`started`), so her lock meets a held lock and
 * waits on the word under avtrace (natively it may or may not).
 *
 * The bug (as in bank.c): deposit() reads the balance in one critical
 * section and writes it in another.  Bob does other work first, so alice
 * finishes before bob reads in a natural run and the balance ends at 175;
 *   alice reads 100, bob reads 100, alice writes 150, bob writes 125
 * loses alice's deposit and the assert at the end of main fails (SIGABRT).
 * futex_lock_ok.c is the same program with the read and the write in one
 * critical section (FUTEX_LOCK_OK): correct under every schedule.
 *
 * Usage: futex_lock [DELAY=20000000]   (bob's preamble, loop iterations)
 */
#include <assert.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

atomic_int lockword;     /* the futex word: 0 free, 1 taken */
atomic_int started;      /* alice is on her way */
long balance = 100;

static long delay;

__attribute__((noinline)) static void futex_lock(void)
{
	int expected = 0;
	while (!atomic_compare_exchange_strong(&lockword, &expected, 1)) {
		syscall(SYS_futex, &lockword, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0); /* WAIT LINE */
		expected = 0;
	}
}

__attribute__((noinline)) static void futex_unlock(void)
{
	atomic_store(&lockword, 0);
	syscall(SYS_futex, &lockword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); /* WAKE LINE */
}

#ifdef FUTEX_LOCK_OK
__attribute__((noinline)) static void deposit(long amount)
{
	futex_lock();
	balance = balance + amount;
	futex_unlock();
}
#else
__attribute__((noinline)) static long read_balance(void)
{
	futex_lock();
	long b = balance; /* READ LINE */
	futex_unlock();
	return b;
}

__attribute__((noinline)) static void write_balance(long b)
{
	futex_lock();
	balance = b; /* WRITE LINE */
	futex_unlock();
}

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) static void deposit(long amount)
{
	long b = read_balance();
	write_balance(b + amount);
}
#endif

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void *alice(void *arg)
{
	(void)arg;
	atomic_store(&started, 1);
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
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 20000000;
	pthread_t a, b;
	futex_lock();
	pthread_create(&a, NULL, alice, NULL);
	pthread_create(&b, NULL, bob, NULL);
	while (!atomic_load(&started))
		sched_yield();
	sched_yield();
	futex_unlock();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance=%ld\n", balance);
	assert(balance == 175);
	return 0;
}
