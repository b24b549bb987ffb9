/*
 * fork_futex: a child the program forks uses futex: two threads hand a
 * turn back and forth under a condition variable (glibc sleeps in futex),
 * 2000 times.  The child is not traced, but it inherits avtrace's futex
 * filter (tracer/futex.c), whose calls fail with ENOSYS when nobody traces
 * it: glibc then aborts ("The futex facility returned an unexpected error
 * code").  avtrace keeps such a child attached (tracer/forked.c).
 *
 * Usage: fork_futex
 * Prints "child status N"; exits 0 iff the child exited 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int turn;

/* Waits for turn == me, then gives the turn to the other, n times. */
static void take_turns(int me, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		while (turn != me)
			pthread_cond_wait(&c, &m);
		turn = !me;
		pthread_cond_broadcast(&c);
		pthread_mutex_unlock(&m);
	}
}

static void *other(void *arg)
{
	take_turns(1, 2000);
	return arg;
}

int main(void)
{
	pid_t p = fork();
	if (p == 0) {
		pthread_t t;
		pthread_create(&t, NULL, other, NULL);
		take_turns(0, 2000);
		pthread_join(t, NULL);
		_exit(0);
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return 2;
	printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
