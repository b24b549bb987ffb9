/*
 * The access feature's planting decisions (tracer/access_scan.c), without
 * ptrace or ELF: which instructions of a function become access sites, and
 * where a short instruction may be planted in the short form (a cover).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/access_scan.h"
#include "unit_util.h"

#define RT 0x401000ull

static struct dec *dec;
static struct scan sc;

static void setup(void)
{
	dec = dec_new();
	ck_assert_ptr_nonnull(dec);
	memset(&sc, 0, sizeof sc);
}

static void teardown(void)
{
	free(sc.c);
	free(sc.targets);
	free(sc.indirect);
	free(sc.pieces);
	free(sc.edges);
	dec_free(dec);
}

/* Scans code as function f at RT; the number of candidate sites. */
static size_t scan(const uint8_t *code, size_t len, const char *f)
{
	scan_func(dec, &sc, code, len, RT, f);
	return sc.n;
}

START_TEST(t_plain_load_is_a_site)
{
	static const uint8_t code[] = { 0x8b, 0x07, /* mov (%rdi),%eax */ 0xc3 };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 1);
	ck_assert_uint_eq(sc.c[0].addr, RT);
	ck_assert_uint_eq(sc.untrusted, 0);
}
END_TEST

START_TEST(t_thread_local_is_none)
{
	static const uint8_t code[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0, /* mov %fs:0x28,%rax */
					0xc3 };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 0);
}
END_TEST

/* With a frame pointer set up, rbp-relative accesses are the function's
 * own frame: no site; nor rsp-relative ones, frame pointer or not. */
START_TEST(t_own_frame_is_none)
{
	static const uint8_t code[] = { 0x55,                   /* push %rbp */
					0x48, 0x89, 0xe5,       /* mov %rsp,%rbp */
					0x8b, 0x45, 0xf8,       /* mov -0x8(%rbp),%eax */
					0x8b, 0x44, 0x24, 0x08, /* mov 0x8(%rsp),%eax */
					0x5d, 0xc3 };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 0);
}
END_TEST

/* An address of the frame taken (lea of an rbp slot): another thread may
 * reach the frame, so its accesses are sites. */
START_TEST(t_escaping_frame_is_a_site)
{
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5,
					0x48, 0x8d, 0x7d, 0xf8, /* lea -0x8(%rbp),%rdi */
					0x8b, 0x45, 0xf8,       /* mov -0x8(%rbp),%eax */
					0x5d, 0xc3 };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 1);
	ck_assert_uint_eq(sc.c[0].addr, RT + 8);
}
END_TEST

/* A rip-relative load of read-only data can never race; the same load of
 * writable data is a site. */
START_TEST(t_read_only_data_is_none)
{
	static const uint8_t code[] = { 0x8b, 0x05, 0x00, 0x02, 0x00, 0x00, /* mov 0x200(%rip),%eax */
					0xc3 };
	uint64_t target = RT + 6 + 0x200;
	sc.ro[sc.nro++] = (struct func){ target - 16, target + 16, false, NULL };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 0);
	sc.nro = 0;
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 1);
}
END_TEST

/* A byte the decoder cannot follow: the whole function is left alone (an
 * int3 planted past it could land inside an instruction). */
START_TEST(t_unsure_function_is_left_alone)
{
	static const uint8_t code[] = { 0x8b, 0x07, 0x06, /* not an x86-64 instruction */
					0x8b, 0x07, 0xc3 };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 0);
	ck_assert_uint_eq(sc.untrusted, 1);
	ck_assert_uint_eq(sc.nindirect, 1); /* and no cover in its function */
}
END_TEST

/* A short site of a named function is covered by what follows it; none
 * for code with no symbol, or where C++ exceptions may land. */
static const uint8_t short_site[] = { 0x8b, 0x07,       /* mov (%rdi),%eax: 2 bytes */
				      0x89, 0xc1,       /* mov %eax,%ecx */
				      0x83, 0xc1, 0x01, /* add $1,%ecx */
				      0xc3 };

START_TEST(t_short_site_gets_a_cover)
{
	ck_assert_uint_eq(scan(short_site, sizeof short_site, "f"), 1);
	ck_assert_uint_ge(sc.c[0].cover, 5);
	scan_check_covers(&sc, false);
	ck_assert_uint_ge(sc.c[0].cover, 5);
	ck_assert_ptr_null(sc.c[0].func);
}
END_TEST

START_TEST(t_no_cover_without_a_symbol)
{
	ck_assert_uint_eq(scan(short_site, sizeof short_site, NULL), 1);
	ck_assert_uint_eq(sc.c[0].cover, 0);
}
END_TEST

START_TEST(t_no_cover_with_landing_pads)
{
	ck_assert_uint_eq(scan(short_site, sizeof short_site, "f"), 1);
	scan_check_covers(&sc, true);
	ck_assert_uint_eq(sc.c[0].cover, 0);
}
END_TEST

/* A branch into the displaced bytes: the cover goes (the long form, or
 * the int3, stands instead). */
START_TEST(t_no_cover_where_a_branch_lands)
{
	static const uint8_t code[] = { 0xeb, 0x02,             /* jmp +2: to the mov %eax,%ecx */
					0x8b, 0x07,             /* mov (%rdi),%eax */
					0x89, 0xc1, 0x83, 0xc1, 0x01, 0xc3 };
	ck_assert_uint_eq(scan(code, sizeof code, "f"), 1);
	ck_assert_uint_eq(sc.c[0].addr, RT + 2);
	ck_assert_uint_ge(sc.c[0].cover, 5);
	scan_check_covers(&sc, false);
	ck_assert_uint_eq(sc.c[0].cover, 0);
}
END_TEST

/* Groups mode (a module with no symbol table, functions from its FDEs):
 * piece A (a short site, then a jmp or a call to B), piece B (what
 * the second argument gives), piece C (a short site, unrelated). */
#define B_AT (RT + 0x100)
#define C_AT (RT + 0x200)

static void scan_abc(uint8_t a_branch, const uint8_t *b, size_t blen)
{
	const uint8_t a[] = { 0x8b, 0x07, 0x89, 0xc1, 0x83, 0xc1, 0x01,
			      a_branch, 0xf4, 0x00, 0x00, 0x00, /* jmp/call B_AT */
			      0xc3 };
	sc.groups = true;
	scan_func(dec, &sc, a, sizeof a, RT, "fde@a");
	scan_func(dec, &sc, b, blen, B_AT, "fde@b");
	scan_func(dec, &sc, short_site, sizeof short_site, C_AT, "fde@c");
	ck_assert_uint_eq(sc.n, 2);
	ck_assert_uint_ge(sc.c[0].cover, 5);
	ck_assert_uint_ge(sc.c[1].cover, 5);
	scan_check_covers(&sc, false);
}

static const uint8_t plain_b[] = { 0x31, 0xc0, 0xc3 };       /* xor %eax,%eax; ret */
static const uint8_t indirect_b[] = { 0xff, 0xe0, 0xc3 };    /* jmp *%rax */
static const uint8_t undecodable_b[] = { 0x06, 0x31, 0xc0, 0xc3 };

START_TEST(t_fde_functions_get_covers)
{
	scan_abc(0xe9, plain_b, sizeof plain_b);
	ck_assert_uint_eq(sc.npieces, 3);
	ck_assert_uint_eq(sc.nedges, 1);
	ck_assert_uint_ge(sc.c[0].cover, 5);
	ck_assert_uint_ge(sc.c[1].cover, 5);
}
END_TEST

/* B's indirect jmp may land in A (its hot part): no cover in A; C,
 * unrelated, keeps its. */
START_TEST(t_fde_indirect_jump_takes_its_group)
{
	scan_abc(0xe9, indirect_b, sizeof indirect_b);
	ck_assert_uint_eq(sc.c[0].cover, 0);
	ck_assert_uint_ge(sc.c[1].cover, 5);
}
END_TEST

/* A call joins nothing: a call enters B at its start. */
START_TEST(t_fde_call_joins_nothing)
{
	scan_abc(0xe8, indirect_b, sizeof indirect_b);
	ck_assert_uint_ge(sc.c[0].cover, 5);
	ck_assert_uint_ge(sc.c[1].cover, 5);
}
END_TEST

/* An undecodable FDE takes its group's covers, not the module's. */
START_TEST(t_fde_undecodable_takes_its_group_only)
{
	scan_abc(0xe9, undecodable_b, sizeof undecodable_b);
	ck_assert_uint_eq(sc.untrusted, 1);
	ck_assert(!sc.no_covers);
	ck_assert_uint_eq(sc.c[0].cover, 0);
	ck_assert_uint_ge(sc.c[1].cover, 5);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("access_scan");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_plain_load_is_a_site);
	tcase_add_test(tc, t_thread_local_is_none);
	tcase_add_test(tc, t_own_frame_is_none);
	tcase_add_test(tc, t_escaping_frame_is_a_site);
	tcase_add_test(tc, t_read_only_data_is_none);
	tcase_add_test(tc, t_unsure_function_is_left_alone);
	tcase_add_test(tc, t_short_site_gets_a_cover);
	tcase_add_test(tc, t_no_cover_without_a_symbol);
	tcase_add_test(tc, t_no_cover_with_landing_pads);
	tcase_add_test(tc, t_no_cover_where_a_branch_lands);
	tcase_add_test(tc, t_fde_functions_get_covers);
	tcase_add_test(tc, t_fde_indirect_jump_takes_its_group);
	tcase_add_test(tc, t_fde_call_joins_nothing);
	tcase_add_test(tc, t_fde_undecodable_takes_its_group_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
