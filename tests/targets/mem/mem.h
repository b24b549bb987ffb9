/*
 * mem.h: the annotations of include/avtrace.h, or nothing.
 *
 * Each tests/targets/mem_*.c is built twice (tests/targets/targets.mk):
 *   bin/mem_NAME        -I include: AVT_* are avtrace's USDT probes
 *   bin/mem_NAME_plain  -DAVT_NO_ANNOTATIONS: AVT_* expand to nothing, so
 *                       the binary is what an unannotated program looks
 *                       like, and avtrace sees its accesses only through
 *                       --watch
 * Same source, same lines: the markers name the same lines in both.
 */
#ifndef MEM_H
#define MEM_H

#ifdef AVT_NO_ANNOTATIONS
#define AVT_READ(ptr) ((void)0)
#define AVT_WRITE(ptr) ((void)0)
#define AVT_ATOMIC_BEGIN() ((void)0)
#define AVT_ATOMIC_END() ((void)0)
#else
#include "avtrace.h"
#endif

/* Busy work, not sleep: keeps a thread off the shared data long enough
 * that every natural run (native, or serialized by the recorder's 10 ms
 * slices) orders it after the other thread. */
__attribute__((noinline, unused)) static void mem_busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

#endif
