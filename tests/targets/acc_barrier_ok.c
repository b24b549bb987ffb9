/*
 * acc_barrier_ok: a correct counting barrier (the shape of GLib's own
 * `cond` test): N workers each count themselves in an atomic `running`,
 * then pass ROUNDS barriers.  A barrier is a critical section of
 * barrier_lock that decrements `count`; the last to arrive starts the
 * next round (age + 1, count back to N) and broadcasts, the others wait
 * until the age changes.  After each barrier a worker checks that it is
 * still counted in `running` (always true); main checks the rounds after
 * the joins.  Exits 0 under every schedule: no report.
 *
 * What it is for (issue 29, "every schedule run to its end"; issue 30,
 * shape 7): its accesses are events (access breakpoints, no
 * annotations), and the races on `running` can only be ordered the other
 * way by moving a worker's barrier before another's, where the moved
 * worker's read of `count` would load another value and take the other
 * branch.  Such predictions were made and replayed INFEASIBLE; predict
 * now knows the values reads loaded (AVT_F_VALUE) and does not make them
 * (docs/predict.md, "Reads before the violation").
 *
 * Usage: acc_barrier_ok [N=4 [ROUNDS=2]]   (1 <= N <= 16)
 * Built -O0 -g (bin/acc_barrier_ok) and -O2 -g (bin/acc_barrier_ok_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t barrier_cond = PTHREAD_COND_INITIALIZER;
static int nworkers = 4, rounds = 2;
int count; /* workers still to arrive at the barrier of this round */
int age;   /* rounds completed */
int running; /* workers started and not yet done (atomic) */

__attribute__((noinline)) static void barrier_wait(void)
{
	pthread_mutex_lock(&barrier_lock);
	count--;
	int id = age;
	if (count == 0) {
		age++;
		count = nworkers;
		pthread_cond_broadcast(&barrier_cond);
	} else {
		while (id == age)
			pthread_cond_wait(&barrier_cond, &barrier_lock);
	}
	pthread_mutex_unlock(&barrier_lock);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&running, 1, __ATOMIC_SEQ_CST);
	for (int r = 0; r < rounds; r++) {
		barrier_wait();
		if (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < 1)
			abort(); /* never: this worker is counted */
	}
	__atomic_fetch_sub(&running, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[16];
	if (argc > 1)
		nworkers = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (nworkers < 1 || nworkers > 16 || rounds < 0) {
		fprintf(stderr, "usage: acc_barrier_ok [N=4 [ROUNDS=2]]   (1 <= N <= 16)\n");
		return 2;
	}
	count = nworkers;
	for (int i = 0; i < nworkers; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < nworkers; i++)
		pthread_join(t[i], NULL);
	if (age != rounds || running != 0) {
		fprintf(stderr, "acc_barrier_ok: age %d running %d\n", age, running);
		return 1;
	}
	printf("age=%d\n", age);
	return 0;
}
