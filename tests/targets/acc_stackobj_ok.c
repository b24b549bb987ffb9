/*
 * acc_stackobj_ok (access breakpoints, correct counterpart of shape 3):
 * acc_stackobj with the check, the I/O and the stop each holding the
 * device's own mutex (a member of the struct on main's stack).  No
 * schedule raises the flag between the check and the I/O: `avtrace test`
 * must report nothing.
 * Built -O0 -g (bin/acc_stackobj_ok) and -O2 -g (bin/acc_stackobj_ok_O2).
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

__attribute__((noipa)) static void do_io(struct dev *e)
{
	if (e->stoppingFlag) {
		fprintf(stderr, "I/O on a stopping device (pendingIo=%d)\n", e->pendingIo);
		exit(1);
	}
}

__attribute__((noinline)) static void *stopper(void *arg)
{
	struct dev *e = arg;
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
	pthread_create(&t, NULL, stopper, &e);
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
