/*
 * Function ranges from .eh_frame FDEs (tracer/fde.c), read from fixture
 * files (tests/unit/fde.mk): every FDE of the section, whatever pointer
 * encoding its CIE gives, with or without an .eh_frame_hdr table.
 */
#include <check.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracer/elfmod.h"
#include "tracer/fde.h"
#include "unit_util.h"

static char dir[PATH_MAX / 2]; /* where the test is: its fixtures are in bin/ */

/* The FDE ranges of fixture name; their number. */
static size_t ranges_of(const char *name, char *path, size_t len, struct fde_range **r)
{
	snprintf(path, len, "%s/bin/%s", dir, name);
	int fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "cannot open fixture '%s'", path);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ck_assert_ptr_nonnull(e);
	size_t n = fde_ranges(e, r);
	elf_end(e);
	close(fd);
	return n;
}

/* Each function's symbol [value, value + size) is one FDE range, the
 * ranges are exactly those, in order. */
static void expect_funcs(const char *name, const char *const *funcs, int n)
{
	char path[PATH_MAX];
	struct fde_range *r;
	size_t nr = ranges_of(name, path, sizeof path, &r);
	struct elfsym syms[8];
	int has_symtab;
	ck_assert_int_eq(elf_lookup_funcs(path, funcs, n, syms, &has_symtab), n);
	ck_assert_uint_eq(nr, (size_t)n);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_eq(r[i].lo, syms[i].value);
		ck_assert_uint_eq(r[i].hi, syms[i].value + syms[i].size);
		char want[24];
		snprintf(want, sizeof want, "fde@%llx", (unsigned long long)syms[i].value);
		ck_assert_str_eq(r[i].name, want);
	}
	free(r);
}

/* Absolute 8 bytes ("zR" absptr), pc-relative sdata8 after a personality
 * pointer ("zPR"), no augmentation (absptr), absolute udata4 with an
 * LSDA ("zLR"): all four functions, none of them in the encoding an
 * .eh_frame_hdr-only reader expects. */
START_TEST(t_every_pointer_encoding)
{
	static const char *const funcs[] = { "f_abs", "f_pc8", "f_plain", "f_u4" };
	expect_funcs("fde_enc", funcs, 4);
}
END_TEST

/* A static link without .eh_frame_hdr: its FDEs are still read. */
START_TEST(t_no_eh_frame_hdr)
{
	static const char *const funcs[] = { "f_one", "f_two" };
	expect_funcs("fde_plain", funcs, 2);
}
END_TEST

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(dir, sizeof dir, "%s", dirname(self));
	(void)argc;
	Suite *s = suite_create("fde");
	TCase *tc = tcase_create("ranges");
	tcase_add_test(tc, t_every_pointer_encoding);
	tcase_add_test(tc, t_no_eh_frame_hdr);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
