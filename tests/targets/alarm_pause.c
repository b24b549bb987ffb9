/*
 * alarm_pause: a single-threaded timer loop (a daemon's tick: a periodic
 * SIGALRM whose handler does the work, the main loop sleeps in pause()
 * between ticks).
 *
 * The handler takes `tick_lock` and counts the tick; main sleeps in
 * pause() until TICKS ticks were counted, then stops the timer.  The lock
 * makes each tick's work events of the recording, so a replay must put
 * each handler where the recording had it.  The only thread sleeps in
 * pause() between them: nothing but the signal can wake it.
 *
 * Usage: alarm_pause [TICKS=20] [TICK_US=500]
 * Prints "N ticks"; exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

static pthread_mutex_t tick_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	pthread_mutex_lock(&tick_lock);
	ticks = ticks + 1;
	pthread_mutex_unlock(&tick_lock);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20;
	long tick_us = argc > 2 ? atol(argv[2]) : 500;
	if (n < 1 || tick_us < 1 || tick_us >= 1000000)
		return 2;
	struct sigaction sa = { .sa_handler = on_alarm };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, tick_us }, { 0, tick_us } };
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < n)
		pause();
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%ld ticks\n", (long)ticks);
	return 0;
}
