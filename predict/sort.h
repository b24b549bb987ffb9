/*
 * A stable sort of (64-bit key, 32-bit value) pairs, for the detectors'
 * and ranking's sorts of large arrays (issue 30): an LSD radix sort, 8
 * bits a pass, that skips the passes whose digit is the same in every key
 * (the high bytes of addresses, small enum fields).  Stable, so sorting
 * pairs whose values are their positions gives the order a stable
 * comparison sort (glibc's qsort, a merge sort) gives on the same keys.
 *
 * Ownership: the caller owns both arrays.
 */
#ifndef AVT_PREDICT_SORT_H
#define AVT_PREDICT_SORT_H

#include <stddef.h>
#include <stdint.h>

struct pr_kv {
	uint64_t key;
	uint32_t val;
};

/* Sorts a[0 .. n) by key, equal keys kept in their order; tmp holds n
 * pairs of scratch.  Returns the number of passes made (for tests: at
 * most 8, none for keys that are all equal). */
unsigned pr_sort_kv(struct pr_kv *a, struct pr_kv *tmp, size_t n);

#endif
