/*
 * tree_check_fork: a Check suite as C projects write them, in Check's
 * default CK_FORK mode (forced here, so that CK_FORK=no in the
 * environment cannot change it): every test runs in a child forked by the
 * runner, with no exec (issue 28, tests/e2e/test_tree28.sh).
 *
 *   test_trivial   passes; its child stays single-threaded
 *   test_tally     two threads each add to `shared_count`, reading it in
 *                  one critical section and writing it in a second one.
 *                  Natively the first thread is done before the second
 *                  (which does other work first) adds, and the total is
 *                  3; the order "read, read, write, write" loses an
 *                  update and ck_assert fails in the forked child.
 *
 * The fix is tree_check_fork_ok.c.
 * Usage: tree_check_fork     (exit 0 iff every test passed)
 * Sites: CHECK READ, CHECK WRITE, CHECK ASSERT below.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_count;

/* The bug: the lock is dropped between the read and the write. */
__attribute__((noinline)) static void add(long n)
{
	pthread_mutex_lock(&count_lock);
	long c = shared_count; /* CHECK READ */
	pthread_mutex_unlock(&count_lock);
	pthread_mutex_lock(&count_lock);
	shared_count = c + n; /* CHECK WRITE */
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
	ck_assert_int_eq(shared_count, 3); /* CHECK ASSERT */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tree_check_fork");
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
