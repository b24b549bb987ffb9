/*
 * Workers that register at start-up while main sleeps in the kernel on
 * something avtrace does not model (a raw futex, like a library's own
 * lock or start-up handshake): main creates WORKERS threads, then waits
 * on a futex word until every worker has incremented it.  Each worker
 * then polls with a timeout (poll(NULL, 0, 5 ms)) until main sets `quit`.
 * Correct: exits 0.  Under a serializing scheduler, threads stopped right
 * after their creation must run while main sleeps in the futex.
 */
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORKERS 4

static atomic_int registered;
static volatile int quit;

static void *worker(void *arg)
{
	(void)arg;
	atomic_fetch_add(&registered, 1);
	syscall(SYS_futex, &registered, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	while (!quit)
		poll(NULL, 0, 5);
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	int seen;
	while ((seen = atomic_load(&registered)) < WORKERS)
		syscall(SYS_futex, &registered, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
	quit = 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("registered %d\n", WORKERS);
	return 0;
}
