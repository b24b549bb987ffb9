/*
 * Shared by the predict unit tests: building call stacks on the trace
 * being written, and the suite runner.  Include it after declaring the
 * file's `static struct pr_tracebuf *tb;`.
 */
#ifndef AVT_TESTS_PREDICT_TEST_H
#define AVT_TESTS_PREDICT_TEST_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include "predict/tracebuf.h"

/* stack(seq, depth, off0, inv0, off1, inv1, ...): innermost frame first. */
__attribute__((unused)) static void stack(uint32_t seq, uint32_t depth, ...)
{
	struct avt_frame f[8] = { { 0, 0, 0, 0 } };
	va_list ap;
	va_start(ap, depth);
	for (uint32_t i = 0; i < depth; i++) {
		f[i].off = va_arg(ap, uint64_t);
		f[i].inv = va_arg(ap, uint32_t);
	}
	va_end(ap);
	ck_assert_int_eq(pr_tracebuf_stack(tb, seq, f, depth), 0);
}

/* Runs the suite; Check prints its "100%: Checks: N, ..." line. */
static inline int predict_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
