/*
 * Untrusted files (issue 18, item 2): every reader refuses what it cannot
 * trust with one line naming the file and the offset or line, and never
 * crashes, hangs or allocates without bound.
 *
 * The damaged inputs are in tests/unit/fixtures/untrusted (gen.py makes
 * them from real recordings; crashing inputs the fuzzers of tests/fuzz
 * found go there too): NAME.EXT must be refused with a message containing
 * the text of NAME.expect.  The other tests are the reproductions listed
 * in the issue: predict on a trace whose seq is corrupt, /dev/zero as any
 * input, oversized files, and real recordings still read.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "predict/pattern.h"
#include "predict/predict.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "trace/schedule.h"
#include "trace/trace.h"
#include "unit_util.h"

#define FIXDIR "tests/unit/fixtures/untrusted"
#define CORPUS "tests/fuzz/corpus"

static char tmpdir[64];

/* avt_error() output, captured from unit_capture_start(&cap) on and
 * copied to buf by stop_capture(). */
static struct unit_capture cap;

static void stop_capture(char *buf, size_t len)
{
	char *text = unit_capture_stop(&cap);
	snprintf(buf, len, "%s", text);
	free(text);
}

/* The fixtures and seeds are traces of version 1, whose records later
 * versions keep as they are (a version adds kinds and record types): a
 * copy in tmpdir stamped with this avtrace's version, so they keep
 * testing the reader after a version bump.  Returns the copy's path. */
static const char *stamped(const char *path)
{
	static char copy[256];
	static unsigned char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	ck_assert_uint_lt(n, sizeof buf);
	if (n >= 12 && !memcmp(buf, AVT_TRACE_MAGIC, 8)) {
		uint32_t v = AVT_TRACE_VERSION;
		memcpy(buf + 8, &v, 4); /* little-endian, as the format */
	}
	snprintf(copy, sizeof copy, "%s/%s", tmpdir, strrchr(path, '/') + 1);
	f = fopen(copy, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
	return copy;
}

/* Reads path with the reader its extension names; the error message, or
 * NULL if the reader accepted the file. */
static char *read_any(const char *path, char *err, size_t len)
{
	const char *ext = strrchr(path, '.');
	err[0] = 0;
	if (!strcmp(ext, ".avt")) {
		struct trace *t = trace_read(path, err, len);
		trace_free(t);
		return t ? NULL : err;
	}
	if (!strcmp(ext, ".sched")) {
		struct schedule *s = schedule_read(path, err, len);
		schedule_free(s);
		return s ? NULL : err;
	}
	if (!strcmp(ext, ".json")) {
		struct avt_meta *m = meta_read(path, err, len, NULL);
		meta_free(m);
		return m ? NULL : err;
	}
	ck_assert_str_eq(ext, ".pat");
	struct pr_patterns ps = { 0 };
	unit_capture_start(&cap);
	int rc = pr_patterns_load(&ps, path);
	stop_capture(err, len);
	pr_patterns_release(&ps);
	return rc < 0 ? err : NULL;
}

/* The reader of path refuses it with one line naming the file and
 * containing want. */
static void refused(const char *path, const char *want)
{
	char err[1024];
	if (!strcmp(strrchr(path, '.'), ".avt") && strncmp(path, tmpdir, strlen(tmpdir)))
		path = stamped(path);
	ck_assert_msg(read_any(path, err, sizeof err) != NULL, "'%s' was accepted", path);
	ck_assert_msg(strstr(err, path), "'%s': message lacks the file: %s", path, err);
	ck_assert_msg(strstr(err, want), "'%s': message '%s' lacks '%s'", path, err, want);
	size_t n = strlen(err);
	if (n && err[n - 1] == '\n')
		err[--n] = 0;
	ck_assert_msg(!strchr(err, '\n'), "'%s': message of more than one line: %s", path, err);
}

static bool has_ext(const char *name)
{
	static const char *const ext[] = { ".avt", ".sched", ".pat", ".json" };
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < 4; i++)
		if (!strcmp(dot, ext[i]))
			return true;
	return false;
}

START_TEST(test_fixtures_refused)
{
	DIR *d = opendir(FIXDIR);
	struct dirent *e;
	unsigned n = 0;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (!has_ext(e->d_name))
			continue;
		char path[512], xpath[512], want[256] = "";
		snprintf(path, sizeof path, FIXDIR "/%s", e->d_name);
		snprintf(xpath, sizeof xpath, "%.*s.expect",
			 (int)(strrchr(path, '.') - path), path);
		FILE *f = fopen(xpath, "r");
		ck_assert_msg(f != NULL, "%s has no .expect", path);
		ck_assert_ptr_nonnull(fgets(want, sizeof want, f));
		fclose(f);
		want[strcspn(want, "\n")] = 0;
		refused(path, want);
		n++;
	}
	closedir(d);
	ck_assert_uint_ge(n, 24); /* the fixtures are there */
}
END_TEST

/* The recordings the fixtures are made from (and the fuzzers' seeds) are
 * read: the checks refuse damage, not real files. */
START_TEST(test_real_files_read)
{
	static const char *const dirs[] = { CORPUS "/trace", CORPUS "/predict",
					    CORPUS "/schedule", CORPUS "/pattern",
					    CORPUS "/meta" };
	unsigned n = 0;
	for (size_t k = 0; k < 5; k++) {
		DIR *d = opendir(dirs[k]);
		struct dirent *e;
		ck_assert_ptr_nonnull(d);
		while ((e = readdir(d))) {
			char path[512], err[1024];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", dirs[k], e->d_name);
			const char *p = strstr(path, ".avt") ? stamped(path) : path;
			ck_assert_msg(read_any(p, err, sizeof err) == NULL, "%s refused: %s",
				      path, err);
			n++;
		}
		closedir(d);
	}
	ck_assert_uint_ge(n, 30);
}
END_TEST

/* `--file /dev/zero` read until memory ran out; a device or a FIFO is
 * no file of ours. */
START_TEST(test_dev_zero)
{
	char fifo[128];
	static const char *const kinds[] = { ".avt", ".sched", ".pat", ".json" };
	snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	for (size_t k = 0; k < 4; k++) {
		char link[160];
		snprintf(link, sizeof link, "%s/zero%s", tmpdir, kinds[k]);
		ck_assert_int_eq(symlink("/dev/zero", link), 0);
		refused(link, "not a regular file");
		/* a FIFO with no writer would block open(): O_RDWR in the
		 * test keeps it from blocking, the reader must still refuse */
		snprintf(link, sizeof link, "%s/fifo%s", tmpdir, kinds[k]);
		ck_assert_int_eq(symlink(fifo, link), 0);
		int keep = open(fifo, O_RDWR);
		ck_assert_int_ge(keep, 0);
		refused(link, "not a regular file");
		close(keep);
	}
}
END_TEST

/* A sparse file just over each limit is refused before it is read. */
START_TEST(test_oversized)
{
	static const struct {
		const char *ext;
		long long size;
	} lim[] = {
		{ ".sched", AVT_SCHEDULE_MAX_BYTES + 1ll },
		{ ".pat", PR_PAT_FILE_BYTES + 1ll },
		{ ".json", AVT_META_MAX_BYTES + 1ll },
	};
	for (size_t k = 0; k < 3; k++) {
		char path[160];
		snprintf(path, sizeof path, "%s/big%s", tmpdir, lim[k].ext);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(ftruncate(fd, lim[k].size), 0);
		close(fd);
		refused(path, "bytes");
		unlink(path);
	}
}
END_TEST

/* More than PR_PAT_FILE_MAX patterns: the duplicate-name check is
 * quadratic, so the count is bounded. */
START_TEST(test_too_many_patterns)
{
	char path[160];
	snprintf(path, sizeof path, "%s/many.pat", tmpdir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (unsigned i = 0; i <= PR_PAT_FILE_MAX; i++)
		fprintf(f, "p%u: r t1 x u1, w t2 x u2\n", i);
	fclose(f);
	refused(path, "more than 1024 patterns");
}
END_TEST

/* The crash: predict indexed t->ev by a seq of 0x40000000
 * (summary_penelope, summary_pecan, same_anomaly, add_comment).  A trace
 * built in memory bypasses the reader: predict refuses it itself. */
START_TEST(test_predict_corrupt_seq)
{
	char err[1024], out[1024];
	struct trace *t = trace_read(stamped(CORPUS "/predict/mem_log.avt"), err, sizeof err);
	ck_assert_msg(t != NULL, "%s", err);
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true,
				  .pecan = true };
	struct prediction_set set;
	/* the recording has predictions: the detectors do reach the events */
	unit_capture_start(&cap);
	ck_assert_int_eq(predict_run(t, &o, &set), 0);
	stop_capture(out, sizeof out);
	ck_assert_uint_ge(set.n, 1);
	prediction_set_release(&set);
	for (size_t i = 0; i < t->nev; i++) {
		uint64_t seq = t->ev[i].seq;
		t->ev[i].seq = 0x40000000;
		unit_capture_start(&cap);
		int rc = predict_run(t, &o, &set);
		stop_capture(out, sizeof out);
		ck_assert_int_eq(rc, -1);
		ck_assert_uint_eq(set.n, 0);
		ck_assert_msg(strstr(out, "seq 1073741824"), "%s", out);
		t->ev[i].seq = seq;
	}
	trace_free(t);
}
END_TEST

/* One corrupt thread id made replay allocate GBs and predict threads^2
 * clocks: the reader's checks bound the count by the records in the file. */
START_TEST(test_thread_count_bounded)
{
	char err[1024];
	struct trace *t = trace_read(stamped(CORPUS "/trace/mem_log.avt"), err, sizeof err);
	ck_assert_msg(t != NULL, "%s", err);
	unsigned n = trace_nthreads(t);
	ck_assert_uint_le(n, t->nthr + t->nev);
	for (size_t i = 0; i < t->nev; i++)
		ck_assert_uint_lt(t->ev[i].thread, n);
	trace_free(t);
	refused(FIXDIR "/thread_huge.avt", "above 65535");
	refused(FIXDIR "/thread_gap.avt", "no record names T3");
}
END_TEST

/* A truncated copy of every real trace: read up to its last whole record,
 * never refused for the cut (the cut must not look like corruption). */
START_TEST(test_truncated_prefixes)
{
	char err[1024], path[160];
	static unsigned char buf[1 << 16];
	FILE *f = fopen(stamped(CORPUS "/trace/checkthenact_stacks.avt"), "rb");
	ck_assert_ptr_nonnull(f);
	size_t len = fread(buf, 1, sizeof buf, f);
	fclose(f);
	snprintf(path, sizeof path, "%s/cut.avt", tmpdir);
	for (size_t cut = 16; cut <= len; cut += 7) {
		f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(buf, 1, cut, f), cut);
		fclose(f);
		struct trace *t = trace_read(path, err, sizeof err);
		ck_assert_msg(t != NULL, "cut at %zu: %s", cut, err);
		trace_free(t);
	}
}
END_TEST

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/avt_untrusted_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	unit_remove_tree(tmpdir);
}

static Suite *untrusted_suite(void)
{
	Suite *s = suite_create("untrusted");
	TCase *tc = tcase_create("readers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fixtures_refused);
	tcase_add_test(tc, test_real_files_read);
	tcase_add_test(tc, test_dev_zero);
	tcase_add_test(tc, test_oversized);
	tcase_add_test(tc, test_too_many_patterns);
	tcase_add_test(tc, test_predict_corrupt_seq);
	tcase_add_test(tc, test_thread_count_bounded);
	tcase_add_test(tc, test_truncated_prefixes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(untrusted_suite());
}
