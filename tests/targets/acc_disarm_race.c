/*
 * acc_disarm_race (access breakpoints, explore's check replay): two
 * workers each first sweep a heap array of their own (ROUNDS x 16
 * private stores and loads: the access breakpoints of the sweep are
 * removed after their budget), then add their sum to a shared `total`
 * with no lock, in two steps.  A switch between one worker's load and its
 * store loses the other's update: main's assertion fails (SIGABRT).
 *
 * The failing runs of explore come after the removals: their check
 * replay must remove the same sites at the same hits, or it meets
 * accesses the run never made.
 *
 * Usage: acc_disarm_race [ROUNDS=40]
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static long rounds = 40;
long total;

__attribute__((noinline)) static void *worker(void *arg)
{
	long *a = calloc(16, sizeof *a), sum = 0;
	(void)arg;
	if (!a)
		abort();
	for (long k = 0; k < rounds; k++)
		for (int i = 0; i < 16; i++)
			a[i] = a[i] + k; /* SWEEP LINE */
	for (int i = 0; i < 16; i++)
		sum += a[i];
	free(a);
	long t = total; /* LOAD LINE */
	total = t + (sum ? 1 : 1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (rounds < 1)
		return 2;
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert(total == 2); /* CHECK LINE */
	return 0;
}
