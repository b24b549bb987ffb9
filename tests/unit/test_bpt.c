/*
 * Breakpoint table and out-of-line relocation.  The table works on any
 * address space through process_vm_readv and /proc/PID/mem, so these tests
 * point it at their own memory: no ptrace needed.
 */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/bpt.h"
#include "unit_util.h"

/* "code" and "scratch" live in data: only their bytes matter here */
static uint8_t code[4096] __attribute__((aligned(64)));
static uint8_t scratch[BPT_SCRATCH_SIZE] __attribute__((aligned(64)));

static int relocate(const uint8_t *insn, size_t len, uint64_t from, uint64_t slot,
		    uint8_t *out, size_t *outlen, char *why)
{
	uint8_t buf[16] = { 0 };
	memcpy(buf, insn, len);
	return bpt_relocate(buf, sizeof buf, from, slot, out, outlen, why, 128);
}

START_TEST(relocate_glibc_entries)
{
	/* first instructions of hooked glibc functions (PTRACE-NOTES) */
	static const struct { uint8_t b[8]; size_t len; } cases[] = {
		{ { 0x8b, 0x47, 0x10 }, 3 },                   /* mov 0x10(%rdi),%eax */
		{ { 0xbe, 0x01, 0x00, 0x00, 0x00 }, 5 },       /* mov $1,%esi */
		{ { 0x41, 0x57 }, 2 },                         /* push %r15 */
		{ { 0xf0, 0xff, 0x0f }, 3 },                   /* lock decl (%rdi) */
		{ { 0x48, 0x83, 0xec, 0x08 }, 4 },             /* sub $8,%rsp */
		{ { 0x53 }, 1 },                               /* push %rbx */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t out[BPT_SLOT_SIZE];
		size_t outlen = 0;
		char why[128] = "";
		int n = relocate(cases[i].b, cases[i].len, 0x1000, 0x2000, out, &outlen, why);
		ck_assert_msg(n == (int)cases[i].len, "case %zu: %d (%s)", i, n, why);
		ck_assert_mem_eq(out, cases[i].b, cases[i].len);
		/* then jmp *0(%rip) to the instruction after the original */
		ck_assert_uint_eq(out[n], 0xff);
		ck_assert_uint_eq(out[n + 1], 0x25);
		uint64_t back;
		memcpy(&back, out + n + 6, 8);
		ck_assert_uint_eq(back, 0x1000 + cases[i].len);
		ck_assert_uint_eq(outlen, cases[i].len + 14);
	}
}
END_TEST

START_TEST(relocate_rip_relative)
{
	/* mov 0x100(%rip),%r8: the slot must still name from+7+0x100 */
	static const uint8_t insn[] = { 0x4c, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00 };
	uint8_t out[BPT_SLOT_SIZE];
	size_t outlen;
	char why[128];
	uint64_t from = 0x400000, slot = 0x500000;
	ck_assert_int_eq(relocate(insn, sizeof insn, from, slot, out, &outlen, why), 7);
	int32_t disp;
	memcpy(&disp, out + 3, 4);
	ck_assert_int_eq((int64_t)slot + 7 + disp, (int64_t)from + 7 + 0x100);
	/* too far away to reach with 32 bits: refused, with a reason */
	ck_assert_int_eq(relocate(insn, sizeof insn, 0x400000, 0x7f0000000000ull, out, &outlen, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "rip-relative"));
}
END_TEST

START_TEST(relocate_refuses_branches)
{
	static const struct { uint8_t b[8]; size_t len; } cases[] = {
		{ { 0xe8, 0, 0, 0, 0 }, 5 },   /* call rel32 */
		{ { 0xeb, 0x05 }, 2 },         /* jmp rel8 */
		{ { 0x74, 0x05 }, 2 },         /* je rel8 */
		{ { 0xc3 }, 1 },               /* ret */
		{ { 0xcd, 0x80 }, 2 },         /* int $0x80 */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t out[BPT_SLOT_SIZE];
		size_t outlen;
		char why[128] = "";
		ck_assert_msg(relocate(cases[i].b, cases[i].len, 0x1000, 0x2000, out, &outlen, why) == -1,
			      "case %zu relocated", i);
		ck_assert_msg(why[0], "case %zu: no reason", i);
	}
}
END_TEST

static int self_mem(void)
{
	int fd = open("/proc/self/mem", O_RDWR);
	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(table_insert_find_remove)
{
	struct bpt_table bt;
	int fd = self_mem();
	static const uint8_t mov[] = { 0x8b, 0x47, 0x10, 0x90, 0x90, 0x90 };
	memcpy(code, mov, sizeof mov);
	code[100] = 0x90; /* a probe's nop */
	bpt_init(&bt, getpid(), fd, (uint64_t)(uintptr_t)scratch);
	char why[128];
	uint64_t a = (uint64_t)(uintptr_t)code;
	ck_assert_int_eq(bpt_insert(&bt, a, 1, 7, why, sizeof why), 0);
	ck_assert_uint_eq(code[0], 0xcc);
	struct bpt *b = bpt_find(&bt, a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(b->kind, 1);
	ck_assert_int_eq(b->data, 7);
	ck_assert_uint_eq(b->len, 3);
	ck_assert_uint_eq(bpt_resume_pc(b), (uint64_t)(uintptr_t)scratch + 16);
	ck_assert_mem_eq(scratch + 16, mov, 3);
	/* reads show the original bytes, not the int3 */
	uint8_t orig[6];
	ck_assert_int_eq(bpt_read_orig(&bt, a, orig, sizeof orig), 0);
	ck_assert_mem_eq(orig, mov, sizeof mov);
	/* a second breakpoint at the same address is refused */
	ck_assert_int_eq(bpt_insert(&bt, a, 1, 8, why, sizeof why), -1);
	/* nop probe: no slot, resume right after it */
	ck_assert_int_eq(bpt_insert_nop(&bt, a + 100, 2, 0), 0);
	ck_assert_uint_eq(bpt_resume_pc(bpt_find(&bt, a + 100)), a + 101);
	/* not a nop: refused and untouched */
	code[200] = 0x55;
	ck_assert_int_eq(bpt_insert_nop(&bt, a + 200, 2, 0), -1);
	ck_assert_uint_eq(code[200], 0x55);
	ck_assert_ptr_null(bpt_find(&bt, a + 200));
	ck_assert_int_eq(bpt_remove(&bt, a), 0);
	ck_assert_uint_eq(code[0], 0x8b);
	ck_assert_ptr_null(bpt_find(&bt, a));
	ck_assert_ptr_nonnull(bpt_find(&bt, a + 100));
	bpt_release(&bt);
	close(fd);
}
END_TEST

START_TEST(table_grows)
{
	struct bpt_table bt;
	int fd = self_mem();
	memset(code, 0x90, sizeof code);
	bpt_init(&bt, getpid(), fd, (uint64_t)(uintptr_t)scratch);
	uint64_t a = (uint64_t)(uintptr_t)code;
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(bpt_insert_nop(&bt, a + (uint64_t)i, 3, i), 0);
	for (int i = 0; i < 1000; i++) {
		struct bpt *b = bpt_find(&bt, a + (uint64_t)i);
		ck_assert_ptr_nonnull(b);
		ck_assert_int_eq(b->data, i);
	}
	for (int i = 0; i < 1000; i += 2)
		ck_assert_int_eq(bpt_remove(&bt, a + (uint64_t)i), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert((bpt_find(&bt, a + (uint64_t)i) != NULL) == (i % 2 == 1));
	/* the restore-all used for forked children puts every byte back */
	int fd2 = self_mem();
	ck_assert_int_eq(bpt_restore_all(&bt, fd2), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_eq(code[i], 0x90);
	close(fd2);
	bpt_release(&bt);
	close(fd);
}
END_TEST

START_TEST(table_jump_form)
{
	struct bpt_table bt;
	int fd = self_mem();
	/* mov 0x100(%rip),%r8 (7 bytes); lock cmpxchg %ecx,(%rdx) (4: too
	 * short anyway); lock-prefixed 5-byte add; mov 0x10(%rdi),%eax (3) */
	static const uint8_t mov7[] = { 0x4c, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00 };
	static const uint8_t lockadd[] = { 0xf0, 0x48, 0x83, 0x07, 0x01 };
	static const uint8_t mov3[] = { 0x8b, 0x47, 0x10 };
	memset(code, 0x90, sizeof code);
	memset(scratch, 0, sizeof scratch);
	memcpy(code, mov7, sizeof mov7);
	memcpy(code + 64, lockadd, sizeof lockadd);
	memcpy(code + 128, mov3, sizeof mov3);
	bpt_init(&bt, getpid(), fd, (uint64_t)(uintptr_t)scratch);
	char why[128];
	uint64_t a = (uint64_t)(uintptr_t)code;
	uint64_t s0 = (uint64_t)(uintptr_t)scratch + 64;
	ck_assert_int_eq(bpt_insert_jump_at(&bt, a, 1, 7, s0, why, sizeof why), 0);
	/* the site is a jmp rel32 to the slot, the rest of it untouched */
	ck_assert_uint_eq(code[0], 0xe9);
	int32_t rel;
	memcpy(&rel, code + 1, 4);
	ck_assert_uint_eq(a + 5 + (uint64_t)(int64_t)rel, s0);
	ck_assert_mem_eq(code + 5, mov7 + 5, 2);
	/* the slot: int3, the copy re-aimed to run at slot + 1, jmp back */
	ck_assert_uint_eq(scratch[64], 0xcc);
	int32_t disp;
	memcpy(&disp, scratch + 64 + 1 + 3, 4);
	ck_assert_int_eq((int64_t)s0 + 1 + 7 + disp, (int64_t)a + 7 + 0x100);
	ck_assert_uint_eq(scratch[64 + 8], 0xff);
	uint64_t back;
	memcpy(&back, scratch + 64 + 8 + 6, 8);
	ck_assert_uint_eq(back, a + 7);
	struct bpt *b = bpt_find(&bt, a);
	ck_assert_ptr_nonnull(b);
	ck_assert(b->jump);
	ck_assert_uint_eq(b->len, 7);
	/* the stop is at the slot: found by its trap, resumed in place */
	ck_assert_ptr_eq(bpt_at_trap(&bt, s0), b);
	ck_assert_ptr_null(bpt_at_trap(&bt, a));
	ck_assert_uint_eq(bpt_resume_pc(b), s0 + 1);
	uint8_t orig[8];
	ck_assert_int_eq(bpt_read_orig(&bt, a, orig, 7), 0);
	ck_assert_mem_eq(orig, mov7, 7);
	ck_assert_int_eq(bpt_read_orig(&bt, a + 2, orig, 3), 0);
	ck_assert_mem_eq(orig, mov7 + 2, 3);
	/* lock prefix (code may jump past it) and short: the int3 form */
	ck_assert_int_eq(bpt_insert_jump_at(&bt, a + 64, 1, 8, s0 + 32, why, sizeof why), 0);
	ck_assert_uint_eq(code[64], 0xcc);
	ck_assert(!bpt_find(&bt, a + 64)->jump);
	ck_assert_ptr_eq(bpt_at_trap(&bt, a + 64), bpt_find(&bt, a + 64));
	ck_assert_uint_eq(bpt_resume_pc(bpt_find(&bt, a + 64)), s0 + 32);
	ck_assert_int_eq(bpt_insert_jump_at(&bt, a + 128, 1, 9, s0 + 64, why, sizeof why), 0);
	ck_assert_uint_eq(code[128], 0xcc);
	ck_assert(!bpt_find(&bt, a + 128)->jump);
	/* a forked child gets every byte back */
	int fd2 = self_mem();
	ck_assert_int_eq(bpt_restore_all(&bt, fd2), 0);
	ck_assert_mem_eq(code, mov7, sizeof mov7);
	ck_assert_mem_eq(code + 64, lockadd, sizeof lockadd);
	close(fd2);
	/* replant, then remove: the code is back and the slot's int3 is a
	 * nop, for a thread that stands before it */
	memcpy(code, (uint8_t[]){ 0xe9 }, 1);
	memcpy(code + 1, &rel, 4);
	ck_assert_int_eq(bpt_remove(&bt, a), 0);
	ck_assert_mem_eq(code, mov7, sizeof mov7);
	ck_assert_uint_eq(scratch[64], 0x90);
	ck_assert_ptr_null(bpt_at_trap(&bt, s0));
	/* a thread that trapped on it before the removal and was not seen
	 * yet: it goes on with the slot's copy; one trapped on a removed
	 * plain int3 goes back to the restored instruction */
	uint64_t again = 0;
	ck_assert(bpt_retired(&bt, s0, &again));
	ck_assert_uint_eq(again, s0 + 1);
	ck_assert_int_eq(bpt_remove(&bt, a + 128), 0);
	ck_assert_uint_eq(code[128], mov3[0]);
	ck_assert(bpt_retired(&bt, a + 128, &again));
	ck_assert_uint_eq(again, a + 128);
	ck_assert(!bpt_retired(&bt, a + 64, &again)); /* still planted */
	ck_assert(!bpt_retired(&bt, a + 1, &again));
	bpt_release(&bt);
	close(fd);
}
END_TEST

START_TEST(table_entry_jump_form)
{
	struct bpt_table bt;
	int fd = self_mem();
	/* push %r15; push %r14; mov $2,%r14d; pop %r14; pop %r15; ret */
	static const uint8_t fn[] = { 0x41, 0x57, 0x41, 0x56, 0x41, 0xbe, 0x02, 0x00, 0x00, 0x00,
				      0x41, 0x5e, 0x41, 0x5f, 0xc3 };
	/* the same with a loop back to its second instruction: jne -> +2 */
	static const uint8_t loop[] = { 0x41, 0x57, 0x41, 0x56, 0x41, 0xbe, 0x02, 0x00, 0x00, 0x00,
					0x75, 0xf6, 0x41, 0x5e, 0x41, 0x5f, 0xc3 };
	/* ... and with an indirect jump (a jump table) */
	static const uint8_t table[] = { 0x41, 0x57, 0x41, 0x56, 0x41, 0xbe, 0x02, 0x00, 0x00, 0x00,
					 0xff, 0xe0, 0x41, 0x5f, 0xc3 };
	memset(code, 0x90, sizeof code);
	memset(scratch, 0, sizeof scratch);
	memcpy(code, fn, sizeof fn);
	memcpy(code + 256, loop, sizeof loop);
	memcpy(code + 512, table, sizeof table);
	bpt_init(&bt, getpid(), fd, (uint64_t)(uintptr_t)scratch);
	char why[128];
	uint64_t a = (uint64_t)(uintptr_t)code;
	uint64_t s0 = (uint64_t)(uintptr_t)scratch + 16; /* the first slot */
	ck_assert_int_eq(bpt_insert_entry(&bt, a, sizeof fn, 1, 7, why, sizeof why), 0);
	struct bpt *b = bpt_find(&bt, a);
	ck_assert(b->jump);
	ck_assert_uint_eq(b->len, 10); /* three instructions: 2 + 2 + 6 */
	ck_assert_uint_eq(code[0], 0xe9);
	ck_assert_uint_eq(scratch[16], 0xcc);
	ck_assert_mem_eq(scratch + 17, fn, 10);
	ck_assert_uint_eq(scratch[27], 0xff); /* jmp *0(%rip) ... */
	uint64_t back;
	memcpy(&back, scratch + 27 + 6, 8);
	ck_assert_uint_eq(back, a + 10);
	ck_assert_ptr_eq(bpt_at_trap(&bt, s0), b);
	/* something jumps to the second instruction: the plain int3 */
	ck_assert_int_eq(bpt_insert_entry(&bt, a + 256, sizeof loop, 1, 8, why, sizeof why), 0);
	ck_assert(!bpt_find(&bt, a + 256)->jump);
	ck_assert_uint_eq(code[256], 0xcc);
	ck_assert_mem_eq(code + 257, loop + 1, sizeof loop - 1);
	/* a jump table could: the plain int3 */
	ck_assert_int_eq(bpt_insert_entry(&bt, a + 512, sizeof table, 1, 9, why, sizeof why), 0);
	ck_assert(!bpt_find(&bt, a + 512)->jump);
	ck_assert_uint_eq(code[512], 0xcc);
	/* removal puts the five bytes back */
	ck_assert_int_eq(bpt_remove(&bt, a), 0);
	ck_assert_mem_eq(code, fn, sizeof fn);
	bpt_release(&bt);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bpt");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, relocate_glibc_entries);
	tcase_add_test(tc, relocate_rip_relative);
	tcase_add_test(tc, relocate_refuses_branches);
	tcase_add_test(tc, table_insert_find_remove);
	tcase_add_test(tc, table_grows);
	tcase_add_test(tc, table_jump_form);
	tcase_add_test(tc, table_entry_jump_form);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
