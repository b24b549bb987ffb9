/*
 * cas_spinlock: the bank's lost update (examples/bank.c) under a
 * hand-written compare-and-swap spinlock: no pthread lock and no futex
 * call, only the program's atomic accesses on `spinword`.
 *
 * The lock: lock takes `spinword` 0 -> 1 by compare-and-swap and, while
 * it is taken, yields and tries again; unlock stores 0.
 *
 * main takes the lock before it starts the clients and keeps it until
 * alice has said she is on her way (`started`), so her first
 * compare-and-swap meets a held lock and fails under avtrace (the evidence
 * predict needs that the word is a lock: docs/predict.md, "Lock words").
 *
 * The bug (as in futex_lock.c): deposit() reads the balance in one
 * critical section and writes it in another; bob does other work first,
 * so alice finishes before he reads in a natural run (balance 175);
 *   alice reads 100, bob reads 100, alice writes 150, bob writes 125
 * loses alice's deposit and the assert at the end of main fails (SIGABRT).
 * With CAS_SPINLOCK_OK (cas_spinlock_ok.c) the read and the write are one
 * critical section: correct under every schedule.
 *
 * Usage: cas_spinlock [DELAY=20000000]   (bob's preamble, loop iterations)
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

atomic_int spinword;     /* 0 free, 1 taken */
atomic_int started;      /* alice is on her way */
long balance = 100;

static long delay;

__attribute__((noinline)) static void spin_lock(void)
{
	int expected = 0;
	while (!atomic_compare_exchange_strong(&spinword, &expected, 1)) { /* CAS LINE */
		sched_yield();
		expected = 0;
	}
}

__attribute__((noinline)) static void spin_unlock(void)
{
	atomic_store(&spinword, 0);
}

#ifdef CAS_SPINLOCK_OK
__attribute__((noinline)) static void deposit(long amount)
{
	spin_lock();
	balance = balance + amount;
	spin_unlock();
}
#else
__attribute__((noinline)) static long read_balance(void)
{
	spin_lock();
	long b = balance;
	spin_unlock();
	return b;
}

__attribute__((noinline)) static void write_balance(long b)
{
	spin_lock();
	balance = b;
	spin_unlock();
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
	spin_lock();
	pthread_create(&a, NULL, alice, NULL);
	pthread_create(&b, NULL, bob, NULL);
	while (!atomic_load(&started))
		sched_yield();
	sched_yield();
	spin_unlock();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance=%ld\n", balance);
	assert(balance == 175);
	return 0;
}
