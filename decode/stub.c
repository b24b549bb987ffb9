/*
 * Access stubs (stub.h): the bytes, written out by hand.  Layout, with
 * orig the stack pointer at the instruction:
 *
 *   lea -128(%rsp),%rsp            skip the red zone
 *   pushfq; push rax rcx rdx rsi rdi r8 r9 r10 r11 rbx    rsp = orig - 216
 *   lea OPERAND,%rsi               (registers still the program's;
 *                                   rsp-based: displacement + 216)
 *     or movabs $target,%rsi       (rip-relative)
 *   mov SRC,%rcx                   a store of a 64-bit register (mov
 *                                  SRC,mem): the value it stores (rsp:
 *                                  lea 216(%rsp),%rcx; rsi, just
 *                                  replaced: its saved copy,
 *                                  mov 48(%rsp),%rcx); else rcx as is
 *   lea 216(%rsp),%rdx             orig
 *   mov $index,%edi
 *   mov %rsp,%rbx; and $-16,%rsp   the ABI's alignment (rbx: callee-saved)
 *   cld
 *   movabs $entry,%rax; call *%rax
 *   mov %rbx,%rsp
 *   test %eax,%eax; jnz 1f
 *   RESTORE; jmp fast
 * 1: RESTORE; jmp slow
 *
 * RESTORE pops in the reverse order, popfq (the flags of the test are
 * gone), lea 128(%rsp),%rsp.
 */
#include "stub.h"

#include <string.h>

/* Bytes the pushes and the red zone take below the original rsp. */
#define FRAME (128 + 11 * 8)

struct out {
	uint8_t *p;
	size_t n;
};

static void put(struct out *o, const void *b, size_t n)
{
	if (o->n + n <= STUB_SIZE)
		memcpy(o->p + o->n, b, n);
	o->n += n;
}

static void put1(struct out *o, uint8_t b)
{
	put(o, &b, 1);
}

static void put32(struct out *o, uint32_t v)
{
	put(o, &v, 4);
}

static void put64(struct out *o, uint64_t v)
{
	put(o, &v, 8);
}

static bool rel32(uint64_t from_end, uint64_t to, int32_t *r)
{
	int64_t d = (int64_t)(to - from_end);
	*r = (int32_t)d;
	return d == (int64_t)*r;
}

static bool jump(struct out *o, uint64_t base, uint64_t to)
{
	int32_t r;
	put1(o, 0xe9);
	if (!rel32(base + o->n + 4, to, &r))
		return false;
	put32(o, (uint32_t)r);
	return true;
}

static void restore(struct out *o)
{
	static const uint8_t pops[] = { 0x5b, 0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58,
					0x5f, 0x5e, 0x5a, 0x59, 0x58, 0x9d };
	static const uint8_t up[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
	put(o, pops, sizeof pops);
	put(o, up, sizeof up);
}

bool stub_supported(const struct dec_insn *in)
{
	if (in->nmem != 1 || in->flags & (DEC_F_BRANCH | DEC_F_VSIB | DEC_F_STACKOP))
		return false;
	const struct dec_mem *m = &in->mem[0];
	if (m->seg != DEC_SEG_NONE || m->addr32 || m->flags & (DEC_F_CAS | DEC_F_REP | DEC_F_STRING))
		return false;
	if (m->index == DEC_RIP || m->index == DEC_RSP || (m->base == DEC_RIP && m->index != DEC_NOREG))
		return false;
	if (m->scale != 1 && m->scale != 2 && m->scale != 4 && m->scale != 8)
		return false;
	return m->kind >= DEC_READ && m->kind <= DEC_RMW;
}

/* mov SRC,%rcx: the value a store of SRC writes (the program's registers,
 * with rsp FRAME bytes lower and rsi the operand's address). */
static void value_to_rcx(struct out *o, int8_t src)
{
	if (src == DEC_RSP) {
		static const uint8_t lea[] = { 0x48, 0x8d, 0x8c, 0x24, FRAME, 0, 0, 0 };
		put(o, lea, sizeof lea);
		return;
	}
	if (src == DEC_RSI) { /* lea OPERAND,%rsi came first: its saved copy */
		static const uint8_t saved[] = { 0x48, 0x8b, 0x4c, 0x24, 48 };
		put(o, saved, sizeof saved);
		return;
	}
	put1(o, (uint8_t)(0x48 | (src >= DEC_R8 ? 0x04 : 0)));
	put1(o, 0x89);
	put1(o, (uint8_t)(0xc0 | (src & 7) << 3 | 1)); /* mod 11, reg src, rm rcx */
}

/* lea OPERAND,%rsi as the program's registers would give it, with rsp
 * FRAME bytes lower. */
static bool ea_to_rsi(struct out *o, const struct dec_mem *m)
{
	if (m->base == DEC_RIP) {
		put1(o, 0x48);
		put1(o, 0xbe); /* movabs $imm64,%rsi */
		put64(o, m->rip_target);
		return true;
	}
	int64_t disp = m->disp + (m->base == DEC_RSP ? FRAME : 0);
	if (disp != (int32_t)disp)
		return false;
	uint8_t ss = m->scale == 8 ? 3 : m->scale == 4 ? 2 : m->scale == 2 ? 1 : 0;
	uint8_t idx = m->index == DEC_NOREG ? 4 : (uint8_t)(m->index & 7);
	uint8_t rex = 0x48;
	if (m->index != DEC_NOREG && m->index >= DEC_R8)
		rex |= 0x02;
	if (m->base != DEC_NOREG && m->base >= DEC_R8)
		rex |= 0x01;
	put1(o, rex);
	put1(o, 0x8d);
	if (m->base == DEC_NOREG) {
		put1(o, 0x34);                 /* mod 00, reg rsi, rm SIB */
		put1(o, (uint8_t)(ss << 6 | idx << 3 | 5)); /* no base: disp32 */
	} else {
		put1(o, 0xb4);                 /* mod 10 (disp32), reg rsi, rm SIB */
		put1(o, (uint8_t)(ss << 6 | idx << 3 | (m->base & 7)));
	}
	put32(o, (uint32_t)(int32_t)disp);
	return true;
}

size_t stub_encode(uint8_t out[STUB_SIZE], uint64_t stub_addr, const struct dec_insn *in,
		   uint32_t index, uint64_t entry, uint64_t fast, uint64_t slow)
{
	static const uint8_t save[] = {
		0x48, 0x8d, 0x64, 0x24, 0x80,           /* lea -128(%rsp),%rsp */
		0x9c, 0x50, 0x51, 0x52, 0x56, 0x57,     /* pushfq, rax rcx rdx rsi rdi */
		0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53, /* r8 r9 r10 r11 */
		0x53,                                   /* rbx */
	};
	static const uint8_t orig_rsp[] = { 0x48, 0x8d, 0x94, 0x24, FRAME, 0, 0, 0 };
	static const uint8_t align[] = { 0x48, 0x89, 0xe3, 0x48, 0x83, 0xe4, 0xf0, 0xfc };
	static const uint8_t back[] = { 0x48, 0x89, 0xdc, 0x85, 0xc0 };
	if (!stub_supported(in))
		return 0;
	struct out o = { out, 0 };
	put(&o, save, sizeof save);
	if (!ea_to_rsi(&o, &in->mem[0]))
		return 0;
	if (in->store_src >= DEC_RAX && in->store_src <= DEC_R15)
		value_to_rcx(&o, in->store_src);
	put(&o, orig_rsp, sizeof orig_rsp);
	put1(&o, 0xbf); /* mov $index,%edi */
	put32(&o, index);
	put(&o, align, sizeof align);
	put1(&o, 0x48);
	put1(&o, 0xb8); /* movabs $entry,%rax */
	put64(&o, entry);
	put1(&o, 0xff);
	put1(&o, 0xd0); /* call *%rax */
	put(&o, back, sizeof back);
	/* jnz to the slow half: the fast half is RESTORE (23 bytes) + jmp */
	put1(&o, 0x0f);
	put1(&o, 0x85);
	put32(&o, 23 + 5);
	restore(&o);
	if (!jump(&o, stub_addr, fast))
		return 0;
	restore(&o);
	if (!jump(&o, stub_addr, slow))
		return 0;
	return o.n <= STUB_SIZE ? o.n : 0;
}
