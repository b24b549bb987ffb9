/*
 * Unit tests of symbolizer/: code sites, variable names, reverse lookups,
 * fallbacks and backtraces, on the fixtures tests/unit/symbolizer.mk builds
 * into tests/unit/bin/ from tests/unit/fixtures/sym_*.c.
 *
 * Expected addresses come from the fixtures' ELF symbol tables (libelf, at
 * test time) plus offsetof() on the types in sym_fix.h; expected lines from
 * marker comments in the fixture sources.  Nothing is hard-coded.
 */
#include <check.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/sym.h"
#include "tests/unit/fixtures/sym_fix.h"
#include "unit_util.h"

#define PIE_BASE 0x555555554000ull
#define PTRACE_TIMEOUT_MS 10000

static char bindir[PATH_MAX];
static char fixdir[PATH_MAX];

/* ---- fixture files ---------------------------------------------------- */

static void join(char *out, size_t len, const char *dir, const char *name)
{
	int n = snprintf(out, len, "%s/%s", dir, name);
	ck_assert_msg(n > 0 && (size_t)n < len, "path too long: %s/%s", dir, name);
}

static const char *bin_path(const char *name)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *p = buf[next++ % 4];
	join(p, PATH_MAX, bindir, name);
	return p;
}

/* gcc names a function's static "v" in the ELF symbol table "v.N". */
static int symbol_is(const char *elfname, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(elfname, name, n) != 0)
		return 0;
	if (elfname[n] == '\0')
		return 1;
	return elfname[n] == '.' && elfname[n + 1] && strspn(elfname + n + 1, "0123456789") ==
		strlen(elfname + n + 1);
}

/* Value and size of ELF symbol name in file (symtab, else dynsym). */
static int elf_symbol(const char *file, const char *name, uint64_t *value, uint64_t *size)
{
	int fd = open(file, O_RDONLY);
	ck_assert_msg(fd >= 0, "cannot open '%s'", file);
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int found = -1;
	Elf_Scn *scn = NULL;
	while (found < 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && symbol_is(n, name)) {
				*value = sym.st_value;
				if (size)
					*size = sym.st_size;
				found = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static uint64_t symval(const char *file, const char *name)
{
	uint64_t v;
	ck_assert_msg(elf_symbol(file, name, &v, NULL) == 0, "no symbol '%s' in '%s'", name, file);
	return v;
}

static uint64_t symsize(const char *file, const char *name)
{
	uint64_t v, size;
	ck_assert_msg(elf_symbol(file, name, &v, &size) == 0, "no symbol '%s' in '%s'", name, file);
	return size;
}

/* Line of the first occurrence of marker in a fixture source. */
static int marker_line(const char *src, const char *marker)
{
	char path[PATH_MAX], line[512];
	join(path, sizeof(path), fixdir, src);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open '%s'", path);
	int n = 0, found = 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			found = n;
			break;
		}
	}
	fclose(f);
	ck_assert_msg(found > 0, "no marker '%s' in '%s'", marker, src);
	return found;
}

static int func_line(const char *src, const char *func, const char *what)
{
	char m[128];
	snprintf(m, sizeof(m), "SYM-%s:%s */", what, func);
	return marker_line(src, m);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int count_substr(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- the variants ----------------------------------------------------- */

struct variant {
	const char *bin;    /* file registered */
	const char *symbin; /* file whose symbol table gives addresses */
	uint64_t base;      /* bias registered */
	int o0;             /* -O0: the entry pc is on the opening brace line */
};

/* Variants with DWARF (in the file or behind .gnu_debuglink). */
static const struct variant dwarf_variants[] = {
	{ "sym_O0_pie", "sym_O0_pie", PIE_BASE, 1 },
	{ "sym_O2_pie", "sym_O2_pie", PIE_BASE, 0 },
	{ "sym_O0_nopie", "sym_O0_nopie", 0, 1 },
	{ "sym_O2_nopie", "sym_O2_nopie", 0, 0 },
	{ "sym_dbglink", "sym_O0_pie", PIE_BASE, 1 },
	{ "sym_shlib", "sym_shlib", PIE_BASE, 1 },
};
#define NDWARF (int)(sizeof(dwarf_variants) / sizeof(dwarf_variants[0]))

static struct sym *open_variant(const struct variant *v)
{
	struct sym *s = sym_new();
	ck_assert_ptr_nonnull(s);
	/* Non-PIE executables are linked at 0x400000. */
	uint64_t lo = v->base ? v->base : 0x400000;
	ck_assert_int_eq(sym_add_module(s, 0, bin_path(v->bin), v->base, lo, lo + 0x100000,
					NULL, 0), 0);
	return s;
}

static uint64_t var_addr(const struct variant *v, const char *name, size_t off)
{
	return v->base + symval(bin_path(v->symbin), name) + off;
}

/* ---- code sites ------------------------------------------------------- */

static void check_func(struct sym *s, const struct variant *v, const char *func,
		       const char *src)
{
	uint64_t off = symval(bin_path(v->symbin), func);
	int open = func_line(src, func, "FUNC"), close = func_line(src, func, "END");
	struct sym_loc loc;
	char buf[256], want[64];
	ck_assert_int_eq(sym_site(s, 0, off, 0, &loc), 0);
	ck_assert_pstr_eq(loc.func, func);
	ck_assert_ptr_nonnull(loc.file);
	ck_assert_msg(ends_with(loc.file, src), "%s: file '%s', want '%s'", v->bin, loc.file, src);
	if (v->o0)
		ck_assert_int_eq(loc.line, open);
	else
		ck_assert_msg(loc.line >= open && loc.line <= close, "%s: %s at line %d, not in %d-%d",
			      v->bin, func, loc.line, open, close);
	ck_assert_uint_eq(loc.modoff, off);
	ck_assert_str_eq(loc.module, v->bin);
	snprintf(want, sizeof(want), "%s:%d", src, loc.line);
	ck_assert_str_eq(sym_site_str(s, 0, off, 0, buf, sizeof(buf)), want);
	/* The same site by absolute address. */
	ck_assert_int_eq(sym_addr(s, v->base + off, 0, &loc), 0);
	ck_assert_pstr_eq(loc.func, func);
	ck_assert_uint_eq(loc.modoff, off);
}

START_TEST(test_func_lines)
{
	const struct variant *v = &dwarf_variants[_i];
	struct sym *s = open_variant(v);
	check_func(s, v, "fix_inner", "sym_a.c");
	check_func(s, v, "fix_outer", "sym_a.c");
	check_func(s, v, "fix_middle", "sym_main.c");
	check_func(s, v, "fix_bump", "sym_main.c");
	sym_free(s);
}
END_TEST

/* Some byte of fix_work_a is the inlined square_plus: its line, with
 * fix_work_a as the function it was inlined into. */
START_TEST(test_inline_chain)
{
	const struct variant *v = &dwarf_variants[_i];
	struct sym *s = open_variant(v);
	const char *file = bin_path(v->symbin);
	uint64_t start = symval(file, "fix_work_a"), size = symsize(file, "fix_work_a");
	int inl = marker_line("sym_a.c", "SYM-MARK:inlined"), seen = 0;
	for (uint64_t off = start; off < start + size; off++) {
		struct sym_loc loc;
		ck_assert_int_eq(sym_site(s, 0, off, 0, &loc), 0);
		if (loc.ninline == 0) {
			ck_assert_pstr_eq(loc.func, "fix_work_a");
			continue;
		}
		seen++;
		ck_assert_pstr_eq(loc.func, "square_plus");
		ck_assert_int_eq(loc.ninline, 1);
		ck_assert_pstr_eq(loc.inline_funcs[0], "fix_work_a");
		ck_assert_int_eq(loc.line, inl);
	}
	ck_assert_msg(seen > 0, "%s: no inlined code found in fix_work_a", v->bin);
	sym_free(s);
}
END_TEST

/* is_return looks up the byte before off but reports off: at a line
 * boundary inside fix_outer that gives the previous line. */
START_TEST(test_return_site)
{
	const struct variant *v = &dwarf_variants[_i];
	struct sym *s = open_variant(v);
	const char *file = bin_path(v->symbin);
	uint64_t start = symval(file, "fix_outer"), size = symsize(file, "fix_outer");
	int boundaries = 0;
	for (uint64_t off = start + 1; off < start + size; off++) {
		struct sym_loc prev, here, ret;
		sym_site(s, 0, off - 1, 0, &prev);
		sym_site(s, 0, off, 0, &here);
		if (prev.line == here.line)
			continue;
		boundaries++;
		ck_assert_int_eq(sym_site(s, 0, off, 1, &ret), 0);
		ck_assert_int_eq(ret.line, prev.line);
		ck_assert_uint_eq(ret.modoff, off);
	}
	ck_assert_int_gt(boundaries, 0);
	sym_free(s);
}
END_TEST

/* ---- variables -------------------------------------------------------- */

struct var_case {
	const char *sym;
	size_t off;
	const char *name;
};

START_TEST(test_var_names)
{
	const struct variant *v = &dwarf_variants[_i];
	const struct var_case cases[] = {
		{ "srv", offsetof(struct server, m), "srv.m" },
		{ "srv", offsetof(struct server, m) + 8, "srv.m+8" },
		{ "srv", offsetof(struct server, hits[2]), "srv.hits[2]" },
		{ "srv", offsetof(struct server, hits[2]) + 1, "srv.hits[2]+1" },
		{ "srv", offsetof(struct server, started.tv_nsec), "srv.started.tv_nsec" },
		{ "srv", offsetof(struct server, sigs) + 8, "srv.sigs+8" },
		{ "srv", offsetof(struct server, u.f), "srv.u" },
		{ "srv", offsetof(struct server, u) + 2, "srv.u+2" },
		{ "q", 3 * sizeof(int), "q[3]" },
		{ "table", offsetof(struct table, buckets[2]), "table.buckets[2]" },
		{ "table", 0, "table.size" },
		{ "tbl", sizeof(struct entry) + offsetof(struct entry, x), "tbl[1].x" },
		{ "tbl", 3 * sizeof(struct entry) + offsetof(struct entry, y), "tbl[3].y" },
		{ "grid", (1 * 4 + 2) * sizeof(int), "grid[1][2]" },
		{ "grid", (2 * 4 + 3) * sizeof(int), "grid[2][3]" },
		{ "cfg", offsetof(struct cfg, a.b[1]), "cfg.a.b[1]" },
		{ "counter", 0, "counter" },
		{ "counter", 2, "counter+2" },
		{ "bump_calls", 0, "bump_calls" },
	};
	struct sym *s = open_variant(v);
	char buf[128];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t a = var_addr(v, cases[i].sym, cases[i].off);
		const char *got = sym_var_name(s, a, buf, sizeof(buf));
		ck_assert_msg(got && strcmp(got, cases[i].name) == 0, "%s: %s+%zu named '%s', want '%s'",
			      v->bin, cases[i].sym, cases[i].off, got ? got : "(null)", cases[i].name);
	}
	/* Code and addresses outside the module have no variable. */
	ck_assert_ptr_null(sym_var_name(s, var_addr(v, "fix_inner", 0), buf, sizeof(buf)));
	ck_assert_ptr_null(sym_var_name(s, 0x10, buf, sizeof(buf)));
	/* A short buffer truncates rather than overflows. */
	ck_assert_str_eq(sym_var_name(s, var_addr(v, "grid", 6 * sizeof(int)), buf, 5), "grid");
	sym_free(s);
}
END_TEST

struct lookup_case {
	const char *expr, *sym;
	size_t off, size;
};

START_TEST(test_var_lookup)
{
	const struct variant *v = &dwarf_variants[_i];
	const struct lookup_case cases[] = {
		{ "srv", "srv", 0, sizeof(struct server) },
		{ "srv.m", "srv", offsetof(struct server, m), sizeof(pthread_mutex_t) },
		{ "srv.hits[3]", "srv", offsetof(struct server, hits[3]), sizeof(int) },
		{ "q[3]", "q", 3 * sizeof(int), sizeof(int) },
		{ "table.buckets[2]", "table", offsetof(struct table, buckets[2]), sizeof(int) },
		{ "tbl[1].y", "tbl", sizeof(struct entry) + offsetof(struct entry, y), sizeof(int) },
		{ "tbl[2]", "tbl", 2 * sizeof(struct entry), sizeof(struct entry) },
		{ "grid[1][2]", "grid", 6 * sizeof(int), sizeof(int) },
		{ "grid[2]", "grid", 8 * sizeof(int), 4 * sizeof(int) },
		{ "cfg.a.b[1]", "cfg", offsetof(struct cfg, a.b[1]), sizeof(int) },
		{ "cfg.a", "cfg", offsetof(struct cfg, a), sizeof(cfg.a) },
		{ "counter", "counter", 0, sizeof(int) },
		{ "srv.u.f", "srv", offsetof(struct server, u.f), sizeof(float) },
		{ "srv.sigs.__val[1]", "srv", offsetof(struct server, sigs) + sizeof(long), sizeof(long) },
	};
	const char *bad[] = { "nosuch", "srv.nosuch", "q[8]", "grid[1][4]", "srv[1]",
			      "q.x", "grid[1].x", "srv.", "q[", "" };
	struct sym *s = open_variant(v);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t addr = 0, size = 0;
		ck_assert_msg(sym_var_lookup(s, cases[i].expr, &addr, &size) == 0, "%s: '%s' not found",
			      v->bin, cases[i].expr);
		ck_assert_uint_eq(addr, var_addr(v, cases[i].sym, cases[i].off));
		ck_assert_uint_eq(size, cases[i].size);
	}
	/* a failed lookup says why through sym_error(), and prints nothing */
	struct unit_capture c;
	unit_capture_start(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t addr, size;
		ck_assert_msg(sym_var_lookup(s, bad[i], &addr, &size) < 0, "'%s' resolved", bad[i]);
		ck_assert_msg(!strncmp(sym_error(s), "cannot resolve '", 16), "'%s': reason '%s'", bad[i],
			      sym_error(s));
		ck_assert_ptr_nonnull(strstr(sym_error(s), bad[i]));
	}
	char *err = unit_capture_stop(&c);
	ck_assert_str_eq(err, "");
	free(err);
	sym_free(s);
}
END_TEST

/* ---- stripped files --------------------------------------------------- */

/* Symbols but no DWARF: ELF names for functions and variables, no lines. */
START_TEST(test_nodebug)
{
	const struct variant v = { "sym_nodebug", "sym_O0_pie", PIE_BASE, 1 };
	struct sym *s = open_variant(&v);
	uint64_t off = symval(bin_path(v.symbin), "fix_outer");
	struct sym_loc loc;
	char buf[128], want[128];
	ck_assert_int_eq(sym_site(s, 0, off + 4, 0, &loc), 0);
	ck_assert_pstr_eq(loc.func, "fix_outer");
	ck_assert_ptr_null(loc.file);
	ck_assert_int_eq(loc.line, 0);
	snprintf(want, sizeof(want), "sym_nodebug+0x%" PRIx64, off + 4);
	ck_assert_str_eq(sym_site_str(s, 0, off + 4, 0, buf, sizeof(buf)), want);
	ck_assert_str_eq(sym_var_name(s, var_addr(&v, "srv", 0), buf, sizeof(buf)), "srv");
	snprintf(want, sizeof(want), "srv+%zu", offsetof(struct server, m));
	ck_assert_str_eq(sym_var_name(s, var_addr(&v, "srv", offsetof(struct server, m)), buf,
				      sizeof(buf)), want);
	ck_assert_str_eq(sym_var_name(s, var_addr(&v, "grid", 8), buf, sizeof(buf)), "grid+8");
	uint64_t addr, size;
	ck_assert_int_eq(sym_var_lookup(s, "tbl", &addr, &size), 0);
	ck_assert_uint_eq(addr, var_addr(&v, "tbl", 0));
	ck_assert_uint_eq(size, sizeof(tbl));
	struct unit_capture c;
	unit_capture_start(&c);
	ck_assert_int_lt(sym_var_lookup(s, "tbl[1]", &addr, &size), 0);
	free(unit_capture_stop(&c));
	sym_free(s);
}
END_TEST

/* Nothing but dynamic symbols: module+offset, no names, no crash. */
START_TEST(test_stripped)
{
	const struct variant v = { "sym_stripped", "sym_O0_pie", PIE_BASE, 1 };
	struct sym *s = open_variant(&v);
	uint64_t start = symval(bin_path(v.symbin), "fix_work_a");
	uint64_t size = symsize(bin_path(v.symbin), "fix_work_a");
	char buf[128], want[128];
	for (uint64_t off = start; off < start + size; off++) {
		struct sym_loc loc;
		ck_assert_int_eq(sym_site(s, 0, off, (int)(off & 1), &loc), 0);
		ck_assert_ptr_null(loc.func);
		ck_assert_ptr_null(loc.file);
		ck_assert_str_eq(loc.module, "sym_stripped");
		snprintf(want, sizeof(want), "sym_stripped+0x%" PRIx64, off);
		ck_assert_str_eq(sym_site_str(s, 0, off, 0, buf, sizeof(buf)), want);
	}
	ck_assert_ptr_null(sym_var_name(s, var_addr(&v, "srv", 8), buf, sizeof(buf)));
	struct unit_capture c;
	uint64_t addr, vsize;
	unit_capture_start(&c);
	ck_assert_int_lt(sym_var_lookup(s, "srv", &addr, &vsize), 0);
	free(unit_capture_stop(&c));
	sym_free(s);
}
END_TEST

/* ---- build-ids and unreadable modules --------------------------------- */

static size_t file_build_id(const char *path, uint8_t *out)
{
	int fd = open(path, O_RDONLY);
	ck_assert(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const void *bits;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
	ck_assert_int_gt(n, 0);
	ck_assert_int_le(n, SYM_BUILD_ID_MAX);
	memcpy(out, bits, (size_t)n);
	elf_end(elf);
	close(fd);
	return (size_t)n;
}

START_TEST(test_build_id_match)
{
	const char *path = bin_path("sym_O0_pie");
	uint8_t bid[SYM_BUILD_ID_MAX];
	size_t n = file_build_id(path, bid);
	struct sym *s = sym_new();
	ck_assert_int_eq(sym_add_module(s, 3, path, 0, 0x1000, 0x100000, bid, n), 0);
	struct unit_capture c;
	unit_capture_start(&c);
	struct sym_loc loc;
	sym_site(s, 3, symval(path, "fix_inner"), 0, &loc);
	char *err = unit_capture_stop(&c);
	ck_assert_str_eq(err, "");
	free(err);
	ck_assert_pstr_eq(loc.func, "fix_inner");
	sym_free(s);
}
END_TEST

START_TEST(test_build_id_mismatch)
{
	const char *path = bin_path("sym_O0_pie");
	uint8_t bid[SYM_BUILD_ID_MAX];
	size_t n = file_build_id(path, bid);
	bid[0] ^= 0xff;
	struct sym *s = sym_new();
	ck_assert_int_eq(sym_add_module(s, 3, path, 0, 0x1000, 0x100000, bid, n), 0);
	uint64_t f = symval(path, "fix_inner"), g = symval(path, "fix_outer");
	char buf[128], want[128], warn[PATH_MAX + 64];
	struct sym_loc loc;
	struct unit_capture c;
	unit_capture_start(&c);
	ck_assert_int_eq(sym_site(s, 3, f, 0, &loc), 0);
	ck_assert_ptr_null(loc.func);
	ck_assert_ptr_null(loc.file);
	snprintf(want, sizeof(want), "sym_O0_pie+0x%" PRIx64, g);
	ck_assert_str_eq(sym_site_str(s, 3, g, 1, buf, sizeof(buf)), want);
	ck_assert_ptr_null(sym_var_name(s, symval(path, "srv"), buf, sizeof(buf)));
	char *err = unit_capture_stop(&c);
	snprintf(warn, sizeof(warn), "avtrace: warning: build-id of '%s' differs", path);
	ck_assert_msg(count_substr(err, warn) == 1 && count_substr(err, "\n") == 1,
		      "want one warning naming the file, got: %s", err);
	free(err);
	sym_free(s);
}
END_TEST

START_TEST(test_missing_file)
{
	struct sym *s = sym_new();
	ck_assert_int_eq(sym_add_module(s, 0, "/nonexistent/libgone.so", 0x7000, 0x7000, 0x9000,
					NULL, 0), 0);
	char buf[64];
	struct unit_capture c;
	unit_capture_start(&c);
	ck_assert_str_eq(sym_site_str(s, 0, 0x1234, 0, buf, sizeof(buf)), "libgone.so+0x1234");
	ck_assert_str_eq(sym_site_str(s, 0, 0x1238, 1, buf, sizeof(buf)), "libgone.so+0x1238");
	ck_assert_ptr_null(sym_var_name(s, 0x8000, buf, sizeof(buf)));
	char *err = unit_capture_stop(&c);
	ck_assert_int_eq(count_substr(err, "'/nonexistent/libgone.so'"), 1);
	free(err);
	sym_free(s);
}
END_TEST

/* ---- the module table ------------------------------------------------- */

START_TEST(test_module_table)
{
	struct sym *s = sym_new();
	const char *a = bin_path("sym_O0_pie"), *b = bin_path("libsymfix.so");
	struct unit_capture c;
	ck_assert_int_eq(sym_add_module(s, 2, a, 0x10000, 0x10000, 0x20000, NULL, 0), 0);
	ck_assert_int_eq(sym_add_module(s, 0, b, 0x40000, 0x40000, 0x50000, NULL, 0), 0);
	unit_capture_start(&c);
	ck_assert_int_lt(sym_add_module(s, 2, b, 0x60000, 0x60000, 0x70000, NULL, 0), 0);
	ck_assert_int_lt(sym_add_module(s, 5, b, 0x60000, 0x60000, 0x60000, NULL, 0), 0);
	ck_assert_int_lt(sym_add_module(s, SYM_MOD_NONE, b, 0x60000, 0x60000, 0x70000, NULL, 0), 0);
	free(unit_capture_stop(&c));

	ck_assert_uint_eq(sym_module_count(s), 2);
	struct sym_module_info mi;
	ck_assert_int_eq(sym_module_get(s, 0, &mi), 0);
	ck_assert_uint_eq(mi.id, 0);
	ck_assert_str_eq(mi.path, b);
	ck_assert_int_eq(sym_module_get(s, 1, &mi), 0);
	ck_assert_uint_eq(mi.id, 2);
	ck_assert_uint_eq(mi.base, 0x10000);
	ck_assert_uint_eq(mi.hi, 0x20000);
	ck_assert_ptr_null(mi.build_id);
	ck_assert_int_lt(sym_module_get(s, 2, &mi), 0);

	unsigned id;
	uint64_t off;
	ck_assert_int_eq(sym_module_of(s, 0x40010, &id, &off), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert_uint_eq(off, 0x10);
	ck_assert_int_eq(sym_module_of(s, 0x1ffff, &id, &off), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_lt(sym_module_of(s, 0x20000, &id, &off), 0);
	ck_assert_int_lt(sym_module_of(s, 0x100, &id, &off), 0);

	char buf[64];
	struct sym_loc loc;
	ck_assert_int_lt(sym_site(s, 7, 0x10, 0, &loc), 0);
	ck_assert_str_eq(sym_site_str(s, 7, 0x10, 0, buf, sizeof(buf)), "#7+0x10");
	ck_assert_str_eq(sym_site_str(s, SYM_MOD_NONE, 0x30000, 0, buf, sizeof(buf)), "0x30000");
	ck_assert_int_lt(sym_addr(s, 0x30000, 0, &loc), 0);
	ck_assert_uint_eq(loc.modoff, 0x30000);
	/* Registering a module makes earlier unknown sites known. */
	ck_assert_int_eq(sym_add_module(s, 7, b, 0x80000, 0x80000, 0x90000, NULL, 0), 0);
	ck_assert_str_eq(sym_site_str(s, 7, 0x10, 0, buf, sizeof(buf)), "libsymfix.so+0x10");
	sym_free(s);
}
END_TEST

/* ---- caches ----------------------------------------------------------- */

START_TEST(test_cache_counts)
{
	const struct variant *v = &dwarf_variants[0];
	struct sym *s = open_variant(v);
	const char *file = bin_path(v->symbin);
	uint64_t sites[3] = { symval(file, "fix_inner"), symval(file, "fix_outer"),
			      symval(file, "fix_bump") };
	uint64_t vars[2] = { var_addr(v, "srv", offsetof(struct server, m)), 0x10 };
	char buf[128];
	for (int i = 0; i < 3000; i++) {
		sym_site_str(s, 0, sites[i % 3], 1, buf, sizeof(buf));
		sym_var_name(s, vars[i % 2], buf, sizeof(buf));
	}
	struct sym_stats st;
	sym_get_stats(s, &st);
	ck_assert_uint_eq(st.site_lookups, 3000);
	ck_assert_uint_eq(st.site_misses, 3);
	ck_assert_uint_eq(st.var_lookups, 3000);
	ck_assert_uint_eq(st.var_misses, 2);
	sym_free(s);
}
END_TEST

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One line of a dump (shaped like avtrace dump's), with or without the
 * names added: the budget for symbolizing is the cost of the plain line
 * again (a symbolized dump <= 2x a plain one). */
static double dump_time(struct sym *s, FILE *out, const uint64_t *sites, const uint64_t *objs,
			int n)
{
	char site[64], obj[64], sname[128], oname[128];
	double t0 = cpu_now();
	for (int i = 0; i < n; i++) {
		uint64_t off = sites[i % 7], addr = objs[i % 5];
		snprintf(obj, sizeof(obj), "0x%" PRIx64, addr);
		snprintf(site, sizeof(site), "%u+0x%" PRIx64, 0u, off);
		if (!s) {
			fprintf(out, "%6d T%-3d %-13s %s %s\n", i, i % 4, "acquire", obj, site);
			continue;
		}
		if (!sym_var_name(s, addr, oname, sizeof(oname)))
			strcpy(oname, "?");
		sym_site_str(s, 0, off, 1, sname, sizeof(sname));
		fprintf(out, "%6d T%-3d %-13s %s (%s) %s (%s)\n", i, i % 4, "acquire", obj, oname,
			site, sname);
	}
	return cpu_now() - t0;
}

START_TEST(test_cache_speed)
{
	const struct variant *v = &dwarf_variants[0];
	struct sym *s = open_variant(v);
	const char *file = bin_path(v->symbin);
	const char *fn[7] = { "fix_inner", "fix_outer", "fix_bump", "fix_middle", "fix_work_a",
			      "main", "fix_inner" };
	uint64_t sites[7], objs[5];
	for (int i = 0; i < 7; i++)
		sites[i] = symval(file, fn[i]) + (uint64_t)i;
	for (int i = 0; i < 5; i++)
		objs[i] = var_addr(v, "tbl", (size_t)i * sizeof(struct entry));
	FILE *out = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(out);
	dump_time(s, out, sites, objs, 100); /* warm the caches */
	double plain = 1e9, named = 1e9;
	for (int round = 0; round < 3; round++) {
		double p = dump_time(NULL, out, sites, objs, 200000);
		double n = dump_time(s, out, sites, objs, 200000);
		plain = p < plain ? p : plain;
		named = n < named ? n : named;
	}
	fclose(out);
	ck_assert_msg(named <= 2 * plain, "symbolized dump %.3fs vs plain %.3fs", named, plain);
	sym_free(s);
}
END_TEST

/* ---- live processes (ptrace) ------------------------------------------ */

struct child {
	pid_t pid;
	FILE *out; /* the fixture's stdout */
};

/* waitpid with a deadline; 0 and *status, or -1 on timeout. */
static int wait_timeout(pid_t pid, int *status)
{
	for (int ms = 0; ms < PTRACE_TIMEOUT_MS; ms++) {
		pid_t r = waitpid(pid, status, WNOHANG | __WALL);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return -1;
}

static int wait_stop(pid_t pid, int sig)
{
	int st;
	return wait_timeout(pid, &st) == 0 && WIFSTOPPED(st) && WSTOPSIG(st) == sig ? 0 : -1;
}

/* Runs bin in mode ("stop" or "thread") traced by us, until its exec stop;
 * its stdout is c->out. */
static void child_exec(const char *bin, const char *mode, struct child *c)
{
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		/* If this test is killed by its timeout, the fixture must not
		 * stay behind, stopped. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		close(pfd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		execl(bin, bin, mode, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	c->out = fdopen(pfd[0], "r");
	ck_assert_msg(wait_stop(c->pid, SIGTRAP) == 0, "'%s' did not stop at exec", bin);
}

/* Runs bin "stop" traced by us, until it stops itself in fix_inner. */
static void child_start(const char *bin, struct child *c)
{
	child_exec(bin, "stop", c);
	ck_assert_int_eq(ptrace(PTRACE_CONT, c->pid, NULL, NULL), 0);
	ck_assert_msg(wait_stop(c->pid, SIGSTOP) == 0, "'%s' did not stop itself", bin);
}

/* Like child_start, with the "thread" mode: follows the clone and returns
 * the second thread's tid once it has stopped itself in fix_inner. */
static pid_t child_start_thread(const char *bin, struct child *c)
{
	child_exec(bin, "thread", c);
	ck_assert_int_eq(ptrace(PTRACE_SETOPTIONS, c->pid, NULL, (void *)PTRACE_O_TRACECLONE), 0);
	ck_assert_int_eq(ptrace(PTRACE_CONT, c->pid, NULL, NULL), 0);
	/* A new thread stops once when attached, once in its raise(). */
	for (int stops = 0;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);
		ck_assert_msg(tid > 0 && WIFSTOPPED(st), "fixture thread died (status %#x)", st);
		if (tid != c->pid && WSTOPSIG(st) == SIGSTOP && ++stops == 2)
			return tid;
		ck_assert_int_eq(ptrace(PTRACE_CONT, tid, NULL, NULL), 0);
	}
}

/* Kill the fixture and reap every one of its traced threads, so that no
 * exit notification is left for a later test (CK_FORK=no). */
static void child_end(struct child *c)
{
	kill(c->pid, SIGKILL);
	for (int ms = 0; ms < PTRACE_TIMEOUT_MS; ms++) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG | __WALL);
		if (r < 0 && errno == ECHILD)
			break;
		if (r <= 0)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	fclose(c->out);
}

/* The fixture prints "name %p" lines before stopping. */
static uint64_t child_addr(struct child *c, const char *name)
{
	char line[256], want[64];
	snprintf(want, sizeof(want), "%s 0x", name);
	while (fgets(line, sizeof(line), c->out))
		if (strncmp(line, want, strlen(want)) == 0)
			return strtoull(line + strlen(name) + 1, NULL, 16);
	ck_abort_msg("the fixture printed no '%s'", name);
	return 0;
}

static const struct {
	const char *unwinder, *bin;
} bt_cases[] = {
	{ "libunwind", "sym_O0_pie" },
	{ "dwfl", "sym_O0_pie" },
	{ "libunwind", "sym_O0_nopie" },
	{ "dwfl", "sym_O0_nopie" },
	{ "libunwind", "sym_shlib" },
	{ "dwfl", "sym_shlib" },
};

struct want_frame {
	const char *func, *src, *marker; /* marker: the call line of a return address */
};

static void check_frames(struct sym *s, const uint64_t *pcs, int n, const struct want_frame *w,
			 int nw)
{
	int k;
	struct sym_loc loc;
	for (k = 0; k < n; k++) {
		sym_addr(s, pcs[k], k > 0, &loc);
		if (loc.func && strcmp(loc.func, w[0].func) == 0)
			break;
	}
	ck_assert_msg(k < n, "no frame in '%s' among %d", w[0].func, n);
	ck_assert_int_ge(n - k, nw);
	for (int i = 0; i < nw; i++) {
		ck_assert_int_eq(sym_addr(s, pcs[k + i], 1, &loc), 0);
		ck_assert_pstr_eq(loc.func, w[i].func);
		if (!w[i].marker)
			continue;
		ck_assert_msg(loc.file && ends_with(loc.file, w[i].src), "frame %d file %s", i, loc.file);
		ck_assert_int_eq(loc.line, marker_line(w[i].src, w[i].marker));
	}
}

START_TEST(test_backtrace)
{
	const char *bin = bin_path(bt_cases[_i].bin);
	int shlib = strcmp(bt_cases[_i].bin, "sym_shlib") == 0;
	struct child c;
	child_start(bin, &c);
	uint64_t lock = shlib ? child_addr(&c, "symlib_state.lock") : 0;
	uint64_t srv_m = child_addr(&c, "srv.m"), inner = child_addr(&c, "fix_inner");

	struct sym *s = sym_new();
	ck_assert_int_eq(sym_set_unwinder(s, bt_cases[_i].unwinder), 0);
	ck_assert_str_eq(sym_unwinder_name(s), bt_cases[_i].unwinder);
	ck_assert_int_gt(sym_add_process(s, c.pid), 1);
	uint64_t pcs[64];
	int n = sym_backtrace(s, c.pid, c.pid, pcs, 64);
	const struct want_frame plain[] = {
		{ "fix_inner", "sym_a.c", "SYM-MARK:stop" },
		{ "fix_middle", "sym_main.c", "SYM-MARK:call_inner" },
		{ "fix_outer", "sym_a.c", "SYM-MARK:call_middle" },
		{ "main", "sym_main.c", "SYM-MARK:call_outer" },
	};
	const struct want_frame lib[] = {
		{ "fix_inner", "sym_a.c", "SYM-MARK:stop" },
		{ "symlib_call", "sym_lib.c", "SYM-MARK:lib_call" },
		{ "fix_middle", "sym_main.c", "SYM-MARK:call_lib" },
		{ "fix_outer", "sym_a.c", "SYM-MARK:call_middle" },
		{ "main", "sym_main.c", "SYM-MARK:call_outer" },
	};
	if (shlib)
		check_frames(s, pcs, n, lib, 5);
	else
		check_frames(s, pcs, n, plain, 4);

	/* The modules of the live process, with the biases they really have. */
	struct sym_module_info mi;
	char real[PATH_MAX], buf[128];
	ck_assert_int_eq(sym_module_get(s, 0, &mi), 0);
	ck_assert_ptr_nonnull(realpath(bin, real));
	ck_assert_str_eq(mi.path, real);
	ck_assert_uint_gt(mi.build_id_len, 0);
	ck_assert_uint_eq(mi.base, inner - symval(bin, "fix_inner"));
	ck_assert_uint_le(mi.lo, inner);
	ck_assert_uint_gt(mi.hi, srv_m);
	struct sym_loc loc;
	ck_assert_int_eq(sym_addr(s, inner, 0, &loc), 0);
	ck_assert_pstr_eq(loc.func, "fix_inner");
	ck_assert_str_eq(sym_var_name(s, srv_m, buf, sizeof(buf)), "srv.m");
	ck_assert_str_eq(sym_var_name(s, mi.base + symval(bin, "big_bss") + sizeof(big_bss) - 1, buf,
				      sizeof(buf)), "big_bss[65535]");
	if (shlib)
		ck_assert_str_eq(sym_var_name(s, lock, buf, sizeof(buf)), "symlib_state.lock");
	/* Nothing new the second time. */
	ck_assert_int_eq(sym_add_process(s, c.pid), 0);
	/* A second unwind reuses the backend's state and agrees. */
	uint64_t again[64];
	ck_assert_int_eq(sym_backtrace(s, c.pid, c.pid, again, 64), n);
	ck_assert_mem_eq(again, pcs, (size_t)n * sizeof(pcs[0]));
	ck_assert_int_eq(sym_backtrace(s, c.pid, c.pid, again, 2), 2);
	sym_free(s);
	child_end(&c);
}
END_TEST

/* A thread other than the main one, with each backend. */
START_TEST(test_backtrace_thread)
{
	const char *bin = bin_path("sym_O0_pie");
	struct child c;
	alarm(PTRACE_TIMEOUT_MS / 1000); /* waitpid(-1) has no deadline of its own */
	pid_t tid = child_start_thread(bin, &c);
	alarm(0);
	struct sym *s = sym_new();
	ck_assert_int_eq(sym_set_unwinder(s, bt_cases[_i].unwinder), 0);
	ck_assert_int_gt(sym_add_process(s, c.pid), 1);
	uint64_t pcs[64];
	int n = sym_backtrace(s, c.pid, tid, pcs, 64);
	const struct want_frame want[] = {
		{ "fix_inner", "sym_a.c", "SYM-MARK:stop" },
		{ "fix_middle", "sym_main.c", "SYM-MARK:call_inner" },
		{ "fix_outer", "sym_a.c", "SYM-MARK:call_middle" },
		{ "fix_thread_main", "sym_main.c", "SYM-MARK:thread_body" },
	};
	check_frames(s, pcs, n, want, 4);
	sym_free(s);
	child_end(&c);
}
END_TEST

/* A pid that is not traced cannot be unwound: an error, not a crash. */
START_TEST(test_backtrace_not_traced)
{
	struct sym *s = sym_new();
	uint64_t pcs[8];
	struct unit_capture c;
	ck_assert_int_eq(sym_set_unwinder(s, bt_cases[_i].unwinder), 0);
	unit_capture_start(&c);
	int n = sym_backtrace(s, 1, 1, pcs, 8);
	free(unit_capture_stop(&c));
	ck_assert_int_lt(n, 0);
	sym_free(s);
}
END_TEST

START_TEST(test_unwinder_choice)
{
	struct sym *s = sym_new();
	ck_assert_str_eq(sym_unwinder_name(s), "libunwind");
	ck_assert_int_lt(sym_set_unwinder(s, "bogus"), 0);
	ck_assert_str_eq(sym_unwinder_name(s), "libunwind");
	sym_free(s);
	setenv("AVTRACE_UNWINDER", "dwfl", 1);
	s = sym_new();
	ck_assert_str_eq(sym_unwinder_name(s), "dwfl");
	sym_free(s);
	struct unit_capture c;
	setenv("AVTRACE_UNWINDER", "nope", 1);
	unit_capture_start(&c);
	s = sym_new();
	char *err = unit_capture_stop(&c);
	ck_assert_str_eq(sym_unwinder_name(s), "libunwind");
	ck_assert_int_eq(count_substr(err, "'nope'"), 1);
	free(err);
	sym_free(s);
	unsetenv("AVTRACE_UNWINDER");
}
END_TEST

/* Can this process trace a child?  Fills why when not. */
static int ptrace_works(char *why, size_t len)
{
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(errno);
		raise(SIGSTOP);
		_exit(0);
	}
	int st, ok = 0;
	if (wait_timeout(pid, &st) < 0) {
		snprintf(why, len, "probe child did not stop");
	} else if (WIFEXITED(st)) {
		snprintf(why, len, "PTRACE_TRACEME: %s", strerror(WEXITSTATUS(st)));
	} else {
		errno = 0;
		long v = ptrace(PTRACE_PEEKUSER, pid, NULL, NULL);
		ok = !(v == -1 && errno);
		if (!ok)
			snprintf(why, len, "PTRACE_PEEKUSER: %s", strerror(errno));
	}
	kill(pid, SIGKILL);
	wait_timeout(pid, &st);
	return ok;
}

static void find_dirs(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		strcpy(exe, "tests/unit/x");
		n = (ssize_t)strlen(exe);
	}
	exe[n] = '\0';
	char *dir = dirname(exe);
	snprintf(bindir, sizeof(bindir), "%s/bin", dir);
	snprintf(fixdir, sizeof(fixdir), "%s/fixtures", dir);
}

static Suite *symbolizer_suite(int with_ptrace)
{
	Suite *su = suite_create("symbolizer");
	TCase *tc = tcase_create("sites");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_func_lines, 0, NDWARF);
	tcase_add_loop_test(tc, test_inline_chain, 0, NDWARF);
	tcase_add_loop_test(tc, test_return_site, 0, NDWARF);
	tcase_add_test(tc, test_module_table);
	suite_add_tcase(su, tc);

	tc = tcase_create("variables");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_var_names, 0, NDWARF);
	tcase_add_loop_test(tc, test_var_lookup, 0, NDWARF);
	suite_add_tcase(su, tc);

	tc = tcase_create("fallbacks");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_nodebug);
	tcase_add_test(tc, test_stripped);
	tcase_add_test(tc, test_build_id_match);
	tcase_add_test(tc, test_build_id_mismatch);
	tcase_add_test(tc, test_missing_file);
	suite_add_tcase(su, tc);

	tc = tcase_create("caches");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_cache_counts);
	tcase_add_test(tc, test_cache_speed);
	suite_add_tcase(su, tc);

	tc = tcase_create("unwind");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_unwinder_choice);
	if (with_ptrace) {
		int nbt = (int)(sizeof(bt_cases) / sizeof(bt_cases[0]));
		tcase_add_loop_test(tc, test_backtrace, 0, nbt);
		tcase_add_loop_test(tc, test_backtrace_thread, 0, 2);
		tcase_add_loop_test(tc, test_backtrace_not_traced, 0, 2);
	}
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	char why[256];
	find_dirs();
	int with_ptrace = ptrace_works(why, sizeof(why));
	if (!with_ptrace)
		printf("test_symbolizer: skipping backtrace tests: ptrace not permitted (%s)\n", why);
	return unit_run(symbolizer_suite(with_ptrace));
}
