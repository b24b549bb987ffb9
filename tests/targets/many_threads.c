/*
 * many_threads: starts N short threads (default 5,000), BATCH (default
 * 100) at a time; each increments `counter` under `counter_lock` once and
 * reads `total` without the lock, then main joins the batch and updates
 * `total` under the lock.  A program in the shape of GLib's threadtests
 * (thousands of threads, a few events each): what scales with threads in
 * record, trace size and prediction (issue 30, shape 6).
 *
 * Usage: many_threads [N=5000] [BATCH=100]
 * Prints "counter=N"; exits 0 iff counter == N.  Correct under every
 * schedule: no bug to find.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
long counter, total, seen;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&counter_lock);
	counter++;
	pthread_mutex_unlock(&counter_lock);
	seen += total >= 0; /* a racy read of total, a racy write of seen */
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
	long batch = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
	if (n < 1 || batch < 1 || batch > 1000) {
		fprintf(stderr, "usage: many_threads [N>=1] [1<=BATCH<=1000]\n");
		return 2;
	}
	pthread_t *t = malloc((size_t)batch * sizeof *t);
	if (!t)
		return 2;
	for (long done = 0; done < n;) {
		long k = n - done < batch ? n - done : batch;
		for (long i = 0; i < k; i++)
			if (pthread_create(&t[i], NULL, worker, NULL)) {
				perror("pthread_create");
				return 2;
			}
		for (long i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		done += k;
		pthread_mutex_lock(&counter_lock);
		total = done;
		pthread_mutex_unlock(&counter_lock);
	}
	free(t);
	printf("counter=%ld\n", counter);
	return counter == n ? 0 : 1;
}
