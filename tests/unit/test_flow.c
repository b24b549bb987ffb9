/*
 * sym_value_use() (symbolizer/sym_flow.c) on tests/unit/fixtures/flow_fix.c
 * built -O0: every avtrace read probe in the fixture is found in its
 * .note.stapsdt section, its function named through the symbolizer, and
 * the answer checked against the function's name (data_*, steer_*,
 * unknown_*).  Addresses of globals come from the symbolizer's reverse
 * lookup; nothing is hard-coded.
 */
#include <capstone/capstone.h>
#include <check.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/sym.h"
#include "unit_util.h"

static char bin[PATH_MAX];

struct probe {
	uint64_t pc;
	char name[32];
};

/* The fixture's avtrace probes (file addresses: the module is registered
 * at base 0). */
static size_t read_probes(struct probe *out, size_t max)
{
	int fd = open(bin, O_RDONLY);
	ck_assert_msg(fd >= 0, "cannot open %s (make tests/unit/bin/flow_O0)", bin);
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	size_t n = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const char *owner = (const char *)d->d_buf + noff;
			const char *desc = (const char *)d->d_buf + doff;
			if (nh.n_type != 3 || strcmp(owner, "stapsdt") || nh.n_descsz < 26 || n == max)
				continue;
			const char *prov = desc + 24, *name = prov + strlen(prov) + 1;
			if (strcmp(prov, "avtrace"))
				continue;
			memcpy(&out[n].pc, desc, 8);
			snprintf(out[n].name, sizeof out[n].name, "%s", name);
			n++;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

static uint64_t var(struct sym *s, const char *name)
{
	uint64_t a, size;
	ck_assert_msg(sym_var_lookup(s, name, &a, &size) == 0, "%s: %s", name, sym_error(s));
	return a;
}

START_TEST(each_read_by_its_function)
{
	struct probe p[64];
	size_t n = read_probes(p, 64), reads = 0, seen[3] = { 0, 0, 0 };
	struct sym *s = sym_new();
	ck_assert_int_eq(sym_add_module(s, 0, bin, 0, 0, 1ull << 32, NULL, 0), 0);
	uint64_t a = var(s, "g_a"), b = var(s, "g_b");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].name, "read"))
			continue;
		struct sym_loc loc;
		ck_assert_int_eq(sym_site(s, 0, p[i].pc, 0, &loc), 0);
		ck_assert_ptr_nonnull(loc.func);
		struct sym_use_info u;
		ck_assert_int_eq(sym_value_use(s, 0, p[i].pc, a, 0, &u), 0);
		reads++;
		if (!strncmp(loc.func, "data_", 5)) {
			ck_assert_msg(u.use == SYM_USE_DATA, "%s: %d, not data", loc.func, u.use);
			/* where the functions store it (data_dies stores a constant) */
			bool to_b = !strcmp(loc.func, "data_store") || !strcmp(loc.func, "data_loop") ||
				    !strcmp(loc.func, "data_void_tail") ||
				    !strcmp(loc.func, "data_unlock");
			ck_assert_msg(u.nstore == (to_b ? 1u : 0u), "%s: %u stores", loc.func,
				      u.nstore);
			if (to_b)
				ck_assert_msg(u.store[0] == b, "%s: stored to %#lx", loc.func,
					      (unsigned long)u.store[0]);
			seen[0]++;
		} else if (!strncmp(loc.func, "steer_", 6)) {
			ck_assert_msg(u.use == SYM_USE_STEERS, "%s: %d, not steers", loc.func, u.use);
			seen[1]++;
		} else {
			ck_assert_msg(!strncmp(loc.func, "unknown_", 8), "%s?", loc.func);
			ck_assert_msg(u.use == SYM_USE_UNKNOWN, "%s: %d, not unknown", loc.func,
				      u.use);
			seen[2]++;
		}
	}
	sym_free(s);
	ck_assert_uint_eq(reads, 10);
	ck_assert_uint_eq(seen[0], 5);
	ck_assert_uint_eq(seen[1], 4);
	ck_assert_uint_eq(seen[2], 1);
}
END_TEST

/* The file's .text and its address. */
static const uint8_t *text(Elf **elf, int *fd, uint64_t *addr, size_t *size)
{
	*fd = open(bin, O_RDONLY);
	ck_assert_int_ge(*fd, 0);
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	size_t shstr;
	ck_assert_int_eq(elf_getshdrstrndx(*elf, &shstr), 0);
	for (Elf_Scn *scn = elf_nextscn(*elf, NULL); scn; scn = elf_nextscn(*elf, scn)) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(*elf, shstr, sh.sh_name), ".text"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		*addr = sh.sh_addr;
		*size = d->d_size;
		return d->d_buf;
	}
	ck_abort_msg("no .text in %s", bin);
	return NULL;
}

/* A watchpoint reports a read after the instruction: the site is the
 * next instruction's address.  For each annotated read, the same load
 * seen that way gets the same answer. */
START_TEST(watched_site_same_answer)
{
	struct probe p[64];
	size_t n = read_probes(p, 64), checked = 0;
	struct sym *s = sym_new();
	ck_assert_int_eq(sym_add_module(s, 0, bin, 0, 0, 1ull << 32, NULL, 0), 0);
	uint64_t a = var(s, "g_a"), taddr;
	size_t tsize;
	int fd;
	Elf *elf;
	const uint8_t *code = text(&elf, &fd, &taddr, &tsize);
	csh cs;
	ck_assert_int_eq(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *in = cs_malloc(cs);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].name, "read"))
			continue;
		/* the load: the first instruction after the probe reading g_a */
		const uint8_t *c = code + (p[i].pc - taddr);
		size_t size = tsize - (p[i].pc - taddr);
		uint64_t pc = p[i].pc, end = 0;
		while (!end && cs_disasm_iter(cs, &c, &size, &pc, in)) {
			const cs_x86 *x = &in->detail->x86;
			for (uint8_t k = 0; k < x->op_count; k++)
				if (x->operands[k].type == X86_OP_MEM && in->id != X86_INS_LEA &&
				    x->operands[k].mem.base == X86_REG_RIP &&
				    in->address + in->size + (uint64_t)x->operands[k].mem.disp == a)
					end = in->address + in->size;
		}
		ck_assert_msg(end, "no load of g_a after the probe at %#lx", (unsigned long)p[i].pc);
		struct sym_use_info u, w;
		ck_assert_int_eq(sym_value_use(s, 0, p[i].pc, a, 0, &u), 0);
		ck_assert_int_eq(sym_value_use(s, 0, end, a, 1, &w), 0);
		ck_assert_msg(u.use == w.use && u.nstore == w.nstore, "probe %#lx: %d/%u vs %d/%u",
			      (unsigned long)p[i].pc, u.use, u.nstore, w.use, w.nstore);
		/* the probe's own site, taken as a watched one, is no load */
		ck_assert_int_eq(sym_value_use(s, 0, p[i].pc, a, 1, &w), 0);
		ck_assert_int_eq(w.use, SYM_USE_UNKNOWN);
		checked++;
	}
	cs_free(in, 1);
	cs_close(&cs);
	elf_end(elf);
	close(fd);
	sym_free(s);
	ck_assert_uint_eq(checked, 10);
}
END_TEST

/* No such module, or a site outside any function: -1, unknown. */
START_TEST(unreadable_is_unknown)
{
	struct sym *s = sym_new();
	struct sym_use_info u;
	ck_assert_int_eq(sym_value_use(s, 3, 0x1000, 0x4000, 0, &u), -1);
	ck_assert_int_eq(u.use, SYM_USE_UNKNOWN);
	ck_assert_int_eq(sym_add_module(s, 0, bin, 0, 0, 1ull << 32, NULL, 0), 0);
	ck_assert_int_eq(sym_value_use(s, 0, 0x3, 0x4000, 0, &u), -1);
	ck_assert_int_eq(u.use, SYM_USE_UNKNOWN);
	sym_free(s);
}
END_TEST

int main(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(bin, sizeof bin, "%s/bin/flow_O0", n > 0 ? dirname(exe) : "tests/unit");
	Suite *su = suite_create("flow");
	TCase *tc = tcase_create("value use");
	tcase_add_test(tc, each_read_by_its_function);
	tcase_add_test(tc, watched_site_same_answer);
	tcase_add_test(tc, unreadable_is_unknown);
	suite_add_tcase(su, tc);
	return unit_run(su);
}
