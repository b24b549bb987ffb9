/*
 * tree_forktwo_ok: tree_forktwo.c fixed: the second child deposits into
 * `balance` in one critical section, so both children are correct in
 * every order and avtrace test must exit 0 with no report (issue 28,
 * tests/e2e/test_tree28.sh).
 *
 * Usage: tree_forktwo_ok     (exit 0 iff both children exited 0)
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static long tally;
static pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
static long balance = 100;

static void *add_tally(void *arg)
{
	pthread_mutex_lock(&tally_lock);
	tally += (long)(intptr_t)arg;
	pthread_mutex_unlock(&tally_lock);
	return NULL;
}

/* Other work first (no shared memory, no lock): natively the first
 * deposit is long done when the second starts, even on a loaded machine
 * (without it, one run in a hundred of tree_forktwo lost a deposit). */
__attribute__((noinline)) static void other_work(void)
{
	for (volatile long i = 0; i < 20000; i++)
		;
}

static void *deposit(void *arg)
{
	if ((intptr_t)arg == 2)
		other_work();
	pthread_mutex_lock(&balance_lock);
	long b = balance;
	balance = b + (long)(intptr_t)arg;
	pthread_mutex_unlock(&balance_lock);
	return NULL;
}

/* Runs fn(1) and fn(2) in two threads; 0 iff both were created. */
static int two_threads(void *(*fn)(void *))
{
	pthread_t a, b;
	if (pthread_create(&a, NULL, fn, (void *)1) != 0 ||
	    pthread_create(&b, NULL, fn, (void *)2) != 0)
		return -1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}

static void tally_worker(void)
{
	_exit(two_threads(add_tally) == 0 && tally == 3 ? 0 : 1);
}

static void balance_worker(void)
{
	if (two_threads(deposit) != 0)
		_exit(1);
	assert(balance == 103);
	_exit(0);
}

/* Forks a child that runs worker(); its pid, or -1. */
static pid_t start(void (*worker)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		worker();
	return pid;
}

/* 1 iff the child pid exited 0. */
static int passed(pid_t pid)
{
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
	pid_t first = start(tally_worker);
	pid_t second = start(balance_worker);
	int ok1 = passed(first), ok2 = passed(second);
	printf("first %s, second %s\n", ok1 ? "ok" : "FAILED", ok2 ? "ok" : "FAILED");
	return ok1 && ok2 ? 0 : 1;
}
