/*
 * acc_qsort_ok: acc_qsort's correct counterpart (issue 30, shape 5).  The
 * same recursive parallel quicksort, with the right half starting after
 * the pivot (p + 1): the halves share no element, every schedule sorts,
 * exit 0, no report.
 *
 * Usage: acc_qsort_ok [N=4096] [DEPTH=2] [DELAY=2000000]
 * Built -O0 -g (bin/acc_qsort_ok) and -O2 -g (bin/acc_qsort_ok_O2).
 */
#define RIGHT_START(lo, p) ((p) + 1)
#include "acc_qsort.c"
