/*
 * No circle of files inside tracer/ (docs/INTERNALS.md, "The tracer's
 * layers"): scripts/file-cycles over the built objects (nm: each undefined
 * symbol resolved to the object defining it) finds none, and does find
 * the one of a fixture whose two files call each other.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "unit_util.h"

static int run(const char *dir, char *out, size_t len)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd '%s' && python3 scripts/file-cycles %s 2>&1", AVT_SRCDIR, dir);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(tracer_has_no_circle)
{
	char out[4096];
	int rc = run("tracer", out, sizeof out);
	ck_assert_msg(rc == 0, "scripts/file-cycles tracer: exit %d:\n%s", rc, out);
}
END_TEST

START_TEST(checker_finds_a_circle)
{
	char out[4096];
	int rc = run("tests/unit/bin/cycle", out, sizeof out);
	ck_assert_msg(rc == 1, "file-cycles on a circle: exit %d:\n%s", rc, out);
	ck_assert_ptr_nonnull(strstr(out, "circle: cycle_a.c cycle_b.c"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tracer_layers");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, tracer_has_no_circle);
	tcase_add_test(tc, checker_finds_a_circle);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
