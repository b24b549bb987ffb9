/*
 * signal_join: a signal handler that takes a lock runs while its thread
 * is in pthread_join.  main installs a SIGUSR1 handler that locks
 * `sj_lock`, counts in `sj_handled` and unlocks; it starts a worker that
 * sends pthread_kill(main, SIGUSR1) and exits, and joins it.
 *
 * Usage: signal_join
 * Prints "handled 1"; exit 0.  A correct program: no report (the handler
 * can always take sj_lock, nobody else holds it).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

pthread_mutex_t sj_lock = PTHREAD_MUTEX_INITIALIZER;
int sj_handled;
pthread_t sj_main;

static void on_usr1(int sig)
{
	(void)sig;
	pthread_mutex_lock(&sj_lock);
	sj_handled++;
	pthread_mutex_unlock(&sj_lock);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	pthread_kill(sj_main, SIGUSR1);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sj_main = pthread_self();
	pthread_t w;
	pthread_create(&w, NULL, worker, NULL);
	pthread_join(w, NULL);
	pthread_mutex_lock(&sj_lock);
	printf("handled %d\n", sj_handled);
	pthread_mutex_unlock(&sj_lock);
	return 0;
}
