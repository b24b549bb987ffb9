/*
 * Unit tests of decode/stub.c: each stub is built into executable memory
 * and run, from a harness that gives the registers known values and calls
 * the stub as if it were the instrumented instruction.  The agent's entry
 * is a C function here that records what it was given.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "decode/stub.h"
#include "unit_util.h"

#define B_VAL 0x10000ull       /* rbx */
#define I_VAL 0x30ull          /* r12 */
#define C_VAL 0x7000000ull     /* r13 */
#define V_VAL 0x1111111111111100ull /* rax, then rcx..r11 = V_VAL + 1.. */

static uint32_t got_index;
static uint64_t got_ea, got_rsp, got_value;
static int entry_rv;
static uint64_t before_rsp;    /* the harness's rsp just before its call */
static uint64_t after[12];     /* rax rcx rdx rsi rdi r8 r9 r10 r11 flags path(r15) */

static int entry(uint32_t index, uint64_t ea, uint64_t rsp, uint64_t value)
{
	got_index = index;
	got_ea = ea;
	got_rsp = rsp;
	got_value = value;
	return entry_rv;
}

struct code {
	uint8_t *p;
	size_t n;
};

static void b(struct code *c, const uint8_t *v, size_t n)
{
	memcpy(c->p + c->n, v, n);
	c->n += n;
}

#define B(c, ...) do { static const uint8_t x_[] = { __VA_ARGS__ }; b(c, x_, sizeof x_); } while (0)

static void movabs(struct code *c, int reg, uint64_t v)
{
	uint8_t op[2] = { (uint8_t)(0x48 | (reg >= 8)), (uint8_t)(0xb8 + (reg & 7)) };
	b(c, op, 2);
	b(c, (const uint8_t *)&v, 8);
}

/* mov %reg, disp8(%r14) */
static void store(struct code *c, int reg, uint8_t disp)
{
	uint8_t op[4] = { (uint8_t)(0x49 | (reg >= 8 ? 4 : 0)), 0x89,
			  (uint8_t)(0x40 | (reg & 7) << 3 | 6), disp };
	b(c, op, 4);
}

static uint8_t *mem;

/* Builds the stub for in at mem, the two landing pads (fast: r15 = 1,
 * slow: r15 = 2, then ret) and the harness, and runs it. */
static void run(const struct dec_insn *in, int rv)
{
	uint8_t *stub = mem, *fast = mem + 256, *slow = mem + 272;
	ck_assert_uint_gt(stub_encode(stub, (uint64_t)(uintptr_t)stub, in, 42,
				      (uint64_t)(uintptr_t)entry, (uint64_t)(uintptr_t)fast,
				      (uint64_t)(uintptr_t)slow), 0);
	static const uint8_t f[] = { 0x41, 0xbf, 1, 0, 0, 0, 0xc3 };
	static const uint8_t s[] = { 0x41, 0xbf, 2, 0, 0, 0, 0xc3 };
	memcpy(fast, f, sizeof f);
	memcpy(slow, s, sizeof s);
	struct code h = { mem + 512, 0 };
	B(&h, 0x53, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57); /* push rbx r12..r15 */
	movabs(&h, 14, (uint64_t)(uintptr_t)&before_rsp);
	B(&h, 0x49, 0x89, 0x26);                                      /* mov %rsp,(%r14) */
	movabs(&h, 3, B_VAL);
	movabs(&h, 12, I_VAL);
	movabs(&h, 13, C_VAL);
	static const int saved[9] = { 0, 1, 2, 6, 7, 8, 9, 10, 11 };
	for (int i = 0; i < 9; i++)
		movabs(&h, saved[i], V_VAL + (uint64_t)i);
	B(&h, 0x4d, 0x31, 0xff);                                      /* xor %r15,%r15 */
	B(&h, 0xf9);                                                  /* stc */
	int32_t rel = (int32_t)(stub - (mem + 512 + h.n + 5));
	B(&h, 0xe8);
	b(&h, (const uint8_t *)&rel, 4);                              /* call stub */
	B(&h, 0x9c);                                                  /* pushfq */
	B(&h, 0x41, 0x56);                                            /* push %r14 */
	movabs(&h, 14, (uint64_t)(uintptr_t)after);
	for (int i = 0; i < 9; i++)
		store(&h, saved[i], (uint8_t)(8 * i));
	B(&h, 0x41, 0x5e);                                            /* pop %r14 */
	B(&h, 0x58);                                                  /* pop %rax: flags */
	movabs(&h, 14, (uint64_t)(uintptr_t)after);
	store(&h, 0, 72);
	store(&h, 15, 80);
	B(&h, 0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5b, 0xc3);
	entry_rv = rv;
	got_ea = got_rsp = got_value = 0;
	got_index = 0;
	void (*fn)(void) = (void (*)(void))(uintptr_t)(mem + 512);
	fn();
	/* the stub's view of rsp: the harness's, less the return address */
	ck_assert_uint_eq(got_rsp, before_rsp - 8);
	ck_assert_uint_eq(got_index, 42);
	for (int i = 0; i < 9; i++)
		ck_assert_uint_eq(after[i], V_VAL + (uint64_t)i);
	ck_assert_uint_eq(after[9] & 1, 1);  /* CF survived */
	ck_assert_uint_eq(after[10], rv ? 2 : 1);
}

static struct dec_insn mem_access(int8_t base, int8_t index, uint8_t scale, int64_t disp)
{
	struct dec_insn in;
	memset(&in, 0, sizeof in);
	in.nmem = 1;
	in.len = 7;
	in.mem[0] = (struct dec_mem){ .base = base, .index = index, .scale = scale, .disp = disp,
				      .size = 4, .kind = DEC_WRITE };
	in.store_src = DEC_NOREG;
	return in;
}

/* A store of a 64-bit register: the entry is given the value it stores
 * (the stack escape's test, tracer/access.c), the operand's address
 * still from the program's registers. */
START_TEST(t_store_value)
{
	static const struct {
		int8_t src;
		uint64_t want; /* 0: before_rsp - 8 */
	} c[] = {
		{ DEC_R12, I_VAL }, { DEC_RBX, B_VAL }, { DEC_RAX, V_VAL }, { DEC_RCX, V_VAL + 1 },
		{ DEC_RSI, V_VAL + 3 }, { DEC_R8, V_VAL + 5 }, { DEC_R11, V_VAL + 8 }, { DEC_RSP, 0 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		/* based on rcx and indexed by rsi: both read before rcx is set */
		struct dec_insn in = mem_access(DEC_RCX, DEC_RSI, 1, 16);
		in.mem[0].size = 8;
		in.store_src = c[i].src;
		run(&in, (int)(i & 1));
		ck_assert_uint_eq(got_ea, (V_VAL + 1) + (V_VAL + 3) + 16);
		ck_assert_uint_eq(got_value, c[i].want ? c[i].want : before_rsp - 8);
	}
}
END_TEST

START_TEST(t_base_index)
{
	struct dec_insn in = mem_access(DEC_RBX, DEC_R12, 4, -8);
	run(&in, 0);
	ck_assert_uint_eq(got_ea, B_VAL + 4 * I_VAL - 8);
	run(&in, 1);
	ck_assert_uint_eq(got_ea, B_VAL + 4 * I_VAL - 8);
}
END_TEST

START_TEST(t_r13_base_no_index)
{
	struct dec_insn in = mem_access(DEC_R13, DEC_NOREG, 1, 0);
	run(&in, 0);
	ck_assert_uint_eq(got_ea, C_VAL);
}
END_TEST

START_TEST(t_no_base)
{
	struct dec_insn in = mem_access(DEC_NOREG, DEC_R12, 8, 0x1000);
	run(&in, 0);
	ck_assert_uint_eq(got_ea, 8 * I_VAL + 0x1000);
}
END_TEST

START_TEST(t_rsp_based)
{
	struct dec_insn in = mem_access(DEC_RSP, DEC_NOREG, 1, 24);
	run(&in, 1);
	ck_assert_uint_eq(got_ea, before_rsp - 8 + 24);
}
END_TEST

START_TEST(t_rip_relative)
{
	struct dec_insn in = mem_access(DEC_RIP, DEC_NOREG, 1, 0x20);
	in.mem[0].rip_target = 0x123456789abcull;
	run(&in, 0);
	ck_assert_uint_eq(got_ea, 0x123456789abcull);
}
END_TEST

START_TEST(t_unsupported)
{
	uint8_t out[STUB_SIZE];
	struct dec_insn in = mem_access(DEC_RBX, DEC_NOREG, 1, 0);
	in.mem[0].seg = DEC_SEG_FS;
	ck_assert(!stub_supported(&in));
	in = mem_access(DEC_RBX, DEC_NOREG, 1, 0);
	in.mem[0].flags = DEC_F_CAS;
	ck_assert(!stub_supported(&in));
	in = mem_access(DEC_RSI, DEC_NOREG, 1, 0);
	in.mem[0].flags = DEC_F_REP | DEC_F_STRING;
	ck_assert(!stub_supported(&in));
	in = mem_access(DEC_RBX, DEC_NOREG, 1, 0);
	in.nmem = 2;
	ck_assert(!stub_supported(&in));
	/* a landing pad out of rel32 reach */
	in = mem_access(DEC_RBX, DEC_NOREG, 1, 0);
	ck_assert_uint_eq(stub_encode(out, 0x1000, &in, 0, 0, 0x1000 + (1ull << 33), 0x1000), 0);
	ck_assert_uint_le(stub_encode(out, 0x1000, &in, 0, 0, 0x2000, 0x3000), STUB_SIZE);
}
END_TEST

static void setup(void)
{
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mem != MAP_FAILED);
}

static void teardown(void)
{
	munmap(mem, 4096);
}

static Suite *suite(void)
{
	Suite *s = suite_create("stub");
	TCase *tc = tcase_create("stub");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_base_index);
	tcase_add_test(tc, t_r13_base_no_index);
	tcase_add_test(tc, t_no_base);
	tcase_add_test(tc, t_rsp_based);
	tcase_add_test(tc, t_rip_relative);
	tcase_add_test(tc, t_unsupported);
	tcase_add_test(tc, t_store_value);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
