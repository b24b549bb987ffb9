/*
 * Unit tests of decode/gate.c: each gate is built into executable memory
 * and called from a harness, as a hooked function's entry is called: the
 * return address is the harness's, rdi the first argument.  Landing pads
 * say which way the gate went; rax, rcx and the flags must be the
 * caller's on either way.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "decode/gate.h"
#include "unit_util.h"

#define RAX_VAL 0x1111111111111111ull
#define RCX_VAL 0x2222222222222222ull

static uint8_t *mem;
static uint64_t after[4]; /* rax rcx flags path */

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

static void movabs(struct code *c, uint8_t rex, uint8_t op, uint64_t v)
{
	uint8_t o[2] = { rex, op };
	b(c, o, 2);
	b(c, (const uint8_t *)&v, 8);
}

/* The gate at mem, pads go (mem+256: path 1) and stop (mem+288: path 2),
 * the harness at mem+512; runs it with rdi = arg.  Returns the path. */
static int run(const struct gate_range *r, size_t n, bool null_passes, uint64_t arg)
{
	uint8_t *gate = mem, *go = mem + 256, *stop = mem + 288, *h = mem + 512;
	memset(mem, 0xcc, 4096);
	ck_assert_uint_gt(gate_encode(gate, (uint64_t)(uintptr_t)gate, r, n, null_passes,
				      (uint64_t)(uintptr_t)go, (uint64_t)(uintptr_t)stop), 0);
	/* pad: pushfq; pop %rdx; mov $path,%r8d; ret */
	static const uint8_t pgo[] = { 0x9c, 0x5a, 0x41, 0xb8, 1, 0, 0, 0, 0xc3 };
	static const uint8_t pstop[] = { 0x9c, 0x5a, 0x41, 0xb8, 2, 0, 0, 0, 0xc3 };
	memcpy(go, pgo, sizeof pgo);
	memcpy(stop, pstop, sizeof pstop);
	struct code c = { h, 0 };
	movabs(&c, 0x48, 0xb8, RAX_VAL); /* rax */
	movabs(&c, 0x48, 0xb9, RCX_VAL); /* rcx */
	B(&c, 0xf9);                     /* stc */
	int32_t rel = (int32_t)(gate - (h + c.n + 5));
	B(&c, 0xe8);
	b(&c, (const uint8_t *)&rel, 4); /* call gate */
	movabs(&c, 0x49, 0xbb, (uint64_t)(uintptr_t)after); /* r11 */
	B(&c, 0x49, 0x89, 0x03);         /* mov %rax,(%r11) */
	B(&c, 0x49, 0x89, 0x4b, 0x08);   /* mov %rcx,8(%r11) */
	B(&c, 0x49, 0x89, 0x53, 0x10);   /* mov %rdx,16(%r11) */
	B(&c, 0x4d, 0x89, 0x43, 0x18);   /* mov %r8,24(%r11) */
	B(&c, 0xc3);
	memset(after, 0, sizeof after);
	void (*fn)(uint64_t) = (void (*)(uint64_t))(uintptr_t)h;
	fn(arg);
	ck_assert_uint_eq(after[0], RAX_VAL);
	ck_assert_uint_eq(after[1], RCX_VAL);
	ck_assert_uint_eq(after[2] & 1, 1); /* CF survived */
	return (int)after[3];
}

/* a range holding the harness's return address, and ones that do not */
static struct gate_range here(void)
{
	return (struct gate_range){ (uint64_t)(uintptr_t)mem + 512, (uint64_t)(uintptr_t)mem + 4096 };
}

START_TEST(t_caller_in_range_passes)
{
	struct gate_range r[2] = { { 0x1000, 0x2000 }, here() };
	ck_assert_int_eq(run(r, 2, false, 5), 1);
	ck_assert_int_eq(run(r + 1, 1, false, 5), 1);
}
END_TEST

START_TEST(t_caller_elsewhere_stops)
{
	uint64_t m = (uint64_t)(uintptr_t)mem;
	/* just below and just above the return address (harness + 26: two movabs, stc, call) */
	struct gate_range r[2] = { { m + 512, m + 512 + 26 }, { m + 512 + 27, m + 4096 } };
	ck_assert_int_eq(run(r, 2, false, 5), 2);
	ck_assert_int_eq(run(r, 0, false, 5), 2);
	/* the return address itself is in [lo, lo + 1) */
	struct gate_range one = { m + 512 + 26, m + 512 + 27 };
	ck_assert_int_eq(run(&one, 1, false, 5), 1);
}
END_TEST

START_TEST(t_null_argument)
{
	struct gate_range r = { 0x1000, 0x2000 };
	ck_assert_int_eq(run(&r, 1, true, 0), 1);
	ck_assert_int_eq(run(&r, 1, true, 8), 2);
	ck_assert_int_eq(run(&r, 1, false, 0), 2);
}
END_TEST

START_TEST(t_refused)
{
	uint8_t out[GATE_SIZE];
	struct gate_range r[GATE_MAX_RANGES + 1] = { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 }, { 9, 10 } };
	ck_assert_uint_eq(gate_encode(out, 0x10000, r, GATE_MAX_RANGES + 1, true, 0x10100, 0x10200), 0);
	ck_assert_uint_le(gate_encode(out, 0x10000, r, GATE_MAX_RANGES, true, 0x10100, 0x10200), GATE_SIZE);
	struct gate_range empty = { 5, 5 };
	ck_assert_uint_eq(gate_encode(out, 0x10000, &empty, 1, false, 0x10100, 0x10200), 0);
	/* a target beyond rel32 */
	ck_assert_uint_eq(gate_encode(out, 0x10000, r, 1, false, 0x10000 + (1ull << 33), 0x10200), 0);
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
	Suite *s = suite_create("gate");
	TCase *tc = tcase_create("gate");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_caller_in_range_passes);
	tcase_add_test(tc, t_caller_elsewhere_stops);
	tcase_add_test(tc, t_null_argument);
	tcase_add_test(tc, t_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
