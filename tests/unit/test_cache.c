/*
 * Unit tests of tracer/cache.c: the decoding results an exploration's
 * runs share (each run is a process forked from explore's parent).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/cache.h"
#include "tracer/tracer.h"
#include "unit_util.h"

START_TEST(t_off_until_shared)
{
	uint32_t v;
	size_t len;
	cache_put(cache_key(1, "x", 1), 7);
	ck_assert(!cache_get(cache_key(1, "x", 1), &v));
	cache_put_blob(cache_key(2, "y", 1), "abc", 3);
	ck_assert_ptr_null(cache_get_blob(cache_key(2, "y", 1), &len));
}
END_TEST

START_TEST(t_keys)
{
	ck_assert_uint_ne(cache_key(0, "", 0), 0);
	ck_assert_uint_ne(cache_key(1, "abc", 3), cache_key(2, "abc", 3)); /* the seed counts */
	ck_assert_uint_ne(cache_key(1, "abc", 3), cache_key(1, "abd", 3)); /* every byte counts */
	ck_assert_uint_eq(cache_key(1, "abc", 3), cache_key(1, "abc", 3));
}
END_TEST

/* What one process puts, the processes forked after sharing see: values,
 * blobs, many keys (probing past taken slots), and no false hit. */
START_TEST(t_shared_across_fork)
{
	ck_assert_int_eq(tracer_share_decoding(), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (uint32_t i = 0; i < 3000; i++)
			cache_put(cache_key(9, &i, sizeof i), i * 3 + 1);
		static const char blob[] = "the decoded sites of a module";
		cache_put_blob(cache_key(10, "m", 1), blob, sizeof blob);
		_exit(0);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unsigned hits = 0;
	for (uint32_t i = 0; i < 3000; i++) {
		uint32_t v;
		if (cache_get(cache_key(9, &i, sizeof i), &v)) {
			ck_assert_uint_eq(v, i * 3 + 1);
			hits++;
		}
	}
	ck_assert_uint_ge(hits, 2990); /* a few may find their probes all taken */
	uint32_t v;
	uint32_t absent = 5000;
	ck_assert(!cache_get(cache_key(9, &absent, sizeof absent), &v));
	size_t len;
	const char *b = cache_get_blob(cache_key(10, "m", 1), &len);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(len, sizeof "the decoded sites of a module");
	ck_assert_str_eq(b, "the decoded sites of a module");
	ck_assert_ptr_null(cache_get_blob(cache_key(10, "n", 1), &len));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("cache");
	/* order matters: sharing is for the life of the process */
	tcase_add_test(tc, t_off_until_shared);
	tcase_add_test(tc, t_keys);
	tcase_add_test(tc, t_shared_across_fork);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run_opts(suite(), true);
}
