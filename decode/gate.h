/*
 * Caller gates: machine code in front of a hooked function's int3 that lets
 * the calls the tracer would only look at and resume go on without a ptrace
 * stop.
 *
 * A heap hook (malloc, calloc, realloc, free) stops at every call, but the
 * tracer records nothing for a call from libc or the dynamic linker (their
 * internal allocations: a thread's TLS, its exit's frees) nor for free(NULL).
 * A program that starts thousands of threads made about 20 such stops per
 * thread (ld.so's _dl_deallocate_tls frees every DTV slot), two thirds of
 * its recording's stops.  The hook's jump-form jmp is pointed at a gate
 * instead:
 *
 *   push %rax; push %rcx; pushfq          (at a function's entry: nothing
 *                                          below rsp belongs to anyone)
 *   [test %rdi,%rdi; jz pass]             null_arg_passes
 *   for each range [lo, hi):
 *     mov 24(%rsp),%rax                   the caller's return address
 *     movabs $lo,%rcx; sub %rcx,%rax
 *     movabs $(hi-lo),%rcx; cmp %rcx,%rax
 *     jb pass                             lo <= ret < hi (unsigned)
 *   popfq; pop %rcx; pop %rax; jmp stop   the slot's int3: the stop there
 *                                         would have been, same registers
 *   pass: popfq; pop %rcx; pop %rax; jmp go   the slot's copy, no stop
 *
 * Pure: bytes in, bytes out (unit-tested by running gates in
 * tests/unit/test_gate.c).
 */
#ifndef AVT_DECODE_GATE_H
#define AVT_DECODE_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GATE_MAX_RANGES 4
#define GATE_SIZE (3 + 9 + 37 * GATE_MAX_RANGES + 2 * 8)

struct gate_range {
	uint64_t lo, hi;
};

/* Writes the gate to run at `at` into out: calls returning into one of the
 * n ranges (n <= GATE_MAX_RANGES), or with a first argument of 0 when
 * null_arg_passes, jump to go; the others to stop.  Returns its length
 * (<= GATE_SIZE), or 0 when it cannot be built (too many ranges, an empty
 * one, go or stop out of rel32 reach). */
size_t gate_encode(uint8_t out[GATE_SIZE], uint64_t at, const struct gate_range *r, size_t n,
		   bool null_arg_passes, uint64_t go, uint64_t stop);

#endif
