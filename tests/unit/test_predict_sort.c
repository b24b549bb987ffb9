/*
 * predict/sort.h's radix sort (issue 30): the order of a stable
 * comparison sort on the same keys (ties in their first order), and the
 * passes it skips (the digits every key shares).
 */
#include <check.h>
#include <stdlib.h>

#include "predict/sort.h"
#include "unit_util.h"

static int kv_cmp(const void *pa, const void *pb)
{
	const struct pr_kv *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->val < b->val ? -1 : a->val > b->val; /* val: the position */
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* n keys from gen(), sorted both ways; the passes made */
static unsigned check_sorted(size_t n, uint64_t (*gen)(uint64_t *s))
{
	struct pr_kv *a = malloc(n * sizeof *a), *ref = malloc(n * sizeof *ref),
		     *tmp = malloc(n * sizeof *tmp);
	uint64_t s = 88172645463325252ULL;
	ck_assert(a && ref && tmp);
	for (size_t i = 0; i < n; i++)
		ref[i] = a[i] = (struct pr_kv){ gen(&s), (uint32_t)i };
	qsort(ref, n, sizeof *ref, kv_cmp);
	unsigned passes = pr_sort_kv(a, tmp, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(a[i].key, ref[i].key);
		ck_assert_uint_eq(a[i].val, ref[i].val);
	}
	free(a);
	free(ref);
	free(tmp);
	return passes;
}

static uint64_t any_key(uint64_t *s)
{
	return next(s);
}

/* few distinct keys (many ties), in bytes 0, 2 and 7 only */
static uint64_t tied_key(uint64_t *s)
{
	uint64_t r = next(s);
	return (r & 3) | (r >> 8 & 1) << 16 | (r >> 16 & 1) << 56;
}

/* addresses of globals: one page, 8-byte aligned */
static uint64_t addr_key(uint64_t *s)
{
	return 0x55d0c0de0000ULL + (next(s) % 512) * 8;
}

START_TEST(sorts_like_a_stable_sort)
{
	ck_assert_uint_eq(check_sorted(10000, any_key), 8);
	ck_assert_uint_eq(check_sorted(10000, tied_key), 3);
	ck_assert_uint_le(check_sorted(10000, addr_key), 2);
	ck_assert_uint_eq(check_sorted(1, any_key), 0);
	ck_assert_uint_eq(check_sorted(0, any_key), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_sort");
	TCase *tc = tcase_create("sort");
	tcase_add_test(tc, sorts_like_a_stable_sort);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
