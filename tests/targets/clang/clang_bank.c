/*
 * clang_bank: examples/bank.c's lost update, built by clang -g -O0
 * (tests/targets/targets.mk), which emits no .debug_aranges: its reports
 * must still show clang_bank.c:LINE everywhere (issue 31).
 *
 * deposit() reads the balance in one critical section and writes it in
 * another; alice deposits 50 while bob first does other work, then 25.
 * Reading both balances before either write loses a deposit and the
 * assert in main fails (SIGABRT).
 *
 * alice's amount is a local of main whose address main hands to her
 * thread: her read of it is an event on main's stack (a local named
 * through clang's frame base, DW_OP_reg6).
 *
 * Usage: clang_bank [DELAY]   (bob's preamble, loop iterations)
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance = 100;

static long delay = 1000;

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
	deposit(*(const long *)arg); /* AMOUNT LINE */
	return NULL;
}

__attribute__((noinline)) static void *bob(void *arg)
{
	other_work(delay);
	deposit(25);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		delay = strtol(argv[1], NULL, 10);
	pthread_t a, b;
	long alice_amount = 50;
	if (pthread_create(&a, NULL, alice, &alice_amount) != 0)
		return 2;
	if (pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance=%ld\n", balance);
	assert(balance == 175); /* ASSERT LINE */
	return 0;
}
