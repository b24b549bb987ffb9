/*
 * Threads created and joined one after another: glibc gives each new
 * thread the thread block (the pthread_t) of the one joined before it.
 * Every join must be recorded as the join of the thread just created (it
 * used to name the first thread that ever had that pthread_t: "join T1"
 * four times, committed before the new thread had exited).  Correct:
 * prints 4, exits 0.
 */
#include <pthread.h>
#include <stdio.h>

static int n;

static void *work(void *arg)
{
	n++; /* ordered by create and join */
	return NULL;
}

int main(void)
{
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		pthread_create(&t, NULL, work, NULL);
		pthread_join(t, NULL);
	}
	printf("%d\n", n);
	return n != 4;
}
