/*
 * Trace file and event model: the writer and reader agree field by field,
 * the bytes on disk are the documented layout, damaged files are either
 * read up to the damage (a crash) or refused with a message naming them.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/event.h"
#include "trace/trace.h"
#include "unit_util.h"

static char path[160];

static void setup(void)
{
	unit_tmpdir_new();
	snprintf(path, sizeof(path), "%s/trace.avt", unit_tmpdir);
}

static void write_bytes(const char *p, const void *data, size_t n)
{
	FILE *fp = fopen(p, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(data, 1, n, fp), n);
	ck_assert_int_eq(fclose(fp), 0);
}

static long file_size(const char *p)
{
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	return (long)st.st_size;
}

/* Deterministic but varied: every field differs between neighbours. */
static struct avt_event make_event(uint64_t i)
{
	struct avt_event ev = {
		.seq = i,
		.obj = 0x7fff00000000ull + i * 8,
		.obj2 = i % 7 ? 0 : 0x601040 + i,
		.site_off = 0x1139 + (i * 13) % 4096,
		.thread = (uint32_t)(i % 5),
		.tindex = (uint32_t)(i / 5),
		.kind = (uint16_t)(1 + i % (AVT_EV_KIND_COUNT - 1)),
		.flags = (uint16_t)(i & 0x3f),
		.site_mod = i % 11 ? (uint16_t)(i % 2) : AVT_MOD_NONE,
		.size = (uint16_t)(1u << (i % 4)),
	};
	/* start / create / join name a thread: one the trace has */
	if (avt_kind_obj_is_thread(ev.kind))
		ev.obj = (i / 3) % 5;
	return ev;
}

static void assert_event_eq(const struct avt_event *a, const struct avt_event *b)
{
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_uint_eq(a->obj, b->obj);
	ck_assert_uint_eq(a->obj2, b->obj2);
	ck_assert_uint_eq(a->site_off, b->site_off);
	ck_assert_uint_eq(a->thread, b->thread);
	ck_assert_uint_eq(a->tindex, b->tindex);
	ck_assert_uint_eq(a->kind, b->kind);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_uint_eq(a->site_mod, b->site_mod);
	ck_assert_uint_eq(a->size, b->size);
}

static struct trace_writer *open_writer(void)
{
	char err[512] = "";
	struct trace_writer *w = trace_writer_open(path, err, sizeof(err));

	ck_assert_msg(w != NULL, "open: %s", err);
	return w;
}

static void write_events(struct trace_writer *w, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		struct avt_event ev = make_event(i);
		ck_assert_int_eq(trace_write_event(w, &ev), 0);
	}
}

static struct trace *read_ok(void)
{
	char err[512] = "";
	struct trace *t = trace_read(path, err, sizeof(err));

	ck_assert_msg(t != NULL, "read: %s", err);
	return t;
}

/* Reads path, expects failure, and checks the message names the file, has
 * no "avtrace: " prefix and contains want. */
static void read_fails(const char *want)
{
	char err[512] = "";
	struct trace *t = trace_read(path, err, sizeof(err));

	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert_msg(strstr(err, path) != NULL, "'%s' lacks the path", err);
	ck_assert_msg(strncmp(err, "avtrace:", 8) != 0, "'%s' has a prefix", err);
}

static const struct avt_module_rec mod_exe = {
	.base = 0x555555554000, .lo = 0x555555554000, .hi = 0x555555559000,
	.id = 0, .build_id_len = 20,
	.build_id = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
		      11, 12, 13, 14, 15, 16 },
};

static const struct avt_module_rec mod_libc = {
	.base = 0x7ffff7dd0000, .lo = 0x7ffff7df6000, .hi = 0x7ffff7f4b000,
	.id = 1, .build_id_len = 0,
};

static void assert_module_eq(const struct avt_module *m,
			     const struct avt_module_rec *want, const char *p)
{
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->rec.base, want->base);
	ck_assert_uint_eq(m->rec.lo, want->lo);
	ck_assert_uint_eq(m->rec.hi, want->hi);
	ck_assert_uint_eq(m->rec.id, want->id);
	ck_assert_uint_eq(m->rec.build_id_len, want->build_id_len);
	ck_assert_mem_eq(m->rec.build_id, want->build_id, want->build_id_len);
	ck_assert_str_eq(m->path, p);
}

static const struct avt_thread_rec threads[] = {
	{ .thread = 0, .parent = UINT32_MAX, .nth_child = 0, .os_tid = 4242 },
	{ .thread = 1, .parent = 0, .nth_child = 0, .os_tid = 4243 },
	{ .thread = 2, .parent = 0, .nth_child = 1, .os_tid = 4244 },
	{ .thread = 3, .parent = 1, .nth_child = 0, .os_tid = 4250 },
};

enum { NTHREADS = sizeof(threads) / sizeof(threads[0]) };

static void write_full_trace(void)
{
	struct trace_writer *w = open_writer();

	ck_assert_int_eq(trace_write_module(w, &mod_exe, "/work/app/vec"), 0);
	ck_assert_int_eq(trace_write_module(w, &mod_libc,
					    "/usr/lib/x86_64-linux-gnu/libc.so.6"), 0);
	for (size_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(trace_write_thread(w, &threads[i]), 0);
	ck_assert_int_eq(trace_write_note(w, "watching 'src.n' with dr0"), 0);
	write_events(w, 0, 5000);
	ck_assert_int_eq(trace_write_note(w, "halfway"), 0);
	struct avt_disarm_rec d = { .after_seq = 5000, .site_off = 0x1234, .hits = 256,
				    .site_mod = 0 };
	ck_assert_int_eq(trace_write_disarm(w, &d), 0);
	write_events(w, 5000, 10000);
	ck_assert_int_eq(trace_write_note(w, ""), 0);
	ck_assert_uint_eq(trace_writer_nevents(w), 10000);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

START_TEST(test_round_trip)
{
	struct trace *t;

	write_full_trace();
	t = read_ok();
	ck_assert_int_eq(t->truncated, 0);
	ck_assert_uint_eq(t->nmod, 2);
	assert_module_eq(&t->mod[0], &mod_exe, "/work/app/vec");
	assert_module_eq(&t->mod[1], &mod_libc, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert_ptr_eq(trace_module(t, 1), &t->mod[1]);
	ck_assert_ptr_null(trace_module(t, 2));
	ck_assert_uint_eq(t->nthr, NTHREADS);
	for (size_t i = 0; i < NTHREADS; i++) {
		ck_assert_uint_eq(t->thr[i].thread, threads[i].thread);
		ck_assert_uint_eq(t->thr[i].parent, threads[i].parent);
		ck_assert_uint_eq(t->thr[i].nth_child, threads[i].nth_child);
		ck_assert_uint_eq(t->thr[i].os_tid, threads[i].os_tid);
	}
	ck_assert_uint_eq(trace_thread(t, 3)->os_tid, 4250);
	ck_assert_ptr_null(trace_thread(t, 4));
	/* Events name T0..T4; thread records stop at T3. */
	ck_assert_uint_eq(trace_nthreads(t), 5);
	ck_assert_uint_eq(t->nev, 10000);
	for (uint64_t i = 0; i < 10000; i++) {
		struct avt_event want = make_event(i);
		assert_event_eq(&t->ev[i], &want);
	}
	ck_assert_uint_eq(t->nnotes, 3);
	ck_assert_uint_eq(t->notes[0].after_seq, 0);
	ck_assert_str_eq(t->notes[0].text, "watching 'src.n' with dr0");
	ck_assert_uint_eq(t->notes[1].after_seq, 5000);
	ck_assert_str_eq(t->notes[1].text, "halfway");
	ck_assert_uint_eq(t->notes[2].after_seq, 10000);
	ck_assert_str_eq(t->notes[2].text, "");
	ck_assert_uint_eq(t->ndisarms, 1);
	ck_assert_uint_eq(t->disarms[0].after_seq, 5000);
	ck_assert_uint_eq(t->disarms[0].site_off, 0x1234);
	ck_assert_uint_eq(t->disarms[0].hits, 256);
	ck_assert_uint_eq(t->disarms[0].site_mod, 0);
	trace_free(t);
}
END_TEST

/* The bytes are the documented format, not just whatever the reader reads:
 * an events record (type 9) of compact entries, each field written only
 * where it is not what the entries before predict (docs/trace-format.md). */
START_TEST(test_byte_layout)
{
	struct trace_writer *w = open_writer();
	struct avt_event ev = make_event(7), ev2 = ev;
	unsigned char buf[16 + 8 + 21 + 5 + 8 + 8 + 2];
	FILE *fp;

	/* the same thread's next event, on the same object, 4 bytes on */
	ev.seq = 0;
	ev2.seq = 1;
	ev2.tindex = 2;
	ev2.kind = AVT_EV_RELEASE;
	ev2.obj2 = 0;
	ev2.flags = 0;
	ev2.site_off += 4;
	ck_assert_int_eq(trace_write_event(w, &ev), 0);
	ck_assert_int_eq(trace_write_event(w, &ev2), 0);
	ck_assert_int_eq(trace_write_note(w, "hi"), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(file_size(path), sizeof(buf));
	fp = fopen(path, "rb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf), fp), sizeof(buf));
	fclose(fp);
	ck_assert_mem_eq(buf, "AVTRACE\0", 8);
	ck_assert_mem_eq(buf + 8, "\3\0\0\0\20\0\0\0", 8);
	ck_assert_mem_eq(buf + 16, "\11\0\0\0\32\0\0\0", 8); /* events, 26 bytes */
	/* tag 1 (event), every field but seq (0, the next) written (mask
	 * 0xfe), kind 8; thread 2, tindex 1, obj zigzag 0x7fff00000038, obj2
	 * 0x601047, flags 7, size 8, site_mod 1, site_off zigzag 0x1194:
	 * LEB128 varints */
	ck_assert_mem_eq(buf + 24, "\1\376\10\2\1\360\200\200\200\340\377\77"
			 "\307\240\200\3\7\10\1\250\106", 21);
	/* only the size (mask 0x40, kind 6): seq, thread, tindex, obj and
	 * site_mod are predicted; the site is 4 on (zigzag 8) */
	ck_assert_mem_eq(buf + 45, "\1\100\6\10\10", 5);
	ck_assert_mem_eq(buf + 50, "\5\0\0\0\12\0\0\0", 8);
	ck_assert_mem_eq(buf + 58, "\2\0\0\0\0\0\0\0hi", 10); /* after 2 events */
}
END_TEST

/* Events and heap records through the compact form, with every field at
 * its extremes and every prediction wrong in turn, come back as written;
 * in order with the records between them. */
START_TEST(test_compact_round_trip)
{
	enum { N = 5000 };
	struct trace_writer *w = open_writer();
	static struct avt_event evs[N];
	static struct avt_alloc_rec al[N / 10];
	uint64_t x = 88172645463325252ull;
	size_t na = 0;
	struct trace *t;

	for (uint32_t th = 0; th < 8; th++)
		ck_assert_int_eq(trace_write_thread(w, &(struct avt_thread_rec){ th, th ? 0 : UINT32_MAX, th, 100 + th }), 0);
	uint32_t tnext[8] = { 0 };
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		struct avt_event *e = &evs[i];
		uint32_t th = (uint32_t)(x % 8);
		*e = (struct avt_event){
			.seq = i, .thread = th, .tindex = tnext[th]++,
			.kind = (uint16_t)(AVT_EV_ACQUIRE + x % 4),
			.obj = (x >> 8) % 3 ? 0x7f0000001000ull + (x >> 16) % 64 * 8 : x,
			.obj2 = (x >> 20) % 5 ? 0 : UINT64_MAX - (x >> 24) % 3,
			.site_off = (x >> 28) % 4 ? 0x1000 + (x >> 30) % 16 : UINT64_MAX - (x >> 32) % 9,
			.flags = (uint16_t)((x >> 36) % 3 ? 0 : UINT16_MAX),
			.site_mod = (uint16_t)((x >> 38) % 5 ? 1 : (x >> 40) % 2 ? AVT_MOD_NONE : 0),
			.size = (uint16_t)((x >> 42) % 2 ? 0 : 1u << (x >> 43) % 16),
		};
		ck_assert_int_eq(trace_write_event(w, e), 0);
		if (i % 10 == 3) {
			al[na] = (struct avt_alloc_rec){
				.after_seq = i + 1, .addr = (x >> 4) % 2 ? 0x5555000 + i * 48 : x,
				.size = (x >> 6) % 4 ? 48 : UINT64_MAX, .site_off = 0x2000 + (x >> 9) % 3,
				.thread = th, .site_mod = (uint16_t)((x >> 12) % 2),
				.kind = (uint16_t)(AVT_ALLOC_MALLOC + (x >> 14) % 4),
			};
			ck_assert_int_eq(trace_write_alloc(w, &al[na]), 0);
			na++;
		}
		if (i % 1000 == 999)
			ck_assert_int_eq(trace_write_note(w, "between"), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	t = read_ok();
	ck_assert_int_eq(t->truncated, 0);
	ck_assert_uint_eq(t->nev, N);
	for (size_t i = 0; i < N; i++)
		assert_event_eq(&t->ev[i], &evs[i]);
	ck_assert_uint_eq(t->nallocs, na);
	ck_assert_mem_eq(t->allocs, al, na * sizeof *al);
	ck_assert_uint_eq(t->nnotes, N / 1000);
	ck_assert_uint_eq(t->notes[2].after_seq, 3000);
	trace_free(t);
}
END_TEST

/* What the compact form is for: a lock-heavy thread's events (the same
 * lock and two sites in turn) take a few bytes each, not 56. */
START_TEST(test_compact_size)
{
	struct trace_writer *w = open_writer();

	ck_assert_int_eq(trace_write_thread(w, &(struct avt_thread_rec){ 0, UINT32_MAX, 0, 1 }), 0);
	for (uint32_t i = 0; i < 10000; i++) {
		struct avt_event e = { .seq = i, .tindex = i, .obj = 0x7f1234567000ull,
				       .kind = i % 2 ? AVT_EV_RELEASE : AVT_EV_ACQUIRE,
				       .site_off = i % 2 ? 0x11d0 : 0x11a4, .site_mod = 0 };
		ck_assert_int_eq(trace_write_event(w, &e), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_le(file_size(path), 16 + 16 + 10000 * 6);
	struct trace *t = read_ok();
	ck_assert_uint_eq(t->nev, 10000);
	ck_assert_uint_eq(t->ev[9999].site_off, 0x11d0);
	ck_assert_uint_eq(t->ev[9998].obj, 0x7f1234567000ull);
	trace_free(t);
}
END_TEST

/* Broken entries are named by their offset. */
START_TEST(test_compact_damaged)
{
	unsigned char buf[16 + 8 + 14]; /* the longest entry below: 14 bytes */

	memcpy(buf, "AVTRACE\0\3\0\0\0\20\0\0\0", 16);
	/* an unknown tag */
	memcpy(buf + 16, "\11\0\0\0\3\0\0\0" "\7\0\1", 11);
	write_bytes(path, buf, 27);
	read_fails("entry at offset 24: unknown tag 7");
	/* a varint that runs to the record's end */
	memcpy(buf + 16, "\11\0\0\0\5\0\0\0" "\1\1\1\200\200", 13);
	write_bytes(path, buf, 29);
	read_fails("entry at offset 24: seq cut short by the end of its events record");
	/* an event kind the reader does not know */
	memcpy(buf + 16, "\11\0\0\0\4\0\0\0" "\1\0\250\0", 12);
	write_bytes(path, buf, 28);
	read_fails("event 0 at offset 24: unknown kind 168");
	/* a varint of more than 64 bits */
	memcpy(buf + 16, "\11\0\0\0\16\0\0\0" "\1\1\1\377\377\377\377\377\377\377\377\377\177", 22);
	write_bytes(path, buf, 38);
	read_fails("entry at offset 24: seq longer than 64 bits");
}
END_TEST

/* Records longer than the write buffer go around it, in order. */
START_TEST(test_long_note)
{
	size_t n = 200 * 1024;
	char *text = malloc(n + 1);
	struct trace_writer *w = open_writer();
	struct trace *t;

	for (size_t i = 0; i < n; i++)
		text[i] = (char)('a' + i % 26);
	text[n] = '\0';
	write_events(w, 0, 3);
	ck_assert_int_eq(trace_write_note(w, text), 0);
	write_events(w, 3, 5);
	ck_assert_int_eq(trace_writer_close(w), 0);
	t = read_ok();
	ck_assert_uint_eq(t->nev, 5);
	ck_assert_uint_eq(t->ev[4].seq, 4);
	ck_assert_uint_eq(t->nnotes, 1);
	ck_assert_uint_eq(t->notes[0].after_seq, 3);
	ck_assert_str_eq(t->notes[0].text, text);
	trace_free(t);
	free(text);
}
END_TEST

static void write_n_events(uint64_t n)
{
	struct trace_writer *w = open_writer();

	write_events(w, 0, n);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

/* A file cut inside its last events record (a crash, a full disk) keeps
 * every whole entry before the cut: fewer events the more is cut, each
 * one as written. */
START_TEST(test_truncated_in_payload)
{
	struct trace *t;
	size_t prev = 100;

	write_n_events(100);
	long size = file_size(path);
	for (long cut = 1; cut <= 60; cut++) {
		write_n_events(100);
		ck_assert_int_eq(truncate(path, size - cut), 0);
		t = read_ok();
		ck_assert_int_eq(t->truncated, 1);
		ck_assert_uint_lt(t->nev, 100);
		ck_assert_uint_le(t->nev, prev);
		ck_assert_uint_ge(t->nev, 100 - (size_t)cut);
		for (uint64_t i = 0; i < t->nev; i++) {
			struct avt_event want = make_event(i);
			assert_event_eq(&t->ev[i], &want);
		}
		prev = t->nev;
		trace_free(t);
	}
	ck_assert_uint_lt(prev, 97); /* 60 bytes are more than 3 entries */
}
END_TEST

START_TEST(test_truncated_in_record_header)
{
	struct trace_writer *w = open_writer();
	struct trace *t;

	write_events(w, 0, 99);
	ck_assert_int_eq(trace_write_note(w, "x"), 0); /* a record after them */
	write_events(w, 99, 100);
	ck_assert_int_eq(trace_writer_close(w), 0);
	/* into the header of the last events record: its 1 event is lost */
	ck_assert_int_eq(truncate(path, file_size(path) - 5 - 4), 0);
	t = read_ok();
	ck_assert_int_eq(t->truncated, 1);
	ck_assert_uint_eq(t->nev, 99);
	trace_free(t);
}
END_TEST

/* A cut between records cannot be told from a complete trace. */
START_TEST(test_cut_at_record_boundary)
{
	struct trace_writer *w = open_writer();
	struct trace *t;

	write_events(w, 0, 99);
	ck_assert_int_eq(trace_write_note(w, "x"), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(truncate(path, file_size(path) - 8 - 8 - 1), 0);
	t = read_ok();
	ck_assert_int_eq(t->truncated, 0);
	ck_assert_uint_eq(t->nev, 99);
	ck_assert_uint_eq(t->nnotes, 0);
	trace_free(t);
}
END_TEST

START_TEST(test_truncated_note)
{
	struct trace_writer *w = open_writer();
	struct trace *t;

	write_events(w, 0, 2);
	ck_assert_int_eq(trace_write_note(w, "the recorder was killed here"), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(truncate(path, file_size(path) - 3), 0);
	t = read_ok();
	ck_assert_int_eq(t->truncated, 1);
	ck_assert_uint_eq(t->nev, 2);
	ck_assert_uint_eq(t->nnotes, 0);
	trace_free(t);
}
END_TEST

START_TEST(test_header_only)
{
	struct trace *t;

	write_n_events(0);
	ck_assert_int_eq(file_size(path), 16);
	t = read_ok();
	ck_assert_int_eq(t->truncated, 0);
	ck_assert_uint_eq(t->nev, 0);
	ck_assert_uint_eq(trace_nthreads(t), 0);
	trace_free(t);
}
END_TEST

START_TEST(test_bad_magic)
{
	write_bytes(path, "AVTRACX\0\1\0\0\0\20\0\0\0", 16);
	read_fails("not an avtrace trace (bad magic)");
	/* Shorter than a header but plainly not ours: still bad magic. */
	write_bytes(path, "#!/bin", 6);
	read_fails("not an avtrace trace (bad magic)");
}
END_TEST

START_TEST(test_unknown_version)
{
	write_bytes(path, "AVTRACE\0\4\0\0\0\20\0\0\0", 16);
	read_fails("unsupported trace version 4 (this avtrace reads versions 2 to 3)");
	/* version 1 (no rmw kind, no disarm records) is refused too */
	write_bytes(path, "AVTRACE\0\1\0\0\0\20\0\0\0", 16);
	read_fails("unsupported trace version 1 (this avtrace reads versions 2 to 3)");
}
END_TEST

START_TEST(test_truncated_header)
{
	write_bytes(path, "AVTRACE\0\1\0", 10);
	read_fails("truncated header");
}
END_TEST

START_TEST(test_empty_file)
{
	write_bytes(path, "", 0);
	read_fails("truncated header");
}
END_TEST

START_TEST(test_nonexistent)
{
	snprintf(path, sizeof(path), "%s/no-such.avt", unit_tmpdir);
	read_fails("cannot open '");
	read_fails("': No such file or directory");
}
END_TEST

START_TEST(test_bad_event_length)
{
	unsigned char buf[16 + 56 + 8 + 40];
	struct avt_event ev = make_event(0);

	memcpy(buf, "AVTRACE\0\2\0\0\0\20\0\0\0", 16);
	memcpy(buf + 16, "\3\0\0\0\60\0\0\0", 8);
	memcpy(buf + 24, &ev, 48);
	memcpy(buf + 72, "\3\0\0\0\50\0\0\0", 8);
	memset(buf + 80, 0, 40);
	write_bytes(path, buf, sizeof(buf));
	read_fails("event record at offset 72 has length 40 (expected 48)");
}
END_TEST

START_TEST(test_bad_thread_and_note_length)
{
	unsigned char buf[16 + 8 + 4];

	memcpy(buf, "AVTRACE\0\2\0\0\0\20\0\0\0", 16);
	memcpy(buf + 16, "\2\0\0\0\4\0\0\0", 8);
	memset(buf + 24, 0, 4);
	write_bytes(path, buf, sizeof(buf));
	read_fails("thread record at offset 16 has length 4 (expected 16)");
	memcpy(buf + 16, "\5\0\0\0\4\0\0\0", 8);
	write_bytes(path, buf, sizeof(buf));
	read_fails("note record at offset 16 has length 4 (at least 8)");
}
END_TEST

START_TEST(test_bad_build_id_length)
{
	struct avt_module_rec m = mod_libc;
	unsigned char buf[16 + 8 + 48 + 3];

	m.build_id_len = 21;
	memcpy(buf, "AVTRACE\0\2\0\0\0\20\0\0\0", 16);
	memcpy(buf + 16, "\1\0\0\0\63\0\0\0", 8);
	memcpy(buf + 24, &m, 48);
	memcpy(buf + 72, "/ab", 3);
	write_bytes(path, buf, sizeof(buf));
	read_fails("21-byte build-id");
}
END_TEST

/* A newer writer of the same version may add record types. */
START_TEST(test_unknown_record_skipped)
{
	unsigned char buf[16 + 8 + 5 + 56];
	struct avt_event ev = make_event(0);
	struct trace *t;

	memcpy(buf, "AVTRACE\0\2\0\0\0\20\0\0\0", 16);
	memcpy(buf + 16, "\143\0\0\0\5\0\0\0" "xxxxx", 13);
	memcpy(buf + 29, "\3\0\0\0\60\0\0\0", 8);
	memcpy(buf + 37, &ev, 48);
	write_bytes(path, buf, sizeof(buf));
	t = read_ok();
	ck_assert_int_eq(t->truncated, 0);
	ck_assert_uint_eq(t->nev, 1);
	assert_event_eq(&t->ev[0], &ev);
	trace_free(t);
}
END_TEST

START_TEST(test_writer_open_fails)
{
	char err[512] = "";

	snprintf(path, sizeof(path), "%s/missing-dir/trace.avt", unit_tmpdir);
	ck_assert_ptr_null(trace_writer_open(path, err, sizeof(err)));
	ck_assert_msg(strstr(err, path) && strstr(err, "No such file or directory"),
		      "'%s'", err);
}
END_TEST

/* A full disk fails the writes and the close, with one message. */
START_TEST(test_write_fails)
{
	char err[512] = "";
	struct trace_writer *w;
	struct avt_event ev = make_event(0);
	int failed_at = -1;
	struct unit_capture cap;
	char *msg;

	w = trace_writer_open("/dev/full", err, sizeof(err));
	if (!w)
		return; /* no /dev/full in this container: nothing to test */
	unit_capture_start(&cap);
	for (int i = 0; i < 100000 && failed_at < 0; i++) {
		ev.seq = (uint64_t)i;
		if (trace_write_event(w, &ev) < 0)
			failed_at = i;
	}
	/* Nothing reaches the file before 64 KiB are buffered. */
	ck_assert_int_gt(failed_at, 1000);
	ck_assert_int_eq(trace_write_note(w, "x"), -1);
	ck_assert_int_eq(trace_writer_close(w), -1);
	msg = unit_capture_stop(&cap);
	ck_assert_str_eq(msg, "avtrace: cannot write trace '/dev/full': No space "
			 "left on device\n");
	free(msg);
}
END_TEST

START_TEST(test_kind_names)
{
	static const char *const names[] = {
		"none", "start", "exit", "create", "join", "acquire", "release",
		"trylock_fail", "rd_acquire", "wr_acquire", "wait", "signal",
		"broadcast", "barrier", "sem_wait", "sem_post", "read", "write",
		"begin", "end", "fatal_signal", "rmw", "futex_wait", "futex_wake",
	};

	ck_assert_uint_eq(sizeof(names) / sizeof(names[0]), AVT_EV_KIND_COUNT);
	for (unsigned k = 0; k < AVT_EV_KIND_COUNT; k++) {
		ck_assert_str_eq(avt_kind_name(k), names[k]);
		ck_assert_uint_eq(avt_kind_from_name(names[k]), k);
	}
	ck_assert_ptr_null(avt_kind_name(AVT_EV_KIND_COUNT));
	ck_assert_ptr_null(avt_kind_name(1000));
	ck_assert_uint_eq(avt_kind_from_name("acquired"), AVT_EV_NONE);
	ck_assert_uint_eq(avt_kind_from_name(""), AVT_EV_NONE);
	ck_assert_uint_eq(avt_kind_from_name(NULL), AVT_EV_NONE);
}
END_TEST

START_TEST(test_kind_classes)
{
	for (unsigned k = 0; k <= AVT_EV_KIND_COUNT; k++) {
		ck_assert_int_eq(avt_kind_is_acquire(k), k == AVT_EV_ACQUIRE ||
				 k == AVT_EV_RD_ACQUIRE || k == AVT_EV_WR_ACQUIRE);
		ck_assert_int_eq(avt_kind_is_access(k),
				 k == AVT_EV_READ || k == AVT_EV_WRITE || k == AVT_EV_RMW);
		ck_assert_int_eq(avt_kind_reads(k), k == AVT_EV_READ || k == AVT_EV_RMW);
		ck_assert_int_eq(avt_kind_writes(k), k == AVT_EV_WRITE || k == AVT_EV_RMW);
		ck_assert_int_eq(avt_kind_obj_is_thread(k), k == AVT_EV_START ||
				 k == AVT_EV_CREATE || k == AVT_EV_JOIN);
	}
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *file = tcase_create("file");
	TCase *bad = tcase_create("damaged");
	TCase *kinds = tcase_create("kinds");

	tcase_add_checked_fixture(file, setup, NULL);
	tcase_add_test(file, test_round_trip);
	tcase_add_test(file, test_byte_layout);
	tcase_add_test(file, test_compact_round_trip);
	tcase_add_test(file, test_compact_size);
	tcase_add_test(file, test_compact_damaged);
	tcase_add_test(file, test_long_note);
	tcase_add_test(file, test_header_only);
	tcase_add_test(file, test_unknown_record_skipped);
	tcase_add_test(file, test_writer_open_fails);
	tcase_add_test(file, test_write_fails);
	suite_add_tcase(s, file);

	tcase_add_checked_fixture(bad, setup, NULL);
	tcase_add_test(bad, test_truncated_in_payload);
	tcase_add_test(bad, test_truncated_in_record_header);
	tcase_add_test(bad, test_cut_at_record_boundary);
	tcase_add_test(bad, test_truncated_note);
	tcase_add_test(bad, test_bad_magic);
	tcase_add_test(bad, test_unknown_version);
	tcase_add_test(bad, test_truncated_header);
	tcase_add_test(bad, test_empty_file);
	tcase_add_test(bad, test_nonexistent);
	tcase_add_test(bad, test_bad_event_length);
	tcase_add_test(bad, test_bad_thread_and_note_length);
	tcase_add_test(bad, test_bad_build_id_length);
	suite_add_tcase(s, bad);

	tcase_add_test(kinds, test_kind_names);
	tcase_add_test(kinds, test_kind_classes);
	suite_add_tcase(s, kinds);
	return s;
}

int main(void)
{
	return unit_run_in_dir(trace_suite(), "/tmp/avt_test_trace_XXXXXX");
}
