/*
 * acc_stackpub_ok (access breakpoints, correct counterpart of
 * acc_stackpub): the struct on main's stack published through a global
 * pointer, with the check, the I/O and the stop each holding the device's
 * own mutex (a member of the struct).  main's accesses are events (its
 * stack escaped by the store), all under the lock: `avtrace test` must
 * report nothing.
 * Built -O0 -g (bin/acc_stackpub_ok) and -O2 -g (bin/acc_stackpub_ok_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct dev {
	pthread_mutex_t m;
	int pendingIo;
	int stoppingFlag;
	int stopped;
};

static struct dev *volatile published;

__attribute__((noipa)) static void do_io(struct dev *e)
{
	if (e->stoppingFlag) {
		fprintf(stderr, "I/O on a stopping device (pendingIo=%d)\n", e->pendingIo);
		exit(1);
	}
}

__attribute__((noinline)) static void *stopper(void *arg)
{
	(void)arg;
	struct dev *e = published;
	pthread_mutex_lock(&e->m);
	e->stoppingFlag = 1;
	if (e->pendingIo == 0)
		e->stopped = 1;
	pthread_mutex_unlock(&e->m);
	return NULL;
}

int main(void)
{
	struct dev e = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 };
	pthread_t t;
	published = &e;
	pthread_create(&t, NULL, stopper, NULL);
	pthread_mutex_lock(&e.m);
	if (!e.stoppingFlag) {
		e.pendingIo++;
		do_io(&e);
		e.pendingIo--;
	}
	pthread_mutex_unlock(&e.m);
	pthread_join(t, NULL);
	printf("stopped=%d\n", e.stopped);
	return 0;
}
