/*
 * checkthenact: a check-then-act atomicity violation across two critical
 * sections of the same lock.
 *
 *   checker (created first):   lock shared.m; present = shared.ptr != NULL;
 *                              unlock; short busy work (the window);
 *                              if (present) { lock; seen = *shared.ptr; unlock }
 *   clearer (created second):  long busy work; lock shared.m;
 *                              shared.ptr = NULL; unlock
 *
 * Nothing but timing orders the two threads: no join, no flag.  The long
 * busy work at the start of the clearer (DELAY, tens of milliseconds, far
 * longer than the checker's whole run) makes every natural run put the
 * clearer's critical section after both of the checker's, natively and
 * under a serializing recorder that runs a thread until it blocks or its
 * time slice ends.  The recorded run therefore exits 0.  The order
 *   checker's check, clearer's clear, checker's dereference
 * loads through NULL at the line marked BUG LINE: SIGSEGV in `checker`.  (clear before the check is benign: the checker
 * sees NULL and skips.)
 *
 * Usage: checkthenact [DELAY=150000000] [WINDOW=100000]   (loop iterations)
 * Prints "seen=42" (or "seen=0" if the clearer went first); exits 0 unless
 * it crashes.
 *
 * The recorded (natural) run contains:
 *   acquire obj_name shared.m (address of `shared`; a symbolizer may name it
 *           "shared")  3: checker at <CHECK LOCK LINE> and <USE LOCK LINE>,
 *           then clearer at <CLEAR LOCK LINE>;  release  3
 *   create 2, join 2 (by T0)
 * Variables for --watch: shared.ptr (offset 40 in `shared`).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int the_value = 42;
struct {
	pthread_mutex_t m;
	int *ptr;
} shared = { PTHREAD_MUTEX_INITIALIZER, &the_value };

static long delay, window;

__attribute__((noinline)) static void busy_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	int present, seen = 0;
	(void)arg;
	pthread_mutex_lock(&shared.m); /* CHECK LOCK LINE */
	present = shared.ptr != NULL; /* CHECK LINE */
	pthread_mutex_unlock(&shared.m);
	busy_work(window);
	if (present) {
		pthread_mutex_lock(&shared.m); /* USE LOCK LINE */
		seen = *shared.ptr; /* BUG LINE */
		pthread_mutex_unlock(&shared.m);
	}
	return (void *)(intptr_t)seen;
}

__attribute__((noinline)) static void *clearer(void *arg)
{
	(void)arg;
	busy_work(delay);
	pthread_mutex_lock(&shared.m); /* CLEAR LOCK LINE */
	shared.ptr = NULL; /* CLEAR LINE */
	pthread_mutex_unlock(&shared.m);
	return NULL;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;
	window = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;

	pthread_t a, b;
	void *seen;
	if (pthread_create(&a, NULL, checker, NULL) != 0 ||
	    pthread_create(&b, NULL, clearer, NULL) != 0)
		return 2;
	pthread_join(a, &seen);
	pthread_join(b, NULL);

	printf("seen=%d\n", (int)(intptr_t)seen);
	return 0;
}
