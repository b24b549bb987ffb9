/*
 * glib_bank: examples/bank.c with a GLib GMutex instead of a
 * pthread_mutex_t (GLib's locks are futex words inside libglib, not
 * pthread calls: avtrace knows them from its built-in GLib sync spec,
 * docs/sync-spec.md).  The lost update: deposit() reads the balance in
 * one critical section and writes it in another.
 *
 *   alice:  deposit(50)
 *   bob:    (busy with other work first) deposit(25)
 *
 * Natively bob's preamble lets alice finish first: 175.  The order
 *   alice reads 100, bob reads 100, alice writes 150, bob writes 125
 * fails the assert (SIGABRT).  -DGLIB_BANK_OK (glib_bank_ok.c) holds the
 * lock across the read and the write: correct under every order.
 *
 * Usage: glib_bank [DELAY=50000000]   (bob's preamble, loop iterations)
 * Lock `balance_lock` (a global GMutex), shared `balance`.
 */
#include <assert.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

GMutex balance_lock;
long balance = 100;

static long delay;

#ifndef GLIB_BANK_OK
__attribute__((noinline)) static long read_balance(void)
{
	g_mutex_lock(&balance_lock); /* READ LOCK LINE */
	long b = balance; /* READ LINE */
	g_mutex_unlock(&balance_lock);
	return b;
}

__attribute__((noinline)) static void write_balance(long b)
{
	g_mutex_lock(&balance_lock); /* WRITE LOCK LINE */
	balance = b; /* WRITE LINE */
	g_mutex_unlock(&balance_lock);
}

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) static void deposit(long amount)
{
	long b = read_balance();
	write_balance(b + amount);
}
#else
__attribute__((noinline)) static void deposit(long amount)
{
	g_mutex_lock(&balance_lock);
	balance = balance + amount; /* OK LINE */
	g_mutex_unlock(&balance_lock);
}
#endif

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static gpointer alice(gpointer arg)
{
	(void)arg;
	deposit(50);
	return NULL;
}

static gpointer bob(gpointer arg)
{
	(void)arg;
	other_work(delay);
	deposit(25);
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000000;
	GThread *a = g_thread_new("alice", alice, NULL);
	GThread *b = g_thread_new("bob", bob, NULL);
	g_thread_join(a);
	g_thread_join(b);
	printf("balance=%ld\n", balance);
	assert(balance == 175); /* ASSERT LINE */
	return 0;
}
