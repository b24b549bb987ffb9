/*
 * acc_signals: signals delivered to a thread while it runs through access
 * breakpoints taken in-process (the agent's stubs, decode/stub.h).  T1
 * adds to a global ROUNDS times, with floating point around it; T2 sends
 * it SIGUSR1 SIGNALS times.  The handler touches globals and the vector
 * registers itself.  Wherever a signal lands (inside a stub too: the stub
 * works below the red zone, and a handler runs below that), T1's sums and
 * the handler's count must come out exact.
 *
 * Usage: acc_signals [ROUNDS=100000] [SIGNALS=200]
 * Prints "ok N" (N handled) and exits 0; "bad ..." and exits 1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static long rounds = 100000, nsig = 200;
volatile long counter;         /* T1's, in-process accesses */
volatile double dsum;
volatile long handled;         /* the handler's */
static long handled_atomic;    /* the same, counted with a locked add */
static volatile int worker_done;
static pthread_t worker_thread;

static void on_usr1(int sig)
{
	(void)sig;
	double x = (double)handled * 0.5 + 1.25; /* the handler's own xmm use */
	handled = handled + 1;
	__atomic_fetch_add(&handled_atomic, 1, __ATOMIC_RELAXED);
	dsum = dsum + x - x;
}

static void *worker(void *arg)
{
	(void)arg;
	double f = 0.0;
	for (long i = 0; i < rounds; i++) {
		f += 0.5;             /* live in a vector register across the access */
		counter = counter + 1;
		f += 0.25;
	}
	dsum = f;
	worker_done = 1;
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	for (long i = 0; i < nsig && !worker_done; i++) {
		pthread_kill(worker_thread, SIGUSR1);
		sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		nsig = atol(argv[2]);
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t s;
	pthread_create(&worker_thread, NULL, worker, NULL);
	pthread_create(&s, NULL, sender, NULL);
	pthread_join(s, NULL);
	pthread_join(worker_thread, NULL);
	double want = 0.75 * (double)rounds;
	if (counter != rounds || dsum != want || handled != handled_atomic) {
		printf("bad counter %ld/%ld dsum %f/%f handled %ld/%ld\n", counter, rounds, dsum, want,
		       handled, handled_atomic);
		return 1;
	}
	printf("ok %ld\n", handled);
	return 0;
}
