/*
 * invariant: a two-field invariant (lo <= hi, hi - lo == width) kept by an
 * updater that writes the fields in two separate critical sections, read
 * together by a checker that asserts it.
 *
 *   updater (created first):  lock range.m; range.lo += 5; unlock;
 *                             lock range.m; range.hi += 5; unlock
 *   checker (created second, after long busy work):
 *                             lock range.m; assert(hi - lo == 10); unlock
 *
 * The natural run checks after the update (exits 0).  A check between the
 * updater's two critical sections fails the assert at CHECK LINE: SIGABRT.
 *
 * Usage: invariant [DELAY=150000000]
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct range {
	pthread_mutex_t m;
	long lo, hi;
};

struct range range = { PTHREAD_MUTEX_INITIALIZER, 0, 10 };
static long delay = 150000000;

__attribute__((noinline)) static void shift(struct range *r, long by)
{
	pthread_mutex_lock(&r->m); /* LO LOCK LINE */
	r->lo += by;
	pthread_mutex_unlock(&r->m);
	pthread_mutex_lock(&r->m); /* HI LOCK LINE */
	r->hi += by;
	pthread_mutex_unlock(&r->m);
}

__attribute__((noinline)) static void check(struct range *r)
{
	pthread_mutex_lock(&r->m); /* CHECK LOCK LINE */
	long width = r->hi - r->lo;
	assert(width == 10); /* CHECK LINE */
	pthread_mutex_unlock(&r->m);
}

static void *updater(void *arg)
{
	(void)arg;
	shift(&range, 5);
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	for (volatile long i = 0; i < delay; i++)
		;
	check(&range);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1)
		delay = atol(argv[1]);
	pthread_create(&a, NULL, updater, NULL);
	pthread_create(&b, NULL, checker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("range %ld..%ld\n", range.lo, range.hi);
	return 0;
}
