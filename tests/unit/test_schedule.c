/*
 * Schedule files: canonical round trip, every malformed line refused with
 * its line number, comments kept, observed schedules built from events.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/event.h"
#include "trace/schedule.h"
#include "unit_util.h"

static char path[160];

static void setup(void)
{
	unit_tmpdir_new();
	snprintf(path, sizeof(path), "%s/0007.sched", unit_tmpdir);
}

static void write_text(const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

static char *slurp(const char *p)
{
	FILE *fp = fopen(p, "r");
	char *buf = calloc(1, 4096);

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_gt(fread(buf, 1, 4095, fp), 0);
	fclose(fp);
	return buf;
}

static struct schedule *read_ok(void)
{
	char err[512] = "";
	struct schedule *s = schedule_read(path, err, sizeof(err));

	ck_assert_msg(s != NULL, "read: %s", err);
	return s;
}

static void assert_step(const struct schedule *s, size_t i, uint32_t thread,
			uint32_t count)
{
	ck_assert_uint_lt(i, s->nsteps);
	ck_assert_uint_eq(s->steps[i].thread, thread);
	ck_assert_uint_eq(s->steps[i].count, count);
}

static const char canonical[] =
	"avtrace-schedule 1\n"
	"# 7: RWR on src.n \xe2\x80\x94 T1 reads at vec.c:17, T2 writes at vec.c:40\n"
	"#\n"
	"# rank 1\n"
	"run T0 5\n"
	"run T1 3\n"
	"run T2 6\n"
	"run T1 1\n"
	"free\n";

static struct schedule *build_example(void)
{
	struct schedule *s = schedule_new();

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(schedule_add_comment(s, "7: RWR on src.n \xe2\x80\x94 T1 reads "
					      "at vec.c:17, T2 writes at vec.c:40"), 0);
	ck_assert_int_eq(schedule_add_comment(s, ""), 0);
	ck_assert_int_eq(schedule_add_comment(s, "rank 1"), 0);
	ck_assert_int_eq(schedule_append_run(s, 0, 5), 0);
	ck_assert_int_eq(schedule_append_run(s, 1, 1), 0);
	ck_assert_int_eq(schedule_append_run(s, 1, 2), 0);
	ck_assert_int_eq(schedule_append_run(s, 2, 6), 0);
	ck_assert_int_eq(schedule_append_run(s, 1, 1), 0);
	s->has_free = 1;
	return s;
}

START_TEST(test_round_trip)
{
	struct schedule *s = build_example();
	struct schedule *r;
	char tmp[sizeof(path) + 4];
	char *text;

	ck_assert_int_eq(schedule_write(s, path), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	text = slurp(path);
	ck_assert_str_eq(text, canonical);
	free(text);
	r = read_ok();
	ck_assert_uint_eq(r->nsteps, s->nsteps);
	for (size_t i = 0; i < s->nsteps; i++)
		assert_step(r, i, s->steps[i].thread, s->steps[i].count);
	ck_assert_int_eq(r->has_free, 1);
	ck_assert_uint_eq(r->ncomments, s->ncomments);
	for (size_t i = 0; i < s->ncomments; i++)
		ck_assert_str_eq(r->comments[i], s->comments[i]);
	ck_assert_uint_eq(schedule_total_events(r), 15);
	schedule_free(r);
	schedule_free(s);
}
END_TEST

START_TEST(test_write_fp)
{
	struct schedule *s = build_example();
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(schedule_write_fp(s, fp), 0);
	fclose(fp);
	ck_assert_str_eq(buf, canonical);
	free(buf);
	schedule_free(s);
}
END_TEST

START_TEST(test_write_replaces_atomically)
{
	struct schedule *s = schedule_new();
	struct schedule *r;

	write_text("old contents that are not a schedule\n");
	ck_assert_int_eq(schedule_append_run(s, 3, 2), 0);
	ck_assert_int_eq(schedule_write(s, path), 0);
	r = read_ok();
	ck_assert_uint_eq(r->nsteps, 1);
	assert_step(r, 0, 3, 2);
	ck_assert_int_eq(r->has_free, 0);
	ck_assert_uint_eq(r->ncomments, 0);
	schedule_free(r);
	schedule_free(s);
}
END_TEST

START_TEST(test_write_fails)
{
	struct schedule *s = schedule_new();

	char want[256];
	struct unit_capture cap;
	char *msg;

	snprintf(path, sizeof(path), "%s/no-dir/0001.sched", unit_tmpdir);
	unit_capture_start(&cap);
	ck_assert_int_eq(schedule_write(s, path), -1);
	msg = unit_capture_stop(&cap);
	snprintf(want, sizeof(want), "avtrace: cannot write schedule '%s': No such "
		 "file or directory\n", path);
	ck_assert_str_eq(msg, want);
	free(msg);
	ck_assert_int_eq(access(path, F_OK), -1);

	/* A zero-count step would be written but unreadable. */
	snprintf(path, sizeof(path), "%s/0001.sched", unit_tmpdir);
	s->steps = calloc(1, sizeof(*s->steps));
	s->nsteps = 1;
	unit_capture_start(&cap);
	ck_assert_int_eq(schedule_write(s, path), -1);
	msg = unit_capture_stop(&cap);
	ck_assert_pstr_eq(strstr(msg, "step 1 has no events"), "step 1 has no events\n");
	free(msg);
	ck_assert_int_eq(access(path, F_OK), -1);
	schedule_free(s);
}
END_TEST

/* A full disk is reported, not ignored. */
START_TEST(test_write_fp_fails)
{
	struct schedule *s = build_example();
	FILE *fp = fopen("/dev/full", "w");
	struct unit_capture cap;
	char *msg;

	if (!fp)
		return; /* no /dev/full in this container: nothing to test */
	unit_capture_start(&cap);
	ck_assert_int_eq(schedule_write_fp(s, fp), -1);
	msg = unit_capture_stop(&cap);
	ck_assert_str_eq(msg, "avtrace: cannot write schedule: No space left on device\n");
	free(msg);
	fclose(fp);
	schedule_free(s);
}
END_TEST

static const struct {
	const char *text;
	const char *want; /* after "PATH" */
} malformed[] = {
	{ "avtrace-schedule 1\nrun T0 1\nrum T1 2\n", ":3: unknown directive 'rum'" },
	{ "", ":1: missing header 'avtrace-schedule 1'" },
	{ "\navtrace-schedule 1\n", ":1: missing header 'avtrace-schedule 1'" },
	{ "# prediction 3\navtrace-schedule 1\n", ":1: missing header" },
	{ "run T0 1\n", ":1: missing header 'avtrace-schedule 1'" },
	{ "avtrace-schedule\n", ":1: missing header 'avtrace-schedule 1'" },
	{ "avtrace-schedule 2\nrun T0 1\n", ":1: unsupported schedule version 2" },
	{ "avtrace-schedule one\n", ":1: bad schedule version 'one'" },
	{ "avtrace-schedule 1 extra\n", ":1: trailing text 'extra'" },
	{ "avtrace-schedule 1\n\nrun X1 3\n", ":3: bad thread 'X1' (expected T<number>)" },
	{ "avtrace-schedule 1\nrun T 3\n", ":2: bad thread 'T' (expected T<number>)" },
	{ "avtrace-schedule 1\nrun T-1 3\n", ":2: bad thread 'T-1'" },
	{ "avtrace-schedule 1\nrun t1 3\n", ":2: bad thread 't1'" },
	{ "avtrace-schedule 1\nrun T4294967296 3\n", ":2: bad thread 'T4294967296'" },
	{ "avtrace-schedule 1\nrun 3\n", ":2: bad thread '3'" },
	{ "avtrace-schedule 1\nrun\n", ":2: 'run' needs a thread and a count" },
	{ "avtrace-schedule 1\nrun T0\n", ":2: count must be a positive integer" },
	{ "avtrace-schedule 1\nrun T0 0\n", ":2: count must be a positive integer" },
	{ "avtrace-schedule 1\nrun T0 -3\n", ":2: count must be a positive integer" },
	{ "avtrace-schedule 1\nrun T0 +3\n", ":2: count must be a positive integer" },
	{ "avtrace-schedule 1\nrun T0 3x\n", ":2: count must be a positive integer" },
	{ "avtrace-schedule 1\nrun T0 4294967296\n", ":2: count must be a positive integer" },
	{ "avtrace-schedule 1\nrun T0 1\nfree\nrun T1 1\n", ":4: 'run' after 'free'" },
	{ "avtrace-schedule 1\nrun T0 1 foo\n", ":2: trailing text 'foo'" },
	{ "avtrace-schedule 1\nrun T0 1 foo bar  # c\n", ":2: trailing text 'foo bar'" },
	{ "avtrace-schedule 1\nfree now\n", ":2: trailing text 'now'" },
	{ "avtrace-schedule 1\nfree\nfree\n", ":3: duplicate 'free'" },
	{ "avtrace-schedule 1\n# ok\n\n   \n# ok\nRUN T0 1\n", ":6: unknown directive 'RUN'" },
};

START_TEST(test_malformed)
{
	char err[512] = "";
	char want[256];
	struct schedule *s;

	write_text(malformed[_i].text);
	s = schedule_read(path, err, sizeof(err));
	ck_assert_msg(s == NULL, "accepted case %d", _i);
	snprintf(want, sizeof(want), "%s%s", path, malformed[_i].want);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
		      "case %d: got '%s', want '%s'", _i, err, want);
}
END_TEST

START_TEST(test_nonexistent)
{
	char err[512] = "";

	snprintf(path, sizeof(path), "%s/none.sched", unit_tmpdir);
	ck_assert_ptr_null(schedule_read(path, err, sizeof(err)));
	ck_assert_msg(strstr(err, "cannot open '") && strstr(err, path) &&
		      strstr(err, "No such file or directory"), "'%s'", err);
}
END_TEST

START_TEST(test_comments_and_blanks)
{
	struct schedule *s;

	write_text("avtrace-schedule 1   # header comment is not kept\r\n"
		   "# first\n"
		   "\n"
		   "   # indented\n"
		   "\t\n"
		   "run T0 5        # trailing, not kept\n"
		   "#no space\n"
		   "#\n"
		   "#  two spaces\r\n"
		   "run\tT12\t7\r\n"
		   "# after # another hash\n"
		   "free            # from here on\n"
		   "# last");
	s = read_ok();
	ck_assert_uint_eq(s->nsteps, 2);
	assert_step(s, 0, 0, 5);
	assert_step(s, 1, 12, 7);
	ck_assert_int_eq(s->has_free, 1);
	ck_assert_uint_eq(s->ncomments, 7);
	ck_assert_str_eq(s->comments[0], "first");
	ck_assert_str_eq(s->comments[1], "indented");
	ck_assert_str_eq(s->comments[2], "no space");
	ck_assert_str_eq(s->comments[3], "");
	ck_assert_str_eq(s->comments[4], " two spaces");
	ck_assert_str_eq(s->comments[5], "after # another hash");
	ck_assert_str_eq(s->comments[6], "last");
	schedule_free(s);
}
END_TEST

/* Steps are kept as written (replay numbers them); append merges. */
START_TEST(test_read_keeps_steps)
{
	struct schedule *s;

	write_text("avtrace-schedule 1\nrun T1 2\nrun T1 3\n");
	s = read_ok();
	ck_assert_uint_eq(s->nsteps, 2);
	ck_assert_int_eq(s->has_free, 0);
	ck_assert_uint_eq(schedule_total_events(s), 5);
	schedule_free(s);
}
END_TEST

START_TEST(test_append_run)
{
	struct schedule *s = schedule_new();

	ck_assert_int_eq(schedule_append_run(s, 0, 0), -1);
	ck_assert_uint_eq(s->nsteps, 0);
	ck_assert_int_eq(schedule_append_run(s, 0, 2), 0);
	ck_assert_int_eq(schedule_append_run(s, 0, 3), 0);
	ck_assert_int_eq(schedule_append_run(s, 1, 1), 0);
	ck_assert_int_eq(schedule_append_run(s, 0, 1), 0);
	ck_assert_uint_eq(s->nsteps, 3);
	assert_step(s, 0, 0, 5);
	assert_step(s, 1, 1, 1);
	assert_step(s, 2, 0, 1);
	/* A count that would overflow starts a new step of the same thread. */
	ck_assert_int_eq(schedule_append_run(s, 0, UINT32_MAX), 0);
	ck_assert_uint_eq(s->nsteps, 4);
	assert_step(s, 3, 0, UINT32_MAX);
	ck_assert_uint_eq(schedule_total_events(s), 7ull + UINT32_MAX);
	s->has_free = 1;
	ck_assert_int_eq(schedule_append_run(s, 1, 1), -1);
	ck_assert_uint_eq(s->nsteps, 4);
	schedule_free(s);
}
END_TEST

START_TEST(test_many_steps)
{
	struct schedule *s = schedule_new();
	struct schedule *r;

	for (uint32_t i = 0; i < 5000; i++)
		ck_assert_int_eq(schedule_append_run(s, i % 3, i + 1), 0);
	ck_assert_uint_eq(s->nsteps, 5000);
	ck_assert_int_eq(schedule_write(s, path), 0);
	r = read_ok();
	ck_assert_uint_eq(r->nsteps, 5000);
	for (uint32_t i = 0; i < 5000; i++)
		assert_step(r, i, i % 3, i + 1);
	schedule_free(r);
	schedule_free(s);
}
END_TEST

START_TEST(test_comment_line_breaks)
{
	struct schedule *s = schedule_new();
	struct schedule *r;

	ck_assert_int_eq(schedule_add_comment(s, "two\nlines\r"), 0);
	ck_assert_str_eq(s->comments[0], "two lines ");
	ck_assert_int_eq(schedule_write(s, path), 0);
	r = read_ok();
	ck_assert_uint_eq(r->ncomments, 1);
	ck_assert_str_eq(r->comments[0], "two lines ");
	ck_assert_uint_eq(r->nsteps, 0);
	schedule_free(r);
	schedule_free(s);
}
END_TEST

static struct avt_event ev_of(uint32_t thread)
{
	struct avt_event ev = { .thread = thread, .kind = AVT_EV_READ };
	return ev;
}

START_TEST(test_from_events)
{
	static const uint32_t order[] = { 0, 0, 1, 1, 1, 0, 2, 2, 0 };
	struct avt_event ev[9];
	struct schedule *s;

	for (size_t i = 0; i < 9; i++)
		ev[i] = ev_of(order[i]);
	s = schedule_from_events(ev, 9);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nsteps, 5);
	assert_step(s, 0, 0, 2);
	assert_step(s, 1, 1, 3);
	assert_step(s, 2, 0, 1);
	assert_step(s, 3, 2, 2);
	assert_step(s, 4, 0, 1);
	ck_assert_int_eq(s->has_free, 1);
	ck_assert_uint_eq(schedule_total_events(s), 9);
	schedule_free(s);
}
END_TEST

START_TEST(test_from_no_events)
{
	struct schedule *s = schedule_from_events(NULL, 0);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->nsteps, 0);
	ck_assert_int_eq(s->has_free, 1);
	ck_assert_uint_eq(schedule_total_events(s), 0);
	schedule_free(s);
}
END_TEST

static Suite *schedule_suite(void)
{
	Suite *s = suite_create("schedule");
	TCase *file = tcase_create("file");
	TCase *build = tcase_create("build");

	tcase_add_checked_fixture(file, setup, NULL);
	tcase_add_test(file, test_round_trip);
	tcase_add_test(file, test_write_fp);
	tcase_add_test(file, test_write_replaces_atomically);
	tcase_add_test(file, test_write_fails);
	tcase_add_test(file, test_write_fp_fails);
	tcase_add_loop_test(file, test_malformed, 0,
			    sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(file, test_nonexistent);
	tcase_add_test(file, test_comments_and_blanks);
	tcase_add_test(file, test_read_keeps_steps);
	tcase_add_test(file, test_many_steps);
	tcase_add_test(file, test_comment_line_breaks);
	suite_add_tcase(s, file);

	tcase_add_test(build, test_append_run);
	tcase_add_test(build, test_from_events);
	tcase_add_test(build, test_from_no_events);
	suite_add_tcase(s, build);
	return s;
}

int main(void)
{
	return unit_run_in_dir(schedule_suite(), "/tmp/avt_test_sched_XXXXXX");
}
