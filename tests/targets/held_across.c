/*
 * held_across: each lock kind held across a scheduling point, so that
 * another thread asks for it while it is held (a correct program).
 *
 * For a mutex, a spinlock and an rwlock (as writer, then a reader against
 * a writer): thread A takes the lock and sleeps 1 ms (a scheduling point:
 * the others run), thread B asks for the same lock meanwhile and must wait
 * for A.  Under avtrace's in-process agent B's fast path finds the lock
 * taken and goes down the slow path (the ptrace hook).
 *
 * Usage: held_across [ROUNDS=3]
 * Prints "held_count=ROUNDS*7" and exits 0 iff every increment counted.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

pthread_mutex_t held_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_spinlock_t held_spin;
pthread_rwlock_t held_rw = PTHREAD_RWLOCK_INITIALIZER;
long held_count;
static long rounds;
static pthread_barrier_t step;

static void nap(void)
{
	struct timespec ts = { 0, 1000000 };
	nanosleep(&ts, NULL);
}

/* A holds each lock across a nap; B (after the barrier) asks for it. */
__attribute__((noinline)) static void *holder(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&held_mutex);
		pthread_barrier_wait(&step);
		nap();
		held_count++;
		pthread_mutex_unlock(&held_mutex);

		pthread_spin_lock(&held_spin);
		pthread_barrier_wait(&step);
		nap();
		held_count++;
		pthread_spin_unlock(&held_spin);

		pthread_rwlock_wrlock(&held_rw);
		pthread_barrier_wait(&step);
		nap();
		held_count++;
		pthread_rwlock_unlock(&held_rw);

		pthread_rwlock_rdlock(&held_rw);
		pthread_barrier_wait(&step);
		nap();
		pthread_rwlock_unlock(&held_rw);
		pthread_barrier_wait(&step);
	}
	return NULL;
}

__attribute__((noinline)) static void *asker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_barrier_wait(&step);
		pthread_mutex_lock(&held_mutex);
		held_count++;
		pthread_mutex_unlock(&held_mutex);

		pthread_barrier_wait(&step);
		pthread_spin_lock(&held_spin);
		held_count++;
		pthread_spin_unlock(&held_spin);

		pthread_barrier_wait(&step);
		pthread_rwlock_rdlock(&held_rw);
		long seen = held_count;
		pthread_rwlock_unlock(&held_rw);
		(void)seen;

		pthread_barrier_wait(&step);
		pthread_rwlock_wrlock(&held_rw);
		held_count += 2;
		pthread_rwlock_unlock(&held_rw);
		pthread_barrier_wait(&step);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 3;
	if (rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: held_across [ROUNDS=3]\n");
		return 2;
	}
	pthread_spin_init(&held_spin, PTHREAD_PROCESS_PRIVATE);
	pthread_barrier_init(&step, NULL, 2);
	pthread_t a, b;
	if (pthread_create(&a, NULL, holder, NULL) || pthread_create(&b, NULL, asker, NULL))
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("held_count=%ld\n", held_count);
	return held_count == rounds * 7 ? 0 : 1;
}
