/*
 * lockorder: a potential deadlock from inconsistent lock order.
 *
 *   thread 1 (created first):   lock lock_a; lock lock_b; unlock b; unlock a
 *   thread 2 (created second):  long busy work; lock lock_b; lock lock_a;
 *                               unlock a; unlock b
 *
 * Nothing but timing orders them (no join, no flag, no common lock around
 * the nested sections): thread 2's busy work (DELAY iterations, tens of
 * milliseconds) lets thread 1 finish first in every natural run, natively
 * and under a serializing recorder that runs a thread until it blocks or its
 * time slice ends, so the recorded run exits 0.  The order
 *   T1 locks lock_a, T2 locks lock_b, then each asks for the other's lock
 * deadlocks at the lines marked T1 LOCKS B and T2 LOCKS A.
 *
 * Usage: lockorder [DELAY=150000000]
 * Prints "done=2"; exits 0 (or hangs forever in the bad order).
 *
 * The recorded (natural) run contains:
 *   acquire obj_name lock_a 2, release obj_name lock_a 2
 *   acquire obj_name lock_b 2, release obj_name lock_b 2
 *   in the order: T1 a, T1 b, (T1 releases), T2 b, T2 a
 *   create 2, join 2 (by T0)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
long done;

static long delay;

__attribute__((noinline)) static void busy_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void *a_then_b(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock_a); /* T1 LOCKS A */
	pthread_mutex_lock(&lock_b); /* T1 LOCKS B */
	done++;
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return NULL;
}

__attribute__((noinline)) static void *b_then_a(void *arg)
{
	(void)arg;
	busy_work(delay);
	pthread_mutex_lock(&lock_b); /* T2 LOCKS B */
	pthread_mutex_lock(&lock_a); /* T2 LOCKS A */
	done++;
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;

	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, a_then_b, NULL) != 0 ||
	    pthread_create(&t2, NULL, b_then_a, NULL) != 0)
		return 2;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);

	printf("done=%ld\n", done);
	return done == 2 ? 0 : 1;
}
