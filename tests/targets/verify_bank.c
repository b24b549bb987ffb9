/*
 * verify_bank: the bank lost update with every access in one function,
 * and the fixes 'avtrace verify' must judge (tests/e2e/test_verify.sh),
 * each built from this source with one -D flag (tests/targets/targets.mk):
 *
 *   (none)        the bug: deposit() reads the balance in one critical
 *                 section and writes it in another; alice and bob deposit
 *                 at once, and "alice reads, bob deposits, alice writes"
 *                 loses bob's deposit: check_total() aborts
 *   VB_HOLD       fixed: the lock is held across the read and the write
 *   VB_INSIDE     fixed: the first section counts the deposit, the read
 *                 moved inside the write's section
 *   VB_ATOMIC     fixed another way: the write is an atomic fetch-add of
 *                 the amount, so no stale value is ever stored (the first
 *                 section still reads the balance, for the receipt)
 *   VB_MOVED      unfixed, rebuilt with code above the bug: every address
 *                 and line below moves
 *   VB_NOBOB      bob no longer touches the balance (he deposits into his
 *                 savings): the racing thread's accesses are gone
 *
 * Usage: verify_bank            (exit 0 when the total is right)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef VB_MOVED
/* Lines added above the bug, and code: the functions below move too. */
static volatile long moved_counter;

__attribute__((noinline)) static void moved_helper(void)
{
	for (int i = 0; i < 3; i++)
		moved_counter += i;
	moved_counter *= 2;
}
#endif

pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance = 100;
long savings;
long deposits;
long receipt;

__attribute__((noinline)) static void deposit(long *acct, long amount)
{
#if defined(VB_HOLD)
	pthread_mutex_lock(&balance_lock);
	long b = *acct;
	*acct = b + amount;
	pthread_mutex_unlock(&balance_lock);
#elif defined(VB_INSIDE)
	pthread_mutex_lock(&balance_lock);
	deposits++;
	pthread_mutex_unlock(&balance_lock);
	pthread_mutex_lock(&balance_lock);
	long b = *acct;
	*acct = b + amount;
	pthread_mutex_unlock(&balance_lock);
#elif defined(VB_ATOMIC)
	pthread_mutex_lock(&balance_lock);
	long b = *acct;
	pthread_mutex_unlock(&balance_lock);
	receipt = b + amount;
	pthread_mutex_lock(&balance_lock);
	__atomic_fetch_add(acct, amount, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&balance_lock);
#else
	pthread_mutex_lock(&balance_lock);
	long b = *acct; /* VB READ */
	pthread_mutex_unlock(&balance_lock);
	pthread_mutex_lock(&balance_lock);
	*acct = b + amount; /* VB WRITE */
	pthread_mutex_unlock(&balance_lock);
#endif
}

__attribute__((noinline)) static void *alice(void *arg)
{
	(void)arg;
	deposit(&balance, 50);
	return NULL;
}

__attribute__((noinline)) static void *bob(void *arg)
{
	(void)arg;
#ifdef VB_NOBOB
	deposit(&savings, 25);
#else
	deposit(&balance, 25);
#endif
	return NULL;
}

__attribute__((noinline)) static void check_total(long expected)
{
	if (balance != expected) {
		fprintf(stderr, "verify_bank: balance %ld, expected %ld\n", balance, expected);
		abort(); /* VB FAIL */
	}
}

int main(void)
{
#ifdef VB_MOVED
	moved_helper();
#endif
	pthread_t a, b;
	if (pthread_create(&a, NULL, alice, NULL) != 0 || pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
#ifdef VB_NOBOB
	check_total(150);
#else
	check_total(175);
#endif
	printf("balance %ld\n", balance);
	return 0;
}
