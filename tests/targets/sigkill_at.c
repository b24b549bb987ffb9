/*
 * sigkill_at: lock traffic that ends in a SIGKILL at a chosen point, for
 * the "killed at any point" tests of the in-process agent (issue 16).
 *
 * Usage: sigkill_at WHO N [MARKER]
 *   WHO     self: the process SIGKILLs itself; parent: it SIGKILLs its
 *           parent (under avtrace record: avtrace), then goes on
 *   N       lock/unlock pairs (of both threads) before the kill
 *   MARKER  ignored (lets a test find its own processes with pgrep -f)
 *
 * Two threads each lock `kill_lock`, increment `kill_counter` and unlock,
 * for ever; the thread whose increment makes kill_counter N sends the
 * signal after its unlock.  A recording must contain at least N acquires
 * of kill_lock when WHO is self (each was committed before the kill).  With WHO parent the program
 * runs on until avtrace's death ends it (PR_SET_PDEATHSIG) or 60 s pass.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t kill_lock = PTHREAD_MUTEX_INITIALIZER;
long kill_counter;

static long kill_after;
static int kill_parent;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	time_t start = time(NULL);
	for (long i = 1;; i++) {
		pthread_mutex_lock(&kill_lock);
		long mine = ++kill_counter;
		pthread_mutex_unlock(&kill_lock);
		if (mine == kill_after)
			kill(kill_parent ? getppid() : getpid(), SIGKILL);
		if ((i & 0xffff) == 0 && time(NULL) - start > 60)
			exit(3); /* nobody killed us: never run for ever */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "self") && strcmp(argv[1], "parent"))) {
		fprintf(stderr, "usage: sigkill_at self|parent N [MARKER]\n");
		return 2;
	}
	kill_parent = !strcmp(argv[1], "parent");
	kill_after = strtol(argv[2], NULL, 10);
	if (kill_after < 1)
		return 2;
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
