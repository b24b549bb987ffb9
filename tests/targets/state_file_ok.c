/*
 * state_file_ok: a program like state_file.c, without its race (issue
 * 30, "a false report from the program's own files").
 *
 * Two clients deposit into a balance, each deposit one critical section:
 * every interleaving ends at 175.  Then main writes it to a new file,
 * state_file_ok.out, made with O_CREAT|O_EXCL, and fails (exit 1) when it
 * already exists, as a script that creates a table in db.sqlite fails
 * when run twice in the same directory.  A correct program on a clean
 * directory; only a run in the state an earlier run left fails.
 *
 * Usage: state_file_ok [DELAY=50000]   (bob's preamble, microseconds)
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pthread_mutex_t balance_lock = PTHREAD_MUTEX_INITIALIZER;
long balance = 100;

static long delay;

__attribute__((noinline)) static void deposit(long amount)
{
	pthread_mutex_lock(&balance_lock);
	long b = balance;
	balance = b + amount;
	pthread_mutex_unlock(&balance_lock);
}

__attribute__((noinline)) static void *alice(void *arg)
{
	deposit(50);
	return NULL;
}

__attribute__((noinline)) static void *bob(void *arg)
{
	usleep((useconds_t)delay); /* a system call: no events of its own */
	deposit(25);
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 50000;
	pthread_t a, b;
	if (pthread_create(&a, NULL, alice, NULL) != 0 || pthread_create(&b, NULL, bob, NULL) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(balance == 175);
	/* the program's own state: made once, never overwritten */
	int fd = open("state_file_ok.out", O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0) {
		fprintf(stderr, "state_file_ok: state_file_ok.out: %s\n", strerror(errno)); /* EXISTS LINE */
		return 1;
	}
	dprintf(fd, "%ld\n", balance);
	close(fd);
	return 0;
}
