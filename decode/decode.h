/*
 * The x86-64 memory-operand decoder: what an instruction does to memory,
 * read off its encoding (capstone), never guessed from values.
 *
 * Pure: no ptrace, no process.  dec_insn() turns the bytes of one
 * instruction into its data accesses (at most two: string instructions
 * read one operand and write another); dec_ea() computes an access's
 * effective address from a register file.  The tracer's access
 * breakpoints (tracer/access.c) and --watch (tracer/watch.c) use both.
 *
 * What counts as an access: an explicit memory operand that the
 * instruction reads or writes.  Not accesses: lea (an address, no load),
 * nop and prefetch with a memory operand, the implicit stack slots of
 * push/pop/call/ret.  Branches through memory (call *8(%rax), the PLT's
 * jmp *GOT(%rip)) read a code pointer; they are reported (DEC_F_BRANCH)
 * so the caller can skip them: they cannot run out of line.
 *
 * Ownership: struct dec owns its capstone handle; dec_insn's output is
 * plain data.
 */
#ifndef AVT_DECODE_DECODE_H
#define AVT_DECODE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

enum dec_kind {
	DEC_READ = 1,
	DEC_WRITE = 2,
	DEC_RMW = 3,   /* read and write in one instruction (x86 never splits it) */
};

/* General registers as numbered in the decoder (the encoding's order). */
enum dec_reg {
	DEC_RAX, DEC_RCX, DEC_RDX, DEC_RBX, DEC_RSP, DEC_RBP, DEC_RSI, DEC_RDI,
	DEC_R8, DEC_R9, DEC_R10, DEC_R11, DEC_R12, DEC_R13, DEC_R14, DEC_R15,
	DEC_RIP,
	DEC_NOREG = -1,
};

enum dec_seg { DEC_SEG_NONE, DEC_SEG_FS, DEC_SEG_GS };

/* Access flags. */
#define DEC_F_ATOMIC  0x01 /* lock prefix, or xchg with memory (implicitly locked) */
#define DEC_F_CAS     0x02 /* cmpxchg*: a write only when the comparison succeeds */
#define DEC_F_REP     0x04 /* rep-prefixed string op: rcx elements of size bytes */
#define DEC_F_STRING  0x08 /* string op: rsi/rdi advance by size (DF=0) */

struct dec_mem {
	int8_t base, index;   /* enum dec_reg or DEC_NOREG */
	uint8_t scale;        /* 1, 2, 4, 8 */
	uint8_t seg;          /* enum dec_seg: fs/gs are thread-local here */
	int64_t disp;
	uint64_t rip_target;  /* base == DEC_RIP: the absolute address */
	uint16_t size;        /* bytes of one access (one element of a string op) */
	uint8_t kind;         /* enum dec_kind */
	uint8_t flags;        /* DEC_F_* */
	bool addr32;          /* 0x67 prefix: the address is 32 bits */
};

/* Instruction flags. */
#define DEC_F_BRANCH    0x01 /* a jump/call/ret: cannot run out of line */
#define DEC_F_NOACCESS  0x02 /* has a memory operand that is not an access (lea, nop, prefetch) */
#define DEC_F_STACKOP   0x04 /* push/pop/call/ret/enter/leave: implicit stack accesses */
#define DEC_F_FRAMEADDR 0x08 /* copies rsp or rbp into another register (lea X(%rsp), mov %rsp,%r) */
#define DEC_F_FPSETUP   0x10 /* mov %rsp,%rbp: a frame-pointer prologue */
#define DEC_F_VSIB      0x20 /* a memory operand indexed by a vector register: not computed */
#define DEC_F_INDIRECT  0x40 /* a jmp through a register or memory: a jump table may target anything */

struct dec_insn {
	uint64_t addr;
	uint8_t len;
	uint8_t flags;        /* DEC_F_BRANCH ... */
	uint8_t nmem;         /* accesses in mem[] */
	struct dec_mem mem[2];
	int8_t frame_src;     /* DEC_F_FRAMEADDR: DEC_RSP or DEC_RBP */
	int8_t store_src;     /* a store of a whole 64-bit register (mov %reg,mem:
	                         a pointer's size): the register, else DEC_NOREG */
	uint64_t target;      /* a direct jump, call or loop: where it goes; else 0 */
	char text[80];        /* "mnemonic operands", for messages */
};

struct dec;

struct dec *dec_new(void);
void dec_free(struct dec *d);

/* Decodes the instruction at code[0..len) (at address addr).  Returns its
 * length, 0 when it cannot be decoded. */
int dec_insn(struct dec *d, const uint8_t *code, size_t len, uint64_t addr,
	     struct dec_insn *out);

/* Instructions too short for a jmp rel32 (need bytes) can be displaced
 * together with the ones after them.  ins[0..n) are a function's
 * instructions in order, site[k] says whether ins[k] is an access site
 * itself.  Returns the bytes from ins[i] on that may be covered: the
 * fewest contiguous instructions (at most 4, at most max bytes) reaching
 * need, none after the first a branch or a site; 0 if there are none.
 * Whether anything jumps into the covered bytes is the caller's
 * question (targets and DEC_F_INDIRECT of the whole module). */
size_t dec_cover(const struct dec_insn *ins, size_t n, size_t i, const bool *site, size_t need,
		 size_t max);

/* Whether one of targets[0..n) (sorted) lands inside (addr, addr + cover):
 * in the displaced bytes after the first instruction. */
bool dec_lands_inside(const uint64_t *targets, size_t n, uint64_t addr, size_t cover);

/* foo, foo.cold, foo.part.0: parts of one function as the compiler splits
 * it (a jump table in one may target the other's blocks). */
bool dec_same_function(const char *a, const char *b);

/* The effective address of m for registers r (fs_base / gs_base for
 * segment-relative operands).  rip-relative operands give rip_target. */
uint64_t dec_ea(const struct dec_mem *m, const struct user_regs_struct *r);

/* The value of a decoder register in r. */
uint64_t dec_reg_value(const struct user_regs_struct *r, int reg);

/* For rep string ops: how many bytes the whole instruction touches when
 * run with registers r (size x rcx), capped at cap. */
uint64_t dec_extent(const struct dec_mem *m, const struct user_regs_struct *r, uint64_t cap);

#endif
