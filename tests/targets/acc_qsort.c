/*
 * acc_qsort (issue 30, shape 5; access breakpoints, unannotated): a
 * recursive parallel quicksort whose two halves overlap by one element.
 * Written here; the shape of the parallel quicksorts of the public
 * benchmark suites (a thread per left half, down to a depth).
 *
 *   sort(lo, hi, depth): partition [lo, hi) around its last element
 *   (Lomuto: a[lo..p-1] < pivot = a[p] <= a[p+1..hi-1]); with depth left,
 *   a new thread sorts the left half [lo, p) while this one sorts the
 *   right half, then joins it.
 *
 * The bug (RIGHT LINE): the right half starts at p - 1 instead of p + 1,
 * so a[p - 1], the left half's last element, belongs to both.  Either
 * half alone leaves it right (it is the right half's minimum, whatever
 * the left half puts there), so a natural run, where the parent is done
 * with the element before its child has got through its busy preamble,
 * sorts correctly.  But the right half's partitions read a[p - 1] and
 * write it back (a swap with itself: SWAP LINE); when the left half's
 * write of another value to a[p - 1] falls between the two, that value is
 * lost and the read one doubled: the array is no longer a permutation,
 * and the check at the end of main fails (CHECK LINE, SIGABRT).
 * acc_qsort_ok.c is the same program with the right half at p + 1.
 *
 * Events: every element access is one; N log N of them (about 130,000 at
 * the default N), most of them on memory all threads touch: a program of
 * the size where whole-trace predictions must scale.
 *
 * Usage: acc_qsort [N=4096] [DEPTH=2] [DELAY=2000000]
 *   N elements (a shuffled permutation of 0..N-1, fixed seed), threads to
 *   depth DEPTH (2^DEPTH sorting threads), DELAY busy iterations at the
 *   start of each new thread.  Built -O0 -g and -O2 -g (bin/acc_qsort_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* Where the right half starts: the bug takes a[p - 1] into it (not below
 * lo: that is another thread's range); acc_qsort_ok.c defines p + 1 */
#ifndef RIGHT_START
#define RIGHT_START(lo, p) ((p) > (lo) ? (p) - 1 : (p) + 1)
#endif

#define N_MAX 65536

int a[N_MAX];
static long delay = 2000000;

struct range {
	int lo, hi, depth;
};

__attribute__((noinline)) static void swap(int i, int j)
{
	int t = a[i];
	a[i] = a[j];
	a[j] = t; /* SWAP LINE */
}

__attribute__((noinline)) static int partition(int lo, int hi)
{
	int pivot = a[hi - 1], i = lo;
	for (int j = lo; j < hi - 1; j++)
		if (a[j] < pivot)
			swap(i++, j);
	swap(i, hi - 1);
	return i;
}

static void sort(int lo, int hi, int depth);

__attribute__((noinline)) static void *sort_thread(void *arg)
{
	struct range *r = arg;
	for (volatile long k = 0; k < delay; k++)
		;
	sort(r->lo, r->hi, r->depth);
	return NULL;
}

static void sort(int lo, int hi, int depth)
{
	if (hi - lo < 2)
		return;
	int p = partition(lo, hi);
	if (depth > 0) {
		struct range left = { lo, p, depth - 1 };
		pthread_t t;
		if (pthread_create(&t, NULL, sort_thread, &left))
			abort();
		sort(RIGHT_START(lo, p), hi, depth - 1); /* RIGHT LINE */
		pthread_join(t, NULL);
	} else {
		sort(lo, p, 0);
		sort(p + 1, hi, 0);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4096;
	int depth = argc > 2 ? atoi(argv[2]) : 2;
	if (argc > 3)
		delay = atol(argv[3]);
	if (n < 2 || n > N_MAX)
		n = 4096;
	if (depth < 0 || depth > 6)
		depth = 2;
	unsigned seed = 12345;
	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = n - 1; i > 0; i--) {
		seed = seed * 1103515245u + 12345u;
		int j = (int)((seed >> 8) % (unsigned)(i + 1));
		int t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	sort(0, n, depth);
	for (int i = 0; i < n; i++)
		if (a[i] != i) {
			fprintf(stderr, "not sorted: a[%d] = %d\n", i, a[i]);
			abort(); /* CHECK LINE */
		}
	printf("sorted %d\n", n);
	return 0;
}
