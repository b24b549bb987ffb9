/*
 * Call-frame walking from the DWARF call frame information (.eh_frame) of
 * each module, never from guesses.
 *
 * --stacks swaps return addresses for a trampoline to see calls end.  On
 * code built without frame pointers (Debian's -O2), the word at rbp+8 is
 * live data, so the walk must know where each frame's return address is:
 * the CFI says (CFA = reg + offset, return address saved at CFA - 8).  When
 * a frame has no CFI, or a rule this walker does not evaluate (arbitrary
 * expressions, the return address in a register), the walk stops there:
 * fewer frames, never a guess.
 *
 * The walker reads memory and finds a module's CFI through callbacks, so
 * the same code walks a live, ptrace-stopped thread and a snapshot in a
 * unit test.
 *
 * Ownership: struct cfi_cache owns the ELF handles and file descriptors it
 * opened; Dwarf_CFI pointers it returns live as long as the cache.
 */
#ifndef AVT_TRACER_CFI_H
#define AVT_TRACER_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DWARF register numbers of x86-64 (System V psABI, figure 3.36). */
enum {
	CFI_RAX, CFI_RDX, CFI_RCX, CFI_RBX, CFI_RSI, CFI_RDI, CFI_RBP, CFI_RSP,
	CFI_R8, CFI_R9, CFI_R10, CFI_R11, CFI_R12, CFI_R13, CFI_R14, CFI_R15,
	CFI_RIP, /* the return address column */
	CFI_NREGS
};

struct cfi_regs {
	uint64_t r[CFI_NREGS];
	uint32_t known; /* bit i: r[i] is known in this frame */
};

struct user_regs_struct;
void cfi_regs_from_user(struct cfi_regs *c, const struct user_regs_struct *u);

/* One frame found by the walk. */
struct cfi_frame {
	uint64_t pc;      /* where the frame executes (a return address above the first) */
	uint64_t cfa;     /* canonical frame address: this call's identity */
	uint64_t ra_slot; /* where its return address is stored, 0 if not in memory */
	uint64_t ra;      /* that return address (value read from ra_slot) */
};

struct cfi_env {
	/* Reads target memory; 0 or -1. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* The CFI covering pc, and the bias to subtract from pc to get an ELF
	 * address; NULL if none.  The result is a Dwarf_CFI *. */
	void *(*find)(void *ctx, uint64_t pc, uint64_t *bias);
	/* Optional: the real value of a return-address slot that the tracer
	 * swapped for its trampoline (called with the value read). */
	uint64_t (*real_ra)(void *ctx, uint64_t slot, uint64_t value);
	void *ctx;
};

/* Walks from the register state of the innermost frame (regs->r[CFI_RIP]
 * is its pc, the address of the instruction about to run).  Fills up to max
 * frames, innermost first: every frame's cfa, and ra_slot/ra where the CFI
 * says the return address is saved in memory at CFA - 8.  The last frame
 * may have ra_slot 0 (the walk could not go on).  Returns the number of
 * frames (0 if the first has no CFI). */
int cfi_walk(const struct cfi_env *env, const struct cfi_regs *regs, struct cfi_frame *out, int max);

/* ELF files of a process's modules, opened on first use. */
struct cfi_cache;
struct cfi_cache *cfi_cache_new(void);
void cfi_cache_free(struct cfi_cache *c);
/* The .eh_frame CFI of the ELF file at path (NULL if it has none or cannot
 * be read; the answer is remembered). */
void *cfi_cache_get(struct cfi_cache *c, const char *path);

#endif
