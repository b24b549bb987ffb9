/*
 * tree_check_fork_ok: tree_check_fork.c fixed: a Check suite in CK_FORK
 * mode (forced) whose test_tally adds to `shared_count` in one critical
 * section, so no order of the two threads loses an update: avtrace test
 * must exit 0 with no report (issue 28, tests/e2e/test_tree28.sh).
 *
 * Usage: tree_check_fork_ok     (exit 0 iff every test passed)
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_count;

__attribute__((noinline)) static void add(long n)
{
	pthread_mutex_lock(&count_lock);
	long c = shared_count;
	shared_count = c + n;
	pthread_mutex_unlock(&count_lock);
}

/* Other work first (no shared memory, no lock): natively the first
 * deposit is long done when the second starts, even on a loaded machine
 * (without it, one run in a hundred of tree_forktwo lost a deposit). */
__attribute__((noinline)) static void other_work(void)
{
	for (volatile long i = 0; i < 20000; i++)
		;
}

static void *adder(void *arg)
{
	if ((intptr_t)arg == 2)
		other_work();
	add((long)(intptr_t)arg);
	return NULL;
}

START_TEST(test_trivial)
{
	ck_assert_int_eq(2 + 2, 4);
}
END_TEST

START_TEST(test_tally)
{
	pthread_t a, b;
	ck_assert_int_eq(pthread_create(&a, NULL, adder, (void *)1), 0);
	ck_assert_int_eq(pthread_create(&b, NULL, adder, (void *)2), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	ck_assert_int_eq(shared_count, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tree_check_fork_ok");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_trivial);
	tcase_add_test(tc, test_tally);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
