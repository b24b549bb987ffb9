/*
 * The operand decoder (decode/): bytes of one instruction -> its accesses
 * (effective address for a fixed register file, size, kind, flags).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "unit_util.h"

#define AT 0x400000ull

struct want {
	uint64_t ea;
	uint16_t size;
	uint8_t kind;
	uint8_t flags;   /* exact DEC_F_* of the access */
	uint64_t extent; /* dec_extent (0: not checked) */
	uint8_t seg;
};

struct row {
	const char *what;
	uint8_t code[16];
	uint8_t len;
	uint8_t iflags;  /* exact instruction flags */
	uint8_t nmem;
	struct want m[2];
};

static const struct row rows[] = {
	{ "lock addl $1,0x10(%rdi)", { 0xf0, 0x83, 0x47, 0x10, 0x01 }, 5, 0, 1,
	  { { 0x6010, 4, DEC_RMW, DEC_F_ATOMIC, 0, 0 } } },
	{ "mov 0x200(%rip),%eax", { 0x8b, 0x05, 0x00, 0x02, 0x00, 0x00 }, 6, 0, 1,
	  { { AT + 6 + 0x200, 4, DEC_READ, 0, 0, 0 } } },
	{ "mov %eax,0x8(%rbx,%rcx,4)", { 0x89, 0x44, 0x8b, 0x08 }, 4, 0, 1,
	  { { 0x2000 + 3 * 4 + 8, 4, DEC_WRITE, 0, 0, 0 } } },
	{ "mov %fs:0x28,%rax", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 0, 1,
	  { { 0x70028, 8, DEC_READ, 0, 0, DEC_SEG_FS } } },
	{ "rep movsq", { 0xf3, 0x48, 0xa5 }, 3, 0, 2,
	  { { 0x5000, 8, DEC_READ, DEC_F_REP | DEC_F_STRING, 24, 0 },
	    { 0x6000, 8, DEC_WRITE, DEC_F_REP | DEC_F_STRING, 24, 0 } } },
	{ "rep stosb", { 0xf3, 0xaa }, 2, 0, 1,
	  { { 0x6000, 1, DEC_WRITE, DEC_F_REP | DEC_F_STRING, 3, 0 } } },
	{ "repz cmpsb", { 0xf3, 0xa6 }, 2, 0, 2,
	  { { 0x5000, 1, DEC_READ, DEC_F_REP | DEC_F_STRING, 3, 0 },
	    { 0x6000, 1, DEC_READ, DEC_F_REP | DEC_F_STRING, 3, 0 } } },
	{ "movaps %xmm0,0x20(%rsi)", { 0x0f, 0x29, 0x46, 0x20 }, 4, 0, 1,
	  { { 0x5020, 16, DEC_WRITE, 0, 16, 0 } } },
	{ "vmovdqu (%rdx),%ymm1", { 0xc5, 0xfe, 0x6f, 0x0a }, 4, 0, 1,
	  { { 0x4000, 32, DEC_READ, 0, 0, 0 } } },
	{ "movsd 8(%rax),%xmm0 (SSE, not the string op)", { 0xf2, 0x0f, 0x10, 0x40, 0x08 }, 5, 0, 1,
	  { { 0x1008, 8, DEC_READ, 0, 0, 0 } } },
	{ "movq %xmm1,(%rax)", { 0x66, 0x0f, 0xd6, 0x08 }, 4, 0, 1,
	  { { 0x1000, 8, DEC_WRITE, 0, 0, 0 } } },
	{ "movdqu %xmm2,(%rax)", { 0xf3, 0x0f, 0x7f, 0x10 }, 4, 0, 1,
	  { { 0x1000, 16, DEC_WRITE, 0, 0, 0 } } },
	{ "vmovdqu %ymm2,0x40(%rax)", { 0xc5, 0xfe, 0x7f, 0x50, 0x40 }, 5, 0, 1,
	  { { 0x1040, 32, DEC_WRITE, 0, 0, 0 } } },
	{ "movups (%rax),%xmm3", { 0x0f, 0x10, 0x18 }, 3, 0, 1,
	  { { 0x1000, 16, DEC_READ, 0, 0, 0 } } },
	{ "movnti %ecx,(%rax)", { 0x0f, 0xc3, 0x08 }, 3, 0, 1,
	  { { 0x1000, 4, DEC_WRITE, 0, 0, 0 } } },
	{ "movd %xmm1,(%rax)", { 0x66, 0x0f, 0x7e, 0x08 }, 4, 0, 1,
	  { { 0x1000, 4, DEC_WRITE, 0, 0, 0 } } },
	{ "movss %xmm1,(%rax)", { 0xf3, 0x0f, 0x11, 0x08 }, 4, 0, 1,
	  { { 0x1000, 4, DEC_WRITE, 0, 0, 0 } } },
	{ "pextrd $1,%xmm1,(%rax)", { 0x66, 0x0f, 0x3a, 0x16, 0x08, 0x01 }, 6, 0, 1,
	  { { 0x1000, 4, DEC_WRITE, 0, 0, 0 } } },
	{ "setne (%rax)", { 0x0f, 0x95, 0x00 }, 3, 0, 1,
	  { { 0x1000, 1, DEC_WRITE, 0, 0, 0 } } },
	{ "cmovne (%rax),%ecx", { 0x0f, 0x45, 0x08 }, 3, 0, 1,
	  { { 0x1000, 4, DEC_READ, 0, 0, 0 } } },
	{ "incl (%rax)", { 0xff, 0x00 }, 2, 0, 1,
	  { { 0x1000, 4, DEC_RMW, 0, 0, 0 } } },
	{ "btsl $3,(%rax)", { 0x0f, 0xba, 0x28, 0x03 }, 4, 0, 1,
	  { { 0x1000, 4, DEC_RMW, 0, 0, 0 } } },
	{ "lock cmpxchg %rcx,(%rdi)", { 0xf0, 0x48, 0x0f, 0xb1, 0x0f }, 5, 0, 1,
	  { { 0x6000, 8, DEC_RMW, DEC_F_ATOMIC | DEC_F_CAS, 0, 0 } } },
	{ "cmpxchg16b (%r8)", { 0x49, 0x0f, 0xc7, 0x08 }, 4, 0, 1,
	  { { 0x9000, 16, DEC_RMW, DEC_F_CAS, 0, 0 } } },
	{ "xchg %eax,(%rsi)", { 0x87, 0x06 }, 2, 0, 1,
	  { { 0x5000, 4, DEC_RMW, DEC_F_ATOMIC, 0, 0 } } },
	{ "lock xadd %eax,4(%rdi)", { 0xf0, 0x0f, 0xc1, 0x47, 0x04 }, 5, 0, 1,
	  { { 0x6004, 4, DEC_RMW, DEC_F_ATOMIC, 0, 0 } } },
	{ "addl $1,0x300(%rip) (read+write, not atomic)", { 0x83, 0x05, 0x00, 0x03, 0x00, 0x00, 0x01 }, 7, 0, 1,
	  { { AT + 7 + 0x300, 4, DEC_RMW, 0, 0, 0 } } },
	{ "cmpl $0,(%rax)", { 0x83, 0x38, 0x00 }, 3, 0, 1,
	  { { 0x1000, 4, DEC_READ, 0, 0, 0 } } },
	{ "movzbl 3(%rdi),%eax", { 0x0f, 0xb6, 0x47, 0x03 }, 4, 0, 1,
	  { { 0x6003, 1, DEC_READ, 0, 0, 0 } } },
	{ "mov (%r12),%r13", { 0x4d, 0x8b, 0x2c, 0x24 }, 4, 0, 1,
	  { { 0xa000, 8, DEC_READ, 0, 0, 0 } } },
	{ "movl $1,-4(%rbp)", { 0xc7, 0x45, 0xfc, 0x01, 0, 0, 0 }, 7, 0, 1,
	  { { 0x8000 - 4, 4, DEC_WRITE, 0, 0, 0 } } },
	{ "push %rbx (stack, no access)", { 0x53 }, 1, DEC_F_STACKOP, 0, { { 0 } } },
	{ "pop %rbx (stack, no access)", { 0x5b }, 1, DEC_F_STACKOP, 0, { { 0 } } },
	{ "push 0x10(%rax) (reads its operand)", { 0xff, 0x70, 0x10 }, 3, DEC_F_STACKOP, 1,
	  { { 0x1010, 8, DEC_READ, 0, 0, 0 } } },
	{ "call *0x8(%rax) (a branch)", { 0xff, 0x50, 0x08 }, 3, DEC_F_BRANCH | DEC_F_STACKOP, 1,
	  { { 0x1008, 8, DEC_READ, 0, 0, 0 } } },
	{ "lea 0x10(%rsp),%rdi (no access, frame address)", { 0x48, 0x8d, 0x7c, 0x24, 0x10 }, 5,
	  DEC_F_NOACCESS | DEC_F_FRAMEADDR, 0, { { 0 } } },
	{ "nopw (%rax,%rax,1)", { 0x66, 0x0f, 0x1f, 0x04, 0x00 }, 5, DEC_F_NOACCESS, 0, { { 0 } } },
	{ "mov %rsp,%rdi (frame address)", { 0x48, 0x89, 0xe7 }, 3, DEC_F_FRAMEADDR, 0, { { 0 } } },
	{ "mov %rsp,%rbp (frame pointer set-up)", { 0x48, 0x89, 0xe5 }, 3, DEC_F_FPSETUP, 0, { { 0 } } },
};

static struct user_regs_struct regs(void)
{
	struct user_regs_struct r;
	memset(&r, 0, sizeof r);
	r.rax = 0x1000; r.rbx = 0x2000; r.rcx = 3; r.rdx = 0x4000; r.rsi = 0x5000;
	r.rdi = 0x6000; r.rsp = 0x7ff0; r.rbp = 0x8000; r.r8 = 0x9000; r.r12 = 0xa000;
	r.rip = AT; r.fs_base = 0x70000;
	return r;
}

START_TEST(t_table)
{
	struct dec *d = dec_new();
	ck_assert_ptr_nonnull(d);
	struct user_regs_struct r = regs();
	const struct row *w = &rows[_i];
	struct dec_insn in;
	int n = dec_insn(d, w->code, w->len, AT, &in);
	ck_assert_msg(n == w->len, "%s: length %d, want %u", w->what, n, w->len);
	ck_assert_msg(in.flags == w->iflags, "%s (%s): flags 0x%x, want 0x%x", w->what, in.text,
		      in.flags, w->iflags);
	ck_assert_msg(in.nmem == w->nmem, "%s (%s): %u accesses, want %u", w->what, in.text,
		      in.nmem, w->nmem);
	for (unsigned k = 0; k < w->nmem; k++) {
		const struct dec_mem *m = &in.mem[k];
		const struct want *x = &w->m[k];
		ck_assert_msg(dec_ea(m, &r) == x->ea, "%s[%u]: address 0x%llx, want 0x%llx", w->what, k,
			      (unsigned long long)dec_ea(m, &r), (unsigned long long)x->ea);
		ck_assert_msg(m->size == x->size, "%s[%u]: size %u, want %u", w->what, k, m->size, x->size);
		ck_assert_msg(m->kind == x->kind, "%s[%u]: kind %u, want %u", w->what, k, m->kind, x->kind);
		ck_assert_msg(m->flags == x->flags, "%s[%u]: flags 0x%x, want 0x%x", w->what, k, m->flags,
			      x->flags);
		ck_assert_msg(m->seg == x->seg, "%s[%u]: segment %u, want %u", w->what, k, m->seg, x->seg);
		if (x->extent)
			ck_assert_msg(dec_extent(m, &r, 1 << 20) == x->extent, "%s[%u]: extent %llu, want %llu",
				      w->what, k, (unsigned long long)dec_extent(m, &r, 1 << 20),
				      (unsigned long long)x->extent);
	}
	dec_free(d);
}
END_TEST

START_TEST(t_frame_src)
{
	struct dec *d = dec_new();
	struct dec_insn in;
	static const uint8_t lea_rbp[] = { 0x48, 0x8d, 0x45, 0xe0 }; /* lea -0x20(%rbp),%rax */
	ck_assert_int_eq(dec_insn(d, lea_rbp, sizeof lea_rbp, AT, &in), 4);
	ck_assert(in.flags & DEC_F_FRAMEADDR);
	ck_assert_int_eq(in.frame_src, DEC_RBP);
	static const uint8_t lea_rax[] = { 0x48, 0x8d, 0x40, 0x08 }; /* lea 8(%rax),%rax */
	ck_assert_int_eq(dec_insn(d, lea_rax, sizeof lea_rax, AT, &in), 4);
	ck_assert(!(in.flags & DEC_F_FRAMEADDR));
	dec_free(d);
}
END_TEST

/* A store of a whole 64-bit register (the stack escape's test in
 * tracer/access.c): the register; any other instruction: none. */
START_TEST(t_store_src)
{
	struct dec *d = dec_new();
	struct dec_insn in;
	static const struct {
		uint8_t code[8];
		size_t len;
		int src;
	} c[] = {
		{ { 0x48, 0x89, 0x43, 0x10 }, 4, DEC_RAX },       /* mov %rax,0x10(%rbx) */
		{ { 0x4c, 0x89, 0x20 }, 3, DEC_R12 },             /* mov %r12,(%rax) */
		{ { 0x48, 0x89, 0x25, 0, 0, 0, 0 }, 7, DEC_RSP }, /* mov %rsp,0x0(%rip) */
		{ { 0x89, 0x03 }, 2, DEC_NOREG },                 /* mov %eax,(%rbx): 4 bytes */
		{ { 0x48, 0x8b, 0x03 }, 3, DEC_NOREG },           /* mov (%rbx),%rax: a load */
		{ { 0x48, 0xc7, 0x03, 1, 0, 0, 0 }, 7, DEC_NOREG }, /* movq $1,(%rbx) */
		{ { 0x48, 0x01, 0x03 }, 3, DEC_NOREG },           /* add %rax,(%rbx) */
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		ck_assert_int_eq(dec_insn(d, c[i].code, c[i].len, AT, &in), (int)c[i].len);
		ck_assert_int_eq(in.store_src, c[i].src);
	}
	dec_free(d);
}
END_TEST

START_TEST(t_bad_input)
{
	struct dec *d = dec_new();
	struct dec_insn in;


	static const uint8_t inval[] = { 0x06 };    /* push %es: invalid in 64-bit mode */
	ck_assert_int_eq(dec_insn(d, inval, sizeof inval, AT, &in), 0);
	static const uint8_t cut[] = { 0x8b, 0x05, 0x00 }; /* truncated */
	ck_assert_int_eq(dec_insn(d, cut, sizeof cut, AT, &in), 0);
	dec_free(d);
}
END_TEST

/* Branches: a direct one's target, an indirect jmp flagged (a jump table
 * may target anything), other branches neither. */
START_TEST(t_branch_targets)
{
	static const struct {
		const char *what;
		uint8_t code[8];
		uint8_t len;
		uint64_t target;
		bool indirect;
	} b[] = {
		{ "jmp .+0x10 (rel8)", { 0xeb, 0x0e }, 2, AT + 0x10, false },
		{ "jne .-0x20 (rel32)", { 0x0f, 0x85, 0xda, 0xff, 0xff, 0xff }, 6, AT - 0x20, false },
		{ "call .+0x100", { 0xe8, 0xfb, 0x00, 0x00, 0x00 }, 5, AT + 0x100, false },
		{ "loop .", { 0xe2, 0xfe }, 2, AT, false },
		{ "jmp *%rax", { 0xff, 0xe0 }, 2, 0, true },
		{ "jmp *0x10(,%rax,8)", { 0xff, 0x24, 0xc5, 0x10, 0x00, 0x00, 0x00 }, 7, 0, true },
		{ "notrack jmp *%rax", { 0x3e, 0xff, 0xe0 }, 3, 0, true },
		{ "call *%rax", { 0xff, 0xd0 }, 2, 0, false },
		{ "ret", { 0xc3 }, 1, 0, false },
		{ "mov (%rax),%eax", { 0x8b, 0x00 }, 2, 0, false },
	};
	struct dec *d = dec_new();
	struct dec_insn in;
	for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
		ck_assert_msg(dec_insn(d, b[i].code, b[i].len, AT, &in) == b[i].len, "%s", b[i].what);
		ck_assert_msg(in.target == b[i].target, "%s: target 0x%llx", b[i].what,
			      (unsigned long long)in.target);
		ck_assert_msg(!!(in.flags & DEC_F_INDIRECT) == b[i].indirect, "%s: flags 0x%x", b[i].what,
			      in.flags);
	}
	dec_free(d);
}
END_TEST

/* dec_cover: the instructions after a short one, up to a jmp's 5 bytes,
 * none a branch or a site, contiguous, at most 4 and at most max bytes. */
START_TEST(t_cover)
{
	static const uint8_t code[] = {
		0x8b, 0x00,             /*  0 mov (%rax),%eax       site */
		0x8d, 0x50, 0x01,       /*  2 lea 0x1(%rax),%edx        */
		0x89, 0x10,             /*  5 mov %edx,(%rax)       site */
		0x90,                   /*  7 nop                       */
		0x5d,                   /*  8 pop %rbp                  */
		0xc3,                   /*  9 ret                       */
		0x8b, 0x07,             /* 10 mov (%rdi),%eax       site */
		0x90, 0x90, 0x90,       /* 12 three nops                */
		0x8b, 0x06,             /* 15 mov (%rsi),%eax       site */
		0x48, 0x8b, 0x45, 0xf8, /* 17 mov -0x8(%rbp),%rax       */
	};
	struct dec *d = dec_new();
	struct dec_insn ins[16];
	bool site[16] = { 0 };
	size_t n = 0;
	for (size_t off = 0; off < sizeof code; n++) {
		int l = dec_insn(d, code + off, sizeof code - off, AT + off, &ins[n]);
		ck_assert_int_gt(l, 0);
		off += (size_t)l;
	}
	ck_assert_uint_eq(n, 12);
	site[0] = site[2] = site[6] = site[10] = true;
	ck_assert_uint_eq(dec_cover(ins, n, 0, site, 5, 17), 5);  /* with the lea */
	ck_assert_uint_eq(dec_cover(ins, n, 2, site, 5, 17), 0);  /* ret within reach */
	ck_assert_uint_eq(dec_cover(ins, n, 6, site, 5, 17), 5);  /* three nops: 4 instructions */
	ck_assert_uint_eq(dec_cover(ins, n, 6, site, 6, 17), 0);  /* a fifth is too many */
	ck_assert_uint_eq(dec_cover(ins, n, 10, site, 5, 17), 6); /* the load after it */
	ck_assert_uint_eq(dec_cover(ins, n, 10, site, 5, 5), 0);  /* longer than allowed */
	ck_assert_uint_eq(dec_cover(ins, n, 11, site, 5, 17), 0); /* nothing after the last */
	ck_assert_uint_eq(dec_cover(ins, n, 0, site, 2, 17), 2);  /* long enough alone */
	site[1] = true;
	ck_assert_uint_eq(dec_cover(ins, n, 0, site, 5, 17), 0);  /* the next is a site */
	dec_free(d);
}
END_TEST

/* What may jump into a cover: a target strictly inside, and the parts of
 * a function the compiler split off. */
START_TEST(t_cover_entered)
{
	static const uint64_t t[] = { 0x100, 0x1d3, 0x200, 0x205 };
	ck_assert(!dec_lands_inside(t, 4, 0x1d0, 3));  /* ends at 0x1d3: the next instruction */
	ck_assert(dec_lands_inside(t, 4, 0x1d0, 5));   /* jne 0x1d3 into the displaced test */
	ck_assert(!dec_lands_inside(t, 4, 0x200, 5));  /* a target at its start is fine */
	ck_assert(dec_lands_inside(t, 4, 0x1ff, 6));
	ck_assert(!dec_lands_inside(t, 4, 0x206, 8));  /* past every target */
	ck_assert(!dec_lands_inside(t, 0, 0x1d0, 5));
	ck_assert(dec_same_function("thief", "thief.cold"));
	ck_assert(dec_same_function("push.part.0", "push"));
	ck_assert(!dec_same_function("push", "pushall"));
	ck_assert(!dec_same_function("pop", "push.cold"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("decode");
	tcase_add_loop_test(tc, t_table, 0, (int)(sizeof rows / sizeof rows[0]));
	tcase_add_test(tc, t_frame_src);
	tcase_add_test(tc, t_store_src);
	tcase_add_test(tc, t_bad_input);
	tcase_add_test(tc, t_branch_targets);
	tcase_add_test(tc, t_cover);
	tcase_add_test(tc, t_cover_entered);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
