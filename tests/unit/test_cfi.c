/*
 * The call-frame walker (tracer/cfi.c) on a live process: the fixture
 * tests/unit/fixtures/cfi_fix.c, built -O2 -fomit-frame-pointer, stops at
 * an int3 in inner() with a data pointer in rbp.  The walk must find
 * inner <- middle <- outer <- main by the CFI, give return-address slots
 * that hold the caller's pc (never rbp+8, the data a frame-pointer walk
 * would overwrite), follow slots the tracer swapped, and stop where a
 * module has no CFI.  Needs ptrace: skipped with a reason without it.
 */
#include <check.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/cfi.h"
#include "tracer/elfmod.h"
#include "tracer/ptrace_util.h"
#include "unit_util.h"

static char bin[PATH_MAX];

struct live {
	pid_t pid;
	int memfd;
	struct modmap mods;
	struct cfi_cache *cache;
	struct user_regs_struct regs;
	uint64_t func_lo[4], func_hi[4]; /* inner, middle, outer, main */
	uint64_t refuse_from;            /* find() refuses pcs >= this (0: never) */
	uint64_t swapped_slot[8], swapped_real[8];
	int nswapped;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct live *l = ctx;
	return ptu_read(l->pid, addr, buf, len);
}

static void *find(void *ctx, uint64_t pc, uint64_t *bias)
{
	struct live *l = ctx;
	struct elfmod *m = modmap_find(&l->mods, pc);
	if (!m || (l->refuse_from && pc >= l->func_lo[2] && pc < l->func_hi[2]))
		return NULL;
	*bias = m->bias;
	return cfi_cache_get(l->cache, m->path);
}

static uint64_t real_ra(void *ctx, uint64_t slot, uint64_t value)
{
	struct live *l = ctx;
	for (int i = 0; i < l->nswapped; i++)
		if (l->swapped_slot[i] == slot)
			return l->swapped_real[i];
	return value;
}

/* The fixture's child exits with this when PTRACE_TRACEME is refused. */
#define NO_PTRACE 77

/* Runs the fixture to its int3; false only if ptrace is not allowed here
 * (any other way the fixture fails to stop fails the test). */
static bool start(struct live *l)
{
	memset(l, 0, sizeof *l);
	l->pid = fork();
	ck_assert_int_ge(l->pid, 0);
	if (l->pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(NO_PTRACE);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(l->pid, &st, 0), l->pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == NO_PTRACE) {
		fprintf(stderr, "test_cfi: skipped: ptrace is not permitted here\n");
		return false;
	}
	ck_assert_msg(WIFSTOPPED(st), "fixture '%s' did not stop at its exec (status 0x%x)", bin, st);
	ck_assert_int_eq(ptrace(PTRACE_CONT, l->pid, 0, 0), 0);
	ck_assert_int_eq(waitpid(l->pid, &st, 0), l->pid);
	ck_assert_msg(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP, "fixture did not stop at its int3");
	ck_assert_int_eq(ptu_getregs(l->pid, &l->regs), 0);
	ck_assert_int_eq(modmap_load(&l->mods, l->pid), 0);
	l->memfd = ptu_open_mem(l->pid);
	ck_assert_int_ge(l->memfd, 0);
	l->cache = cfi_cache_new();
	static const char *const names[] = { "inner", "middle", "outer", "main" };
	struct elfsym syms[4];
	int has_symtab;
	ck_assert_int_eq(elf_lookup_funcs(bin, names, 4, syms, &has_symtab), 4);
	struct elfmod *exe = modmap_find(&l->mods, l->regs.rip);
	ck_assert_ptr_nonnull(exe);
	for (int i = 0; i < 4; i++) {
		l->func_lo[i] = exe->bias + syms[i].value;
		l->func_hi[i] = l->func_lo[i] + syms[i].size;
	}
	return true;
}

static int finish(struct live *l)
{
	int st;
	ptrace(PTRACE_CONT, l->pid, 0, 0);
	waitpid(l->pid, &st, 0);
	cfi_cache_free(l->cache);
	modmap_release(&l->mods);
	close(l->memfd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int walk(struct live *l, struct cfi_frame *f, int max)
{
	struct cfi_regs regs;
	struct cfi_env env = { rd, find, real_ra, l };
	cfi_regs_from_user(&regs, &l->regs);
	return cfi_walk(&env, &regs, f, max);
}

static bool in_func(const struct live *l, int i, uint64_t pc)
{
	return pc >= l->func_lo[i] && pc < l->func_hi[i];
}

START_TEST(walks_by_cfi_not_rbp)
{
	struct live l;
	if (!start(&l))
		return;
	struct cfi_frame f[16];
	int n = walk(&l, f, 16);
	ck_assert_int_ge(n, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(in_func(&l, i, f[i].pc - (i ? 1 : 0)), "frame %d is not in the expected function", i);
	for (int i = 0; i < 4; i++) {
		uint64_t v = 0;
		ck_assert_uint_eq(f[i].ra_slot, f[i].cfa - 8);
		ck_assert_int_eq(ptu_read(l.pid, f[i].ra_slot, &v, sizeof v), 0);
		ck_assert_uint_eq(v, f[i].ra);
		ck_assert_uint_eq(v, f[i + 1].pc);
		/* the word a frame-pointer walk would have swapped: live data */
		ck_assert_uint_ne(f[i].ra_slot, l.regs.rbp + 8);
		if (i)
			ck_assert_uint_gt(f[i].cfa, f[i - 1].cfa);
	}
	ck_assert_int_eq(finish(&l), 0);
}
END_TEST

/* The tracer swaps return addresses for its trampoline: the walk follows
 * the real ones, and putting them back leaves the program unchanged. */
START_TEST(follows_swapped_slots)
{
	struct live l;
	if (!start(&l))
		return;
	struct cfi_frame before[16], after[16];
	int n = walk(&l, before, 16);
	ck_assert_int_ge(n, 4);
	for (int i = 0; i < 4; i++) {
		uint64_t fake = 0xdead0000 + (uint64_t)i;
		l.swapped_slot[l.nswapped] = before[i].ra_slot;
		l.swapped_real[l.nswapped++] = before[i].ra;
		ck_assert_int_eq(ptu_write(l.memfd, before[i].ra_slot, &fake, sizeof fake), 0);
	}
	ck_assert_int_eq(walk(&l, after, 16), n);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_eq(after[i].pc, before[i].pc);
		ck_assert_uint_eq(after[i].cfa, before[i].cfa);
	}
	for (int i = 0; i < l.nswapped; i++)
		ck_assert_int_eq(ptu_write(l.memfd, l.swapped_slot[i], &l.swapped_real[i], 8), 0);
	ck_assert_int_eq(finish(&l), 0); /* decoy[1] and every return intact */
}
END_TEST

/* No CFI for a frame: the walk ends there, it never guesses on. */
START_TEST(stops_without_cfi)
{
	struct live l;
	if (!start(&l))
		return;
	l.refuse_from = 1; /* outer() has no CFI */
	struct cfi_frame f[16];
	int n = walk(&l, f, 16);
	ck_assert_int_eq(n, 2);
	ck_assert(in_func(&l, 0, f[0].pc));
	ck_assert(in_func(&l, 1, f[1].pc - 1));
	ck_assert_int_eq(finish(&l), 0);
}
END_TEST

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(bin, sizeof bin, "%s/bin/cfi_O2", dirname(self));
	(void)argc;
	Suite *s = suite_create("cfi");
	TCase *tc = tcase_create("walk");
	tcase_add_test(tc, walks_by_cfi_not_rbp);
	tcase_add_test(tc, follows_swapped_slots);
	tcase_add_test(tc, stops_without_cfi);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
