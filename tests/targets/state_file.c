/*
 * state_file: a program that keeps state in its working directory, with a
 * lost update (issue 30, "a false report from the program's own files").
 *
 * Two clients deposit into a balance; deposit() reads and writes it in
 * two critical sections, so the order
 *   alice reads, bob reads, alice writes, bob writes
 * loses a deposit and the assert fails (SIGABRT).  Then main writes the
 * balance to a new file, state_file.out, made with O_CREAT|O_EXCL (it
 * never overwrites a result): when the file exists, exit 1.  A second run
 * in the same directory fails so whatever the interleaving, but only
 * after the threads: the lost update still shows as SIGABRT.  Natively
 * bob's preamble lets alice finish first: exit 0 on a clean directory.
 * state_file_ok.c is a program like it without the race.
 *
 * Usage: state_file [DELAY=50000]   (bob's preamble, microseconds)
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

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) static void deposit(long amount)
{
	long b = read_balance();
	write_balance(b + amount);
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
	assert(balance == 175); /* ASSERT LINE */
	/* the program's own state: made once, never overwritten */
	int fd = open("state_file.out", O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0) {
		fprintf(stderr, "state_file: state_file.out: %s\n", strerror(errno)); /* EXISTS LINE */
		return 1;
	}
	dprintf(fd, "%ld\n", balance);
	close(fd);
	return 0;
}
