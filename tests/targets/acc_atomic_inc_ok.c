/*
 * acc_atomic_inc_ok: correct counting with locked updates whose results
 * nothing reads, the shape of GLib's g_atomic_int_inc in its thread-pool
 * test.  N workers each add 1 to `hits` ROUNDS times (`lock addl $1`,
 * the flags dead: __atomic_fetch_add with its result dropped) and set
 * their bit in `seen` (`lock orl`); the last to leave, found by the
 * flags of its decrement of `refs` (`lock subl; je`: who saw zero),
 * records itself in `last`.  main checks all three after the joins.
 * Exits 0 under every schedule.
 *
 * What it is for (issue 29, GLib's thread-pool test): two adds of `hits`
 * (or two ors of `seen`) in either order leave the same value and show
 * none, so predict makes no race of them (predict.c, commuting_updates);
 * before, each pair was a race-WW whose replay could only confirm it or,
 * around a lock avtrace cannot order, fail as INFEASIBLE.  The
 * decrements of `refs` still race: their flags decide who is last.
 *
 * Usage: acc_atomic_inc_ok [N=2 [ROUNDS=3]]   (1 <= N <= 16)
 * Built -O0 -g (bin/acc_atomic_inc_ok) and -O2 -g (bin/acc_atomic_inc_ok_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int nworkers = 2, rounds = 3;
int hits;          /* adds made (atomic, results unread) */
unsigned seen;     /* a bit per worker (atomic or) */
int refs;          /* workers still running (atomic; its decrement's flags are read) */
int last = -1;     /* the worker that left last */

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int r = 0; r < rounds; r++)
		__atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED);
	__atomic_fetch_or(&seen, 1u << id, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&refs, 1, __ATOMIC_ACQ_REL) == 0)
		last = id;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		nworkers = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (nworkers < 1 || nworkers > 16 || rounds < 0) {
		fprintf(stderr, "usage: acc_atomic_inc_ok [N=2 [ROUNDS=3]]   (1 <= N <= 16)\n");
		return 2;
	}
	pthread_t t[16];
	refs = nworkers;
	for (long i = 0; i < nworkers; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < nworkers; i++)
		pthread_join(t[i], NULL);
	if (hits != nworkers * rounds || seen != (1u << nworkers) - 1 || refs != 0 || last < 0) {
		fprintf(stderr, "acc_atomic_inc_ok: hits %d seen %#x refs %d last %d\n", hits, seen,
			refs, last);
		return 1;
	}
	printf("hits=%d\n", hits);
	return 0;
}
