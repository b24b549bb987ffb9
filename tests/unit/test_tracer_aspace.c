/*
 * The address space's copy at fork (tracer/aspace.c): the child gets its
 * own breakpoints (same int3s, same slots, its pid and memory), modules,
 * hooks and probes; changing one side leaves the other as it was.  The
 * breakpoint table works on this process's own memory (as in test_bpt):
 * no ptrace.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/tracer_int.h"
#include "unit_util.h"

static uint8_t code[4096] __attribute__((aligned(64)));
static uint8_t scratch[BPT_SCRATCH_SIZE] __attribute__((aligned(64)));

START_TEST(copy_at_fork)
{
	int fd = open("/proc/self/mem", O_RDWR);
	ck_assert_int_ge(fd, 0);
	memset(code, 0x90, sizeof code);
	struct aspace a, c;
	aspace_init(&a);
	bpt_init(&a.bpts, getpid(), fd, (uint64_t)(uintptr_t)scratch);
	uint64_t at = (uint64_t)(uintptr_t)code;
	char why[128];
	for (int i = 0; i < 40; i++) /* enough to grow the table */
		ck_assert_int_eq(bpt_insert(&a.bpts, at + 16 * (uint64_t)i, BK_HOOK, i, why, sizeof why), 0);
	a.mods.m = calloc(1, sizeof *a.mods.m);
	a.mods.m[0].path = strdup("/lib/libc.so.6");
	a.mods.m[0].id = 3;
	a.mods.n = 1;
	a.next_mod_id = 4;
	a.scratch = a.tramp = (uint64_t)(uintptr_t)scratch;
	a.hook_addr[2] = at;
	a.probes = calloc(2, sizeof *a.probes);
	a.probes[1].pc = at + 7;
	a.nprobes = 2;

	ck_assert_int_eq(aspace_copy(&c, &a, 4242, 77), 0);
	ck_assert_int_eq(c.bpts.pid, 4242);
	ck_assert_int_eq(c.bpts.memfd, 77);
	ck_assert_uint_eq(c.bpts.n, a.bpts.n);
	for (int i = 0; i < 40; i++) {
		struct bpt *p = bpt_find(&a.bpts, at + 16 * (uint64_t)i);
		struct bpt *q = bpt_find(&c.bpts, at + 16 * (uint64_t)i);
		ck_assert_ptr_nonnull(q);
		ck_assert_ptr_ne(p, q); /* its own table */
		ck_assert_uint_eq(q->slot, p->slot);
		ck_assert_int_eq(q->data, i);
		ck_assert_ptr_eq(bpt_at_trap(&c.bpts, q->trap), q);
	}
	ck_assert_uint_eq(c.mods.n, 1);
	ck_assert_ptr_ne(c.mods.m[0].path, a.mods.m[0].path);
	ck_assert_str_eq(c.mods.m[0].path, "/lib/libc.so.6");
	ck_assert_int_eq(c.mods.m[0].id, 3);
	ck_assert_uint_eq(c.next_mod_id, 4);
	ck_assert_uint_eq(c.tramp, a.tramp);
	ck_assert_uint_eq(c.hook_addr[2], at);
	ck_assert_uint_eq(c.nprobes, 2);
	ck_assert_uint_eq(c.probes[1].pc, at + 7);
	ck_assert_ptr_null(c.acc);
	ck_assert_ptr_null(c.cfi);

	/* the parent removes one: the child keeps it */
	ck_assert_int_eq(bpt_remove(&a.bpts, at), 0);
	ck_assert_ptr_null(bpt_find(&a.bpts, at));
	ck_assert_ptr_nonnull(bpt_find(&c.bpts, at));
	a.probes[1].pc = 0;
	ck_assert_uint_eq(c.probes[1].pc, at + 7);

	aspace_release(&c);
	ck_assert_ptr_null(c.probes);
	ck_assert_uint_eq(c.mods.n, 0);
	aspace_release(&a);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracer_aspace");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, copy_at_fork);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
