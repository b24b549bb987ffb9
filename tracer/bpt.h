/*
 * Breakpoints of one address space.
 *
 * A planted int3 is never removed while the target runs (removing it lets
 * other threads run past it: PTRACE-NOTES pitfall 1).  Instead, after a
 * breakpoint stop the thread resumes at an out-of-line slot in a scratch
 * page the tracer maps into the target: a copy of the displaced instruction
 * followed by an absolute jump back to the instruction after it.  So a
 * breakpoint costs exactly one ptrace stop and no single-step.  Probe sites
 * that are a one-byte nop need no slot: the pc is simply advanced.
 *
 * Jump form (bpt_insert_jump_at): an instruction of 5 bytes or more is
 * replaced by a `jmp rel32` to its slot, and the slot begins with the int3:
 * `int3; copy; jmp back`.  The thread stops inside the slot with its pc
 * already on the copy, so resuming it needs no change of registers: one
 * ptrace call (SETREGS) fewer per stop.  Its int3 is at the slot, not at
 * addr: find it with bpt_at_trap().
 *
 * The displaced instruction is decoded (capstone) and refused when it
 * cannot run elsewhere unchanged: relative branches, calls, returns,
 * rip-relative operands too far from the scratch page to relocate.
 *
 * Ownership: struct bpt_table owns its entries; scratch memory belongs to
 * the target.
 */
#ifndef AVT_TRACER_BPT_H
#define AVT_TRACER_BPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BPT_SLOT_SIZE 32
#define BPT_SCRATCH_SIZE 16384
#define BPT_JMP_LEN 5   /* jmp rel32 */
/* the most bytes displaced together: the slot's int3, their copy and an
 * absolute jmp back (14 bytes) fill one slot */
#define BPT_COVER_MAX (BPT_SLOT_SIZE - 1 - 14)

struct bpt {
	uint64_t addr;
	uint64_t slot;      /* where to resume after the stop; 0 = addr + 1 (nop) */
	uint8_t orig[16];   /* original bytes at addr (first len valid) */
	uint64_t trap;      /* where its int3 is: addr, or slot (jump form) */
	uint8_t len;        /* length of the displaced instruction */
	bool jump;          /* jump form: addr holds a jmp to slot */
	int kind;           /* owner's tag (hook entry, probe, trampoline) */
	int data;           /* owner's tag (hook index, probe index) */
	bool used;
};

struct bpt_table {
	struct bpt *slots;  /* open addressing, power-of-two capacity */
	size_t cap, n;
	pid_t pid;
	int memfd;
	uint64_t scratch;   /* scratch page in the target (0 until mapped) */
	size_t scratch_used;
	struct bpt_trap { uint64_t trap, addr; } *traps; /* jump form: slot -> addr */
	size_t tcap, tn;
	/* int3s removed while a thread may have trapped on one and not been
	 * seen yet: where it traps, where it resumes (bpt_retired) */
	struct bpt_retired { uint64_t trap, resume; } *retired;
	size_t nretired, retcap;
};

void bpt_init(struct bpt_table *bt, pid_t pid, int memfd, uint64_t scratch);
void bpt_release(struct bpt_table *bt);
/* dst: a copy of src for another process (pid, memfd) whose memory holds
 * the same breakpoints (a forked child).  -1: out of memory. */
int bpt_copy(struct bpt_table *dst, const struct bpt_table *src, pid_t pid, int memfd);

/* Plants an int3 at addr with an out-of-line slot for the displaced
 * instruction.  Returns 0, or -1 with a reason in why. */
int bpt_insert(struct bpt_table *bt, uint64_t addr, int kind, int data,
	       char *why, size_t whylen);
/* Like bpt_insert, with the slot (BPT_SLOT_SIZE bytes of target memory
 * within reach of addr's rip-relative operands) chosen by the caller. */
int bpt_insert_at(struct bpt_table *bt, uint64_t addr, int kind, int data, uint64_t slot,
		  char *why, size_t whylen);
/* Like bpt_insert_at, in the jump form when the instruction allows it (5
 * bytes or more, no lock prefix, slot within reach of a rel32 jump);
 * otherwise as bpt_insert_at. */
int bpt_insert_jump_at(struct bpt_table *bt, uint64_t addr, int kind, int data, uint64_t slot,
		       char *why, size_t whylen);
/* bpt_insert in the jump form when the instruction allows it. */
int bpt_insert_jump(struct bpt_table *bt, uint64_t addr, int kind, int data,
		    char *why, size_t whylen);
/* A function's entry (fsize bytes long): the jump form over its first
 * instructions when the first is too short, if the decoded function shows
 * nothing jumps into them; else as bpt_insert_jump. */
/* The jump form over a short instruction and the ones after it, cover
 * bytes in all (access sites: decode/'s dec_cover; the caller has made
 * sure nothing jumps inside), its slot at saddr.  -1 with why. */
int bpt_insert_cover_at(struct bpt_table *bt, uint64_t addr, size_t cover, int kind, int data,
			uint64_t saddr, char *why, size_t whylen);
int bpt_insert_entry(struct bpt_table *bt, uint64_t addr, uint64_t fsize, int kind, int data,
		     char *why, size_t whylen);
/* size bytes of the scratch page for code of the caller's (a caller gate,
 * decode/gate.h), or 0 when it is full. */
uint64_t bpt_scratch_alloc(struct bpt_table *bt, size_t size);
/* Plants an int3 at a one-byte nop (resume = addr + 1). */
int bpt_insert_nop(struct bpt_table *bt, uint64_t addr, int kind, int data);
/* Plants a bare int3 that is never resumed through (trampolines and the
 * one-shot entry stop); the caller sets the pc itself. */
int bpt_insert_raw(struct bpt_table *bt, uint64_t addr, int kind, int data);
int bpt_remove(struct bpt_table *bt, uint64_t addr);
/* Points a jump-form breakpoint's jmp at target instead of its slot (an
 * access stub that ends in the slot).  bpt_remove still restores the
 * original bytes. */
int bpt_jump_to(struct bpt_table *bt, uint64_t addr, uint64_t target);
/* A SIGTRAP at trap + 1 that no planted int3 explains may come from one
 * bpt_remove() took away after a thread hit it and before its stop was
 * seen (a site disarmed by another thread's hits meanwhile).  true, with
 * the pc to resume at (the restored instruction, or the slot's copy),
 * when an int3 was removed from trap. */
bool bpt_retired(const struct bpt_table *bt, uint64_t trap, uint64_t *resume);

struct bpt *bpt_find(struct bpt_table *bt, uint64_t addr);
/* The breakpoint whose int3 is at trap (a stopped thread's pc - 1). */
struct bpt *bpt_at_trap(struct bpt_table *bt, uint64_t trap);
/* Where a thread stopped at b must resume (jump form: where it already is). */
static inline uint64_t bpt_resume_pc(const struct bpt *b)
{
	return b->jump ? b->slot + 1 : b->slot ? b->slot : b->addr + 1;
}

/* Copies target memory [addr, addr+len) into buf with planted int3s
 * replaced by the original bytes. */
int bpt_read_orig(struct bpt_table *bt, uint64_t addr, void *buf, size_t len);
/* Writes the original bytes back at every breakpoint of a process that
 * shares nothing else with us (a forked child) through its memfd. */
int bpt_restore_all(struct bpt_table *bt, int child_memfd);

/* Checks that the instruction at code[0..len) can run out of line at
 * slot_addr (exposed for tests).  Returns its length, or -1 with why. */
int bpt_relocate(const uint8_t *code, size_t len, uint64_t from, uint64_t slot_addr,
		 uint8_t *out, size_t *outlen, char *why, size_t whylen);

#endif
