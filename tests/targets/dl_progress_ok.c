/*
 * dl_progress_ok: dl_progress.c (a download accelerator with a
 * signal-driven progress thread) with its bug fixed: a worker updates its
 * offset and `written` in one critical section of progress_lock, so the
 * progress thread's check under that lock always holds.
 *
 * Usage: dl_progress_ok [WORKERS=3] [CHUNKS=6] [TICK_US=2000]
 * Prints "downloaded N bytes in C chunks"; exits 0.
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
		pthread_mutex_lock(&progress_lock);
		offset[w] += CHUNK; /* OFFSET LINE */
		written += CHUNK; /* WRITTEN LINE */
		pthread_mutex_unlock(&progress_lock);
	}
	return NULL;
}

/* The progress thread: one check per SIGALRM. */
__attribute__((noinline)) static void *progress(void *arg)
{
	sigset_t *alrm = arg;
	int sig;
	while (!finished) {
		if (sigwait(alrm, &sig) != 0)
			abort();
		long sum = 0;
		pthread_mutex_lock(&progress_lock);
		for (int w = 0; w < nworkers; w++)
			sum += offset[w];
		assert(sum == written); /* CHECK LINE */
		ticks++;
		pthread_mutex_unlock(&progress_lock);
	}
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
