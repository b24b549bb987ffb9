/*
 * Access stubs: the machine code that lets the in-process agent take an
 * access breakpoint without a ptrace stop (docs/memory-access.md, "In
 * process").
 *
 * A jump-form access site (tracer/bpt.c: `jmp slot`, the slot being
 * `int3; copy; jmp back`) is pointed at a stub instead.  The stub saves
 * what a C call may clobber (below the red zone: the flags and the
 * caller-saved registers), computes the access's effective address with
 * the instruction's own operand re-encoded as a `lea` (a rip-relative
 * operand: its absolute target), and calls the agent's entry
 *
 *     int entry(uint32_t index, uint64_t address, uint64_t rsp, uint64_t value);
 *
 * with the site's index in the agent's table, the thread's stack pointer
 * at the instruction and, for a store of a 64-bit register (dec_insn's
 * store_src), the value it stores (else whatever rcx held).  0: the agent committed the event, and the
 * stub restores everything and jumps to `fast` (the slot's copy, past its
 * int3).  Anything else: it restores everything and jumps to `slow` (the
 * slot's int3: the ptrace stop that happens without the agent, with the
 * same registers).
 *
 * The entry must not touch the vector registers (the agent's is compiled
 * with -mgeneral-regs-only); the stub clears the direction flag for it.
 *
 * Pure: bytes in, bytes out, no process (unit-tested by executing stubs
 * in tests/unit/test_decode.c).
 */
#ifndef AVT_DECODE_STUB_H
#define AVT_DECODE_STUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"

#define STUB_SIZE 160

/* Can a stub compute the access of this instruction?  One explicit
 * operand, not segment-relative, no 32-bit addressing, not a string op
 * (its extent depends on rcx) and not a cmpxchg (decided from memory at
 * the commit). */
bool stub_supported(const struct dec_insn *in);

/* Writes the stub for in's operand, to run at stub_addr, into out.
 * Returns its length (<= STUB_SIZE), or 0 when it cannot be built (not
 * supported, or a target out of rel32 reach). */
size_t stub_encode(uint8_t out[STUB_SIZE], uint64_t stub_addr, const struct dec_insn *in,
		   uint32_t index, uint64_t entry, uint64_t fast, uint64_t slow);

#endif
