/*
 * acc_stackpub (access breakpoints, shape 3 of issue 30): acc_stackobj's
 * struct on main's stack, published to the stopper through a global
 * pointer instead of the thread's start argument (as std::ref puts a stack
 * object's address into std::thread's heap state).  Unannotated.
 *
 *   main (T0):     e = { 0 }; published = &e;     (PUBLISH LINE: the store
 *                                                  lets main's stack escape)
 *                  create stopper(NULL);
 *                  if (!e.stoppingFlag) {            (CHECK LINE)
 *                          e.pendingIo++;
 *                          do_io(&e): e->stoppingFlag must still be 0
 *                                     (USE LINE; "I/O on a stopping
 *                                     device", exit 1)
 *                          e.pendingIo--; }
 *   stopper (T1):  published->stoppingFlag = 1 (STOP LINE)
 *
 * main's accesses to e are events only because it stored e's address
 * where another thread can read it: with no such store they would be
 * accesses to its own frames, none an event (docs/memory-access.md).
 * Natural run: main to its join first, exit 0.
 * Built -O0 -g (bin/acc_stackpub) and -O2 -g (bin/acc_stackpub_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct dev {
	int pendingIo;
	int stoppingFlag;
	int stopped;
};

static struct dev *volatile published;

/* noipa: at -O2 gcc would otherwise pass the flag main just tested as a
 * constant (a race is undefined behaviour to it): keep the real read */
__attribute__((noipa)) static void do_io(struct dev *e)
{
	if (e->stoppingFlag) { /* USE LINE */
		fprintf(stderr, "I/O on a stopping device (pendingIo=%d)\n", e->pendingIo);
		exit(1);
	}
}

__attribute__((noinline)) static void *stopper(void *arg)
{
	(void)arg;
	struct dev *e = published;
	e->stoppingFlag = 1; /* STOP LINE */
	if (e->pendingIo == 0)
		e->stopped = 1;
	return NULL;
}

int main(void)
{
	struct dev e = { 0, 0, 0 };
	pthread_t t;
	published = &e; /* PUBLISH LINE */
	pthread_create(&t, NULL, stopper, NULL);
	if (!e.stoppingFlag) { /* CHECK LINE */
		e.pendingIo++;
		do_io(&e);
		e.pendingIo--;
	}
	pthread_join(t, NULL);
	printf("stopped=%d\n", e.stopped);
	return 0;
}
