/*
 * acc_account (issue 30, shape 1; access breakpoints, unannotated): main
 * returns without joining three threads, and the bug needs both updaters
 * and the checker to run, in that order, before the process exits.
 *
 *   main:      balance = x; creates T1 checker, T2 deposit, T3 withdraw;
 *              returns 0 at once (EXIT LINE): the process ends, and the
 *              workers that have not finished die with it
 *   deposit:   under m: balance += y (DEPOSIT LINE); deposit_done = 1
 *   withdraw:  under m: balance -= z (WITHDRAW LINE); withdraw_done = 1
 *   checker:   under m: if both are done, asserts balance == x - y - z
 *              (CHECK LINE): wrong, it is x + y - z: SIGABRT in T1
 *
 * Natively main's return usually ends the process before the workers run,
 * or the checker (created first) runs before the updaters: exit 0.  The
 * failing runs need deposit and withdraw (either order), then the
 * checker, all before main's return takes effect.  After SCTBench's
 * account_bad (written here anew).
 *
 * Usage: acc_account
 * Built -O0 -g (bin/acc_account) and -O2 -g (bin/acc_account_O2).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x, y, z, balance;
int deposit_done, withdraw_done;

__attribute__((noinline)) static void *deposit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	balance = balance + y; /* DEPOSIT LINE */
	deposit_done = 1;
	pthread_mutex_unlock(&m);
	return NULL;
}

__attribute__((noinline)) static void *withdraw(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	balance = balance - z; /* WITHDRAW LINE */
	withdraw_done = 1;
	pthread_mutex_unlock(&m);
	return NULL;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	if (deposit_done && withdraw_done)
		assert(balance == (x - y) - z); /* CHECK LINE */
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2, t3;
	x = 1;
	y = 2;
	z = 4;
	balance = x;
	if (pthread_create(&t1, NULL, checker, NULL) || pthread_create(&t2, NULL, deposit, NULL) ||
	    pthread_create(&t3, NULL, withdraw, NULL))
		return 2;
	return 0; /* EXIT LINE */
}
