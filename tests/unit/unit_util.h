/*
 * Shared by the unit tests: the suite runner, directories for tests that
 * write files, and stderr captured (messages checked) or silenced
 * (messages expected, not checked).
 */
#ifndef AVT_TESTS_UNIT_UTIL_H
#define AVT_TESTS_UNIT_UTIL_H

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs the suite, in this process when nofork (its tests share state on
 * purpose); Check prints its "100%: Checks: N, ..." line. */
static inline int unit_run_opts(Suite *s, bool nofork)
{
	SRunner *sr = srunner_create(s);
	if (nofork)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static inline int unit_run(Suite *s)
{
	return unit_run_opts(s, false);
}

static inline int unit_remove_entry(const char *p, const struct stat *st, int type,
				    struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(p);
}

/* Removes dir and all in it. */
static inline void unit_remove_tree(const char *dir)
{
	nftw(dir, unit_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Every test gets its own directory (unit_tmpdir, made by the fixture's
 * unit_tmpdir_new) inside one per run, which unit_run_in_dir removes with
 * all in it, also after failed tests (whose fixtures do not tear down). */
__attribute__((unused)) static char unit_suitedir[64];
__attribute__((unused)) static char unit_tmpdir[96];

static inline void unit_tmpdir_new(void)
{
	snprintf(unit_tmpdir, sizeof(unit_tmpdir), "%s/XXXXXX", unit_suitedir);
	ck_assert_ptr_nonnull(mkdtemp(unit_tmpdir));
}

/* template: "/tmp/name_XXXXXX". */
static inline int unit_run_in_dir(Suite *s, const char *template)
{
	snprintf(unit_suitedir, sizeof(unit_suitedir), "%s", template);
	if (!mkdtemp(unit_suitedir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	int rc = unit_run(s);
	unit_remove_tree(unit_suitedir);
	return rc;
}

/* avt_error() output of the code under test goes to a file, so the check
 * can see it and the suite's output stays clean. */
struct unit_capture {
	int saved;
	FILE *tmp;
};

static inline void unit_capture_start(struct unit_capture *c)
{
	fflush(stderr);
	c->saved = dup(2);
	c->tmp = tmpfile();
	ck_assert(c->saved >= 0 && c->tmp);
	dup2(fileno(c->tmp), 2);
}

/* Restores stderr; returns what was written (caller frees). */
static inline char *unit_capture_stop(struct unit_capture *c)
{
	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	long n = ftell(c->tmp);
	char *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	rewind(c->tmp);
	if (n > 0 && fread(buf, 1, (size_t)n, c->tmp) != (size_t)n)
		buf[0] = '\0';
	fclose(c->tmp);
	return buf;
}

/* Sends stderr to /dev/null until unit_quiet_end(the value returned). */
static inline int unit_quiet_begin(void)
{
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(null, 0);
	fflush(stderr);
	dup2(null, 2);
	close(null);
	return saved;
}

static inline void unit_quiet_end(int saved)
{
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
}

#endif
