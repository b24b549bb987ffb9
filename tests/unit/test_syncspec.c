/*
 * Sync specs (tracer/syncspec.c, docs/sync-spec.md): what each line
 * means, and "FILE:LINE: what is wrong" for every kind of mistake; GLib's
 * built-in spec parses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/syncspec.h"
#include "tracer/tracer.h"
#include "unit_util.h"

static const struct sync_func *find(const struct sync_spec *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name))
			return &s->f[i];
	ck_abort_msg("no %s in the spec", name);
	return NULL;
}

START_TEST(meanings)
{
	struct sync_spec s;
	char err[256] = "";
	const char *text = "# a comment\n"
			   "my_lock acquire\n"
			   "\n"
			   "library libfoo.so   # from here on\n"
			   "foo_trylock try-acquire arg=2 ok=nonzero recursive\n"
			   "foo_wait timed-wait arg=2 lock=1 ok=nonzero\n"
			   "foo_bitlock acquire bit=2\n"
			   "library program\n"
			   "spawn thread-create\n";
	ck_assert_int_eq(syncspec_parse(text, "t.spec", &s, err, sizeof err), 0);
	ck_assert_uint_eq(s.n, 5);
	const struct sync_func *f = find(&s, "my_lock");
	ck_assert_int_eq(f->op, SYNC_ACQUIRE);
	ck_assert_int_eq(f->arg, 0);
	ck_assert_str_eq(f->lib, "");
	ck_assert_int_eq(f->line, 2);
	ck_assert_int_eq(f->bit_arg, -1);
	ck_assert(!f->recursive && !f->ok_nonzero);
	f = find(&s, "foo_trylock");
	ck_assert_int_eq(f->op, SYNC_TRY_ACQUIRE);
	ck_assert_int_eq(f->arg, 1);
	ck_assert(f->recursive && f->ok_nonzero);
	ck_assert_str_eq(f->lib, "libfoo.so");
	f = find(&s, "foo_wait");
	ck_assert_int_eq(f->op, SYNC_TIMED_WAIT);
	ck_assert_int_eq(f->arg, 1);
	ck_assert_int_eq(f->lock_arg, 0);
	f = find(&s, "foo_bitlock");
	ck_assert_int_eq(f->bit_arg, 1);
	f = find(&s, "spawn");
	ck_assert_int_eq(f->op, SYNC_THREAD_CREATE);
	ck_assert_str_eq(f->lib, "");
	syncspec_free(&s);
}
END_TEST

/* Each bad text, the line and the words of its message. */
static const struct {
	const char *text, *msg;
} bad[] = {
	{ "a acquire\nb relase\n", "t.spec:2: unknown operation 'relase'" },
	{ "a\n", "t.spec:1: a: an operation is missing" },
	{ "1a acquire\n", "t.spec:1: '1a' is not a function name" },
	{ "a acquire\n\na release\n", "t.spec:3: a is already given at line 1" },
	{ "a acquire lock=2\n", "t.spec:1: 'lock=' is for wait and timed-wait only" },
	{ "a wait arg=2\n", "t.spec:1: a: the lock (argument 2) cannot be" },
	{ "a acquire arg=7\n", "t.spec:1: arg=7: an argument number from 1 to 6" },
	{ "a acquire arg=0\n", "t.spec:1: arg=0: an argument number" },
	{ "a release recursive\n", "t.spec:1: 'recursive' is for acquire" },
	{ "a acquire ok=nonzero\n", "t.spec:1: 'ok=' is for the try-acquires" },
	{ "a try-acquire ok=yes\n", "t.spec:1: ok=yes: 'ok=zero' or 'ok=nonzero'" },
	{ "a acquire fast\n", "t.spec:1: unknown option 'fast'" },
	{ "a thread-join arg=1\n", "t.spec:1: thread-join takes no object argument" },
	{ "library\n", "t.spec:1: 'library NAME': one name" },
	{ "library lib/x.so\n", "t.spec:1: 'lib/x.so' is not a library's file name" },
	{ "a acquire bit=1\n", "t.spec:1: a: bit= and arg= name the same argument" },
	{ "a signal bit=2\n", "t.spec:1: 'bit=' is for acquire, release and try-acquire only" },
	{ "a b c d e f g h i j k\n", "t.spec:1: too many words" },
};

START_TEST(mistakes)
{
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct sync_spec s;
		char err[256] = "";
		ck_assert_int_eq(syncspec_parse(bad[i].text, "t.spec", &s, err, sizeof err), -1);
		ck_assert_msg(!strncmp(err, bad[i].msg, strlen(bad[i].msg)), "'%s': got '%s', want '%s...'",
			      bad[i].text, err, bad[i].msg);
		ck_assert_uint_eq(s.n, 0);
	}
}
END_TEST

START_TEST(glib_parses)
{
	struct sync_spec s;
	char err[256] = "";
	ck_assert_msg(syncspec_parse(syncspec_glib, "glib", &s, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(find(&s, "g_mutex_lock")->op, SYNC_ACQUIRE);
	ck_assert_str_eq(find(&s, "g_mutex_lock")->lib, "libglib-2.0.so");
	ck_assert(find(&s, "g_mutex_trylock")->ok_nonzero);
	ck_assert(find(&s, "g_rec_mutex_lock")->recursive);
	ck_assert_int_eq(find(&s, "g_cond_wait")->lock_arg, 1);
	ck_assert_int_eq(find(&s, "g_rw_lock_reader_lock")->op, SYNC_READ_ACQUIRE);
	ck_assert_int_eq(find(&s, "g_bit_lock")->bit_arg, 1);
	syncspec_free(&s);
	ck_assert_int_eq(tracer_sync_spec_check(syncspec_glib, "glib", err, sizeof err), 0);
}
END_TEST

/* The checks of a user's file: avtrace's own hooks are not a spec's, and
 * a file that cannot be read says so. */
START_TEST(user_files)
{
	char err[512] = "", *text = NULL;
	ck_assert_int_eq(tracer_sync_spec_check("x acquire\npthread_mutex_lock acquire\n", "u.spec", err,
						sizeof err), -1);
	ck_assert_str_eq(err, "u.spec:2: pthread_mutex_lock is one of avtrace's own hooks: a spec cannot change it");
	ck_assert_int_eq(tracer_sync_spec_load("/nonexistent/x.spec", &text, err, sizeof err), -1);
	ck_assert_ptr_null(text);
	ck_assert(strstr(err, "/nonexistent/x.spec"));
	char path[] = "/tmp/avt-syncspec-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "my_lock acquire\n", 16), 16);
	close(fd);
	ck_assert_int_eq(tracer_sync_spec_load(path, &text, err, sizeof err), 0);
	ck_assert_str_eq(text, "my_lock acquire\n");
	free(text);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncspec");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, meanings);
	tcase_add_test(tc, mistakes);
	tcase_add_test(tc, glib_parses);
	tcase_add_test(tc, user_files);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
