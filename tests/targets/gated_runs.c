/*
 * gated_runs: invariant's bug (two critical sections that should be one,
 * a checker asserting between them), in a program whose every run first
 * takes one byte from GATE (a FIFO): a target that holds avtrace in its
 * replay phase until a test lets it go (or stops it).
 *
 * A test opens GATE itself (read-write, so that runs never wait for a
 * writer) and writes one byte per run it lets through: with two bytes,
 * `avtrace test -j 1` records (run 1), replays prediction 1 to the
 * failure (SIGABRT at CHECK LINE, run 2), and the replay of prediction 2
 * waits at the gate.  Every run does the same, so the replays follow the
 * recording.
 *
 * Usage: gated_runs GATE
 */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;
static long lo, hi = 10;

__attribute__((noinline)) static void shift(long by)
{
	pthread_mutex_lock(&range_lock);
	lo += by;
	pthread_mutex_unlock(&range_lock);
	pthread_mutex_lock(&range_lock);
	hi += by;
	pthread_mutex_unlock(&range_lock);
}

__attribute__((noinline)) static void check(void)
{
	pthread_mutex_lock(&range_lock);
	long width = hi - lo;
	assert(width == 10); /* CHECK LINE */
	pthread_mutex_unlock(&range_lock);
}

static void *updater(void *arg)
{
	(void)arg;
	shift(5);
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	check();
	return NULL;
}

/* One byte from the gate: until the test lets this run through. */
static void pass_gate(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY);
	if (fd >= 0 && read(fd, &c, 1) != 1)
		c = 0;
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc < 2)
		return 2;
	pass_gate(argv[1]);
	pthread_create(&a, NULL, updater, NULL);
	pthread_create(&b, NULL, checker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("range %ld..%ld\n", lo, hi);
	return 0;
}
