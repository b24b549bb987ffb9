/*
 * tree_forkrace: a process that works alone first, then forks once with
 * no exec, and the child races (issue 28, tests/e2e/test_tree28.sh).
 *
 * Before the fork the parent, single-threaded, sums a ledger into
 * `balance` under `balance_lock` (its lock and its writes are part of
 * what the child inherits: replaying the child means re-running this).
 * The child then deposits from two threads, reading `balance` in one
 * critical section and writing it in a second one.  Natively the first
 * thread is done before the second (which does other work first)
 * deposits; the order "read, read, write, write" loses a deposit and the
 * child aborts (SIGABRT).  The parent
 * waits and exits with the child's status (128 + the signal if it was
 * killed, as a shell does).
 *
 * The fix is tree_forkrace_ok.c.
 * Usage: tree_forkrace     (exit 0 iff the child exited 0)
 * Sites: FORKRACE READ, FORKRACE WRITE, FORKRACE ASSERT below.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
static long balance;
static const long ledger[] = {40, 25, 35, 10, -10};

/* The parent's work before the fork: balance = sum of the ledger (100). */
static void open_account(void)
{
	for (size_t i = 0; i < sizeof ledger / sizeof ledger[0]; i++) {
		pthread_mutex_lock(&balance_lock);
		balance += ledger[i];
		pthread_mutex_unlock(&balance_lock);
	}
}

/* Other work first (no shared memory, no lock): natively the first
 * deposit is long done when the second starts, even on a loaded machine
 * (without it, one run in a hundred of tree_forktwo lost a deposit). */
__attribute__((noinline)) static void other_work(void)
{
	for (volatile long i = 0; i < 20000; i++)
		;
}

/* The bug: the lock is dropped between the read and the write. */
static void *deposit(void *arg)
{
	if ((intptr_t)arg == 25)
		other_work();
	pthread_mutex_lock(&balance_lock);
	long b = balance; /* FORKRACE READ */
	pthread_mutex_unlock(&balance_lock);
	pthread_mutex_lock(&balance_lock);
	balance = b + (long)(intptr_t)arg; /* FORKRACE WRITE */
	pthread_mutex_unlock(&balance_lock);
	return NULL;
}

static void child(void)
{
	pthread_t a, b;
	if (pthread_create(&a, NULL, deposit, (void *)50) != 0 ||
	    pthread_create(&b, NULL, deposit, (void *)25) != 0)
		_exit(2);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(balance == 175); /* FORKRACE ASSERT */
	_exit(0);
}

int main(void)
{
	open_account();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		child();
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	if (WIFSIGNALED(st)) {
		printf("child killed by signal %d\n", WTERMSIG(st));
		return 128 + WTERMSIG(st);
	}
	printf("child exited %d\n", WEXITSTATUS(st));
	return WEXITSTATUS(st);
}
