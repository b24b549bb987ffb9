/*
 * mem_atomicset: an atomic-set serializability violation.  A record's two
 * fields `lo` and `hi` are meant to be equal (one atomic set), but each
 * is protected by its own lock, and set_pair() updates them in two
 * critical sections; get_pair() reads them, also in two.
 *
 *   writers T1 (value 1), T2 (value 2): set_pair(v)
 *       lock(lo_lock); rec.lo = v; unlock; lock(hi_lock); rec.hi = v; unlock
 *   checker T3: get_pair(): lock(lo_lock); a = rec.lo; unlock;
 *                           lock(hi_lock); b = rec.hi; unlock
 *               assert(a == b)                       (CHECK LINE)
 *
 * T2 and T3 first do long busy work (DELAY and 2 * DELAY), so every
 * natural run, native or serialized by the recorder, runs T1's update,
 * T2's, then T3's check: (2, 2), exit 0.  The order
 *   W_T1(lo) R_T3(lo) R_T3(hi) W_T1(hi)   (atomic-set pattern 8)
 * with T2's update done before makes T3 read lo == 1 and hi == 2: the
 * assert fails at CHECK LINE (SIGABRT in T3, in `checker`).
 *
 * No single variable shows it: every thread touches each field once, and
 * no function takes one lock twice, so neither PENELOPE nor SideTrack has
 * a window; only a pattern over the two variables does.
 *
 * Built twice (tests/targets/mem/mem.h): bin/mem_atomicset annotated,
 * bin/mem_atomicset_plain without annotations (watch rec.lo,rec.hi).
 *
 * Usage: mem_atomicset [DELAY=100000000]   (loop iterations)
 * Prints "lo=2 hi=2"; exits 0, or SIGABRT.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem/mem.h"

struct pair {
	int lo;
	int hi;
};

struct pair rec;
pthread_mutex_t lo_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t hi_lock = PTHREAD_MUTEX_INITIALIZER;
static long delay;

__attribute__((noinline)) static void set_pair(int v)
{
	pthread_mutex_lock(&lo_lock);
	AVT_WRITE(&rec.lo); rec.lo = v; /* WRITE LO */
	pthread_mutex_unlock(&lo_lock);
	pthread_mutex_lock(&hi_lock);
	AVT_WRITE(&rec.hi); rec.hi = v; /* WRITE HI */
	pthread_mutex_unlock(&hi_lock);
}

__attribute__((noinline)) static struct pair get_pair(void)
{
	struct pair p;
	pthread_mutex_lock(&lo_lock);
	AVT_READ(&rec.lo); p.lo = rec.lo; /* READ LO */
	pthread_mutex_unlock(&lo_lock);
	pthread_mutex_lock(&hi_lock);
	AVT_READ(&rec.hi); p.hi = rec.hi; /* READ HI */
	pthread_mutex_unlock(&hi_lock);
	return p;
}

__attribute__((noinline)) static void *writer(void *arg)
{
	int v = (int)(intptr_t)arg;
	if (v == 2)
		mem_busy(delay); /* the second writer comes later */
	set_pair(v);
	return NULL;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	struct pair p;
	mem_busy(2 * delay); /* after both writers, in a natural run */
	p = get_pair();
	assert(p.lo == p.hi); /* CHECK LINE */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w1, w2, c;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 100000000;
	if (pthread_create(&w1, NULL, writer, (void *)1) != 0 ||
	    pthread_create(&w2, NULL, writer, (void *)2) != 0 ||
	    pthread_create(&c, NULL, checker, NULL) != 0)
		return 2;
	pthread_join(w1, NULL);
	pthread_join(w2, NULL);
	pthread_join(c, NULL);
	printf("lo=%d hi=%d\n", rec.lo, rec.hi);
	return 0;
}
