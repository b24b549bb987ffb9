/*
 * ledger.c: libledger.la of am_proj, the lost update of examples/bank.c in
 * a libtool library (tests/e2e/test_tree28.sh, t_tree_automake_check_*).
 * Sites: LEDGER READ, LEDGER WRITE below.
 */
#include <pthread.h>

#include "ledger.h"

static pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance;

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) void deposit(long amount)
{
	pthread_mutex_lock(&balance_lock);
	long b = balance; /* LEDGER READ */
	pthread_mutex_unlock(&balance_lock);
	pthread_mutex_lock(&balance_lock);
	balance = b + amount; /* LEDGER WRITE */
	pthread_mutex_unlock(&balance_lock);
}

__attribute__((noinline)) void deposit_locked(long amount)
{
	pthread_mutex_lock(&balance_lock);
	balance += amount;
	pthread_mutex_unlock(&balance_lock);
}
