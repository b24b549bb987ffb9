/*
 * acc_locked_hot (access breakpoints in a stripped program): two workers
 * update a shared tally ITERS times each under one mutex, through a
 * pointer.  -O0's loads and stores through it are 2-4 bytes, too short
 * for the jmp: each is displaced with the instructions after it (a
 * cover), which needs its function known; stripped
 * (bin/acc_locked_hot_stripped), the functions come from the .eh_frame
 * FDEs.  Correct: prints the tally, exit 0.
 *
 * Built -O0 -g (bin/acc_locked_hot), stripped of that, and -O2 -g
 * (bin/acc_locked_hot_O2).
 */
#include <pthread.h>
#include <stdio.h>

#define ITERS 2000

struct tally {
	long hits, sum;
	int last;
	short who;
};

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
struct tally tally;

__attribute__((noinline)) static void *worker(void *arg)
{
	struct tally *t = &tally;
	short id = (short)(long)arg;
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&m);
		t->hits++; /* HOT LINE */
		t->sum += i;
		t->last = i;
		t->who = id;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, worker, (void *)1L) || pthread_create(&t2, NULL, worker, (void *)2L))
		return 2;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("hits=%ld sum=%ld\n", tally.hits, tally.sum);
	return tally.hits == 2 * ITERS ? 0 : 1;
}
