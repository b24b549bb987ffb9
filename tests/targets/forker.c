/*
 * forker: a threaded program that forks.  Threads T-a and T-b each do 5
 * locked increments of `parent_counter` under `parent_lock`.  After its
 * increments, one of them fork()s a child; the child locks `child_lock` 3
 * times and _exit(0)s; the forking thread waitpid()s it.  After joining both
 * threads, main calls system("true") once.  The child processes are not
 * traced: they must run normally (a breakpoint left in the child's copy of
 * libc would kill it with SIGTRAP).
 *
 * Usage: forker
 * Exits 0 iff the child exited 0, system("true") returned 0 and
 * parent_counter == 10; 1 otherwise.
 *
 * A recording must contain:
 *   acquire  obj_name parent_lock   10,  release obj_name parent_lock  10
 *   create 2, join 2 (by T0)
 *   nothing on child_lock (the child is another process, not traced)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

pthread_mutex_t parent_lock = PTHREAD_MUTEX_INITIALIZER;
long parent_counter;
pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
long child_counter;

__attribute__((noinline)) static void parent_increment(void)
{
	pthread_mutex_lock(&parent_lock);
	parent_counter++;
	pthread_mutex_unlock(&parent_lock);
}

__attribute__((noinline)) static void child_increment(void)
{
	pthread_mutex_lock(&child_lock); /* CHILD LOCK LINE */
	child_counter++;
	pthread_mutex_unlock(&child_lock);
}

/* Returns 0 iff the child exited with status 0. */
__attribute__((noinline)) static int fork_child(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			child_increment();
		_exit(child_counter == 3 ? 0 : 1);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	for (int i = 0; i < 5; i++)
		parent_increment();
	if (arg)
		return (void *)(intptr_t)fork_child();
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	void *forked;
	if (pthread_create(&a, NULL, worker, (void *)1) != 0 ||
	    pthread_create(&b, NULL, worker, NULL) != 0)
		return 2;
	pthread_join(a, &forked);
	pthread_join(b, NULL);

	int sys = system("true");
	printf("child=%s system=%d counter=%ld\n", forked ? "bad" : "ok", sys,
	       parent_counter);
	return !forked && sys == 0 && parent_counter == 10 ? 0 : 1;
}
