/*
 * acc_stackobj (access breakpoints, shape 3): a struct on main's stack
 * shared with a thread through a pointer (&e).  Unannotated.
 *
 *   main (T0):     e = { 0 }; create stopper(&e);
 *                  if (!e.stoppingFlag) {            (CHECK LINE)
 *                          e.pendingIo++;
 *                          do_io(&e): e->stoppingFlag must still be 0
 *                                     (USE LINE; "I/O on a stopping
 *                                     device", exit 1)
 *                          e.pendingIo--; }
 *   stopper (T1):  e->stoppingFlag = 1 (STOP LINE); reads e->pendingIo
 *
 * The check and the use are two reads of e.stoppingFlag: the stopper's
 * store between them is the bug.  Natural run: main to its join first,
 * exit 0.  main's accesses to e are frame-relative (rbp at -O0, rsp at
 * -O2): they are instrumented because main takes e's address.
 * Built -O0 -g (bin/acc_stackobj) and -O2 -g (bin/acc_stackobj_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct dev {
	int pendingIo;
	int stoppingFlag;
	int stopped;
};

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
	struct dev *e = arg;
	e->stoppingFlag = 1; /* STOP LINE */
	if (e->pendingIo == 0)
		e->stopped = 1;
	return NULL;
}

int main(void)
{
	struct dev e = { 0, 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, stopper, &e);
	if (!e.stoppingFlag) { /* CHECK LINE */
		e.pendingIo++;
		do_io(&e);
		e.pendingIo--;
	}
	pthread_join(t, NULL);
	printf("stopped=%d\n", e.stopped);
	return 0;
}
