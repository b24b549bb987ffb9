/*
 * acc_account_ok: acc_account's correct counterpart (issue 30, shape 1).
 * The same three threads, but the checker asserts what the updaters
 * compute (balance == x + y - z) and main joins all three before it
 * returns.  Exits 0 under every schedule: no report.
 *
 * Usage: acc_account_ok
 * Built -O0 -g (bin/acc_account_ok) and -O2 -g (bin/acc_account_ok_O2).
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
	balance = balance + y;
	deposit_done = 1;
	pthread_mutex_unlock(&m);
	return NULL;
}

__attribute__((noinline)) static void *withdraw(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	balance = balance - z;
	withdraw_done = 1;
	pthread_mutex_unlock(&m);
	return NULL;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	if (deposit_done && withdraw_done)
		assert(balance == (x + y) - z); /* CHECK LINE */
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
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_join(t3, NULL);
	printf("balance=%d\n", balance);
	return 0;
}
