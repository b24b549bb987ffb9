/*
 * dl_progress: a download accelerator with a signal-driven progress
 * thread (the shape of aget's: workers fetch the chunks of a file, a
 * thread waits for SIGALRM with sigwait and shows how far they are).
 *
 * WORKERS threads each fetch CHUNKS chunks of CHUNK bytes.  Fetching is
 * simulated: a pipe of its own is written and read back (the bytes pass
 * through the kernel as they would from a socket), then the chunk is
 * copied to its place in `file`.  After each chunk a worker updates the
 * progress: its own `offset[w]`, then `written` under `progress_lock`.
 * The bug: the two updates are not one critical section.
 *
 * The progress thread (T1, created first) blocks nothing: every other
 * thread has SIGALRM blocked (main blocks it before creating any), and a
 * periodic timer (setitimer, TICK_US) raises it for the process; the
 * progress thread takes each one with sigwait and checks, under
 * progress_lock, that `written` is the sum of the offsets.  A tick that
 * lands between a worker's offset update and its `written` update sees
 * more in the offsets than in `written`: the assertion at CHECK LINE
 * fails (SIGABRT in the progress thread).  The window is a few
 * instructions in a run of milliseconds: native runs pass almost always.
 *
 * main joins the workers, stops the timer's work by setting `finished`
 * and joins the progress thread, which leaves at its next tick.
 *
 * Usage: dl_progress [WORKERS=3] [CHUNKS=6] [TICK_US=2000]
 * Prints "downloaded N bytes in C chunks"; exits 0, or SIGABRT.
 * dl_progress_ok.c is the same program with the two updates in one
 * critical section.
 */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define MAXW 8
#define CHUNK 512

static int nworkers = 3, nchunks = 6;
static char file[MAXW * 16 * CHUNK];
long offset[MAXW];   /* bytes each worker has fetched */
long written;        /* bytes fetched in all, under progress_lock */
long ticks;          /* progress checks made */
volatile int finished;
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

/* One chunk through a pipe and into its place in the file. */
__attribute__((noinline)) static void fetch(int w, int c)
{
	char in[CHUNK], out[CHUNK];
	int fd[2];
	memset(out, 'a' + w, sizeof out);
	if (pipe(fd) != 0)
		abort();
	if (write(fd[1], out, sizeof out) != (ssize_t)sizeof out ||
	    read(fd[0], in, sizeof in) != (ssize_t)sizeof in)
		abort();
	close(fd[0]);
	close(fd[1]);
	memcpy(file + ((size_t)w * (size_t)nchunks + (size_t)c) * CHUNK, in, CHUNK);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	int w = (int)(long)arg;
	for (int c = 0; c < nchunks; c++) {
		fetch(w, c);
		offset[w] += CHUNK; /* OFFSET LINE */
		pthread_mutex_lock(&progress_lock);
		written += CHUNK; /* WRITTEN LINE */
		pthread_mutex_unlock(&progress_lock);
	}
	return NULL;
}

/* The progress check, run by SIGALRM's handler on the progress thread
 * (no other thread takes SIGALRM; the progress thread holds no lock when
 * it comes, so taking one here cannot deadlock). */
static void on_alarm(int sig)
{
	(void)sig;
	long sum = 0;
	pthread_mutex_lock(&progress_lock);
	for (int w = 0; w < nworkers; w++)
		sum += offset[w];
	assert(sum == written); /* CHECK LINE */
	ticks++;
	pthread_mutex_unlock(&progress_lock);
}

/* The progress thread: the only one with SIGALRM unblocked; it sleeps
 * until a signal comes, then looks whether the workers are done. */
__attribute__((noinline)) static void *progress(void *arg)
{
	pthread_sigmask(SIG_UNBLOCK, arg, NULL);
	while (!finished)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long tick_us = 2000;
	if (argc > 1)
		nworkers = atoi(argv[1]);
	if (argc > 2)
		nchunks = atoi(argv[2]);
	if (argc > 3)
		tick_us = atol(argv[3]);
	if (nworkers < 1 || nworkers > MAXW || nchunks < 1 || nchunks > 16 || tick_us < 1)
		return 2;
	static sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* inherited by every thread */
	struct itimerval it = { { 0, tick_us }, { 0, tick_us } };
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_t p, t[MAXW];
	pthread_create(&p, NULL, progress, &alrm);
	for (int w = 0; w < nworkers; w++)
		pthread_create(&t[w], NULL, worker, (void *)(long)w);
	for (int w = 0; w < nworkers; w++)
		pthread_join(t[w], NULL);
	finished = 1;
	pthread_join(p, NULL);
	printf("downloaded %ld bytes in %d chunks\n", written, nworkers * nchunks);
	return written == (long)nworkers * nchunks * CHUNK ? 0 : 1;
}
