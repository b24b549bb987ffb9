/*
 * bank_test.c: am_proj's test programs.  Built twice: bank_test deposits
 * through deposit() (ledger.c, the lost update), bank_ok_test (-DLOCKED)
 * through deposit_locked().  alice deposits 50; bob does other work first
 * and deposits 25: natively alice is long done when bob starts, so the
 * total is right; the order alice reads, bob reads, bob writes, alice
 * writes loses bob's deposit and the assert fails (SIGABRT).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#include "ledger.h"

#ifdef LOCKED
#define DEPOSIT deposit_locked
#else
#define DEPOSIT deposit
#endif

__attribute__((noinline)) static void other_work(void)
{
	for (volatile long i = 0; i < 20000; i++)
		;
}

static void *alice(void *arg)
{
	(void)arg;
	DEPOSIT(50);
	return NULL;
}

static void *bob(void *arg)
{
	(void)arg;
	other_work();
	DEPOSIT(25);
	return NULL;
}

int main(void)
{
	balance = 100;
	pthread_t a, b;
	if (pthread_create(&a, NULL, alice, NULL) != 0 || pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance=%ld\n", balance);
	assert(balance == 175);
	return 0;
}
