/*
 * predict_run() as the CLI uses it: options, dedupe of loop copies,
 * ranking, the correct programs of tests/targets (as hand-built traces of
 * their recorded runs) giving nothing, predictions.json and the schedule
 * files, and the synthetic benchmark trace.
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "predict/predict.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"

enum { LM = 0x1000, LA = 0x1080, LB = 0x10c0, LR = 0x1100, CV1 = 0x2000, CV2 = 0x2040 };
enum { SA = 0x400, SB = 0x480, SC = 0x500 };

#include "predict_test.h"
static char dir[64];

/* dir: where a test wrote files, removed after it */
static void setup_dir(void)
{
	setup();
	dir[0] = 0;
}

static void teardown_dir(void)
{
	teardown();
	if (dir[0])
		unit_remove_tree(dir);
}

static void run_opts(bool sidetrack, bool deadlocks, unsigned max)
{
	struct predict_opts o = { .max_predictions = max, .deadlocks = deadlocks,
				  .sidetrack = sidetrack };
	finish_predict(&o);
}

static void run(void)
{
	run_opts(true, true, 0);
}

/* A check-then-act by T1 and T2's critical section, and a lock-order
 * inversion between T3 and T4 (and T5, a three-thread cycle). */
static void mixed_trace(void)
{
	spawn_step(5, 0);
	start(1);
	acq(1, LM, SA);
	rel(1, LM, SA);
	acq(1, LM, SB);
	rel(1, LM, SB);
	start(2);
	acq(2, LM, SC);
	rel(2, LM, SC);
	start(3);
	acq(3, LA, 0x600);
	acq(3, LB, 0x610);
	rel(3, LB, 0x610);
	rel(3, LA, 0x600);
	start(4);
	acq(4, LB, 0x640);
	acq(4, LR, 0x650);
	rel(4, LR, 0x650);
	rel(4, LB, 0x640);
	start(5);
	acq(5, LR, 0x680);
	acq(5, LA, 0x690);
	rel(5, LA, 0x690);
	rel(5, LR, 0x680);
	finish_and_join_step(5, 0);
}

START_TEST(rank_fewer_threads_first)
{
	mixed_trace();
	run();
	ck_assert_uint_eq(ps.n, 2);
	ck_assert_str_eq(ps.p[0].detector, "sidetrack");
	ck_assert_uint_eq(ps.p[0].nthreads, 2);
	ck_assert_str_eq(ps.p[1].detector, "deadlock");
	ck_assert_uint_eq(ps.p[1].nthreads, 3);
	for (size_t i = 0; i < ps.n; i++) {
		ck_assert_uint_eq(ps.p[i].id, i + 1);
		ck_assert_ptr_nonnull(ps.p[i].sched);
		ck_assert_ptr_nonnull(ps.p[i].summary);
		char want[16];
		snprintf(want, sizeof want, "%zu: ", i + 1);
		ck_assert(!strncmp(ps.p[i].sched->comments[0], want, strlen(want)));
	}
}
END_TEST

/* Two check-then-acts on two locks; the second needs more switches. */
START_TEST(rank_fewer_switches_first)
{
	spawn_step(3, 0);
	start(3);
	acq(3, LA, 0x600);   /* a section T1 depends on, run before */
	rel(3, LA, 0x600);
	start(1);
	acq(1, LA, 0x620);
	rel(1, LA, 0x620);
	acq(1, LB, SA);
	rel(1, LB, SA);
	acq(1, LB, SB);
	rel(1, LB, SB);
	start(2);
	acq(2, LM, SA + 0x40);
	rel(2, LM, SA + 0x40);
	acq(2, LM, SB + 0x40);
	rel(2, LM, SB + 0x40);
	acq(2, LB, SC);
	rel(2, LB, SC);
	ev(3, AVT_EV_ACQUIRE, LM, SC + 0x40);
	ev(3, AVT_EV_RELEASE, LM, SC + 0x48);
	finish_and_join_step(3, 0);
	run();
	ck_assert_uint_ge(ps.n, 2);
	for (size_t i = 1; i < ps.n; i++) {
		ck_assert_uint_le(ps.p[i - 1].nthreads, ps.p[i].nthreads);
		if (ps.p[i - 1].nthreads == ps.p[i].nthreads)
			ck_assert_uint_le(ps.p[i - 1].context_switches, ps.p[i].context_switches);
	}
}
END_TEST

/* The order itself: threads, then switches, then the earlier cut. */
START_TEST(rank_order_keys)
{
	struct prediction p[4];
	memset(p, 0, sizeof p);
	unsigned key[4][3] = { { 3, 1, 0 }, { 2, 5, 1 }, { 2, 3, 9 }, { 2, 3, 4 } };
	for (int i = 0; i < 4; i++) {
		p[i].detector = "sidetrack";
		p[i].pattern = "after-window";
		p[i].nthreads = key[i][0];
		p[i].context_switches = key[i][1];
		p[i].cut_seq = key[i][2];
	}
	pr_predictions_rank(p, 4);
	ck_assert_uint_eq(p[0].cut_seq, 4);
	ck_assert_uint_eq(p[1].cut_seq, 9);
	ck_assert_uint_eq(p[2].context_switches, 5);
	ck_assert_uint_eq(p[3].nthreads, 3);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(p[i].id, i + 1);
}
END_TEST

/* The candidates' dedupe table over many doublings: every distinct key
 * is added once, every repeat found, and a key is compared in full only
 * with an equal one (the table keeps each key's hash: a probe past other
 * keys reads none of them, and a growth moves entries without their
 * events). */
START_TEST(cands_dedupe_compares_equal_keys_only)
{
	enum { N = 5000 };
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	for (uint32_t i = 0; i < N; i++)
		ev(0, AVT_EV_WRITE, 0x9000, 0x10000 + (uint64_t)i * 8);
	finish_model();
	pr_cands_init(&cs, m);
	struct pr_cand k;
	memset(&k, 0, sizeof k);
	k.det = PR_DET_SIDETRACK;
	k.pat = PR_PAT_AFTER;
	k.nthr = k.nev = 1;
	for (uint32_t round = 0; round < 2; round++)
		for (uint32_t i = 0; i < N; i++) {
			k.ev[0] = k.order = i + 1; /* the writes: event 0 is the start */
			ck_assert_int_eq(pr_cands_has(&cs, &k), round);
			ck_assert_int_eq(pr_cands_add(&cs, &k), !round);
		}
	ck_assert_uint_eq(cs.n, N);
	/* a repeat is compared with its first copy; the rest only on a
	 * 64-bit hash collision (the table before compared at every occupied
	 * slot it probed: thousands here) */
	ck_assert_uint_ge(cs.ncmp, N);
	ck_assert_uint_le(cs.ncmp, N + 8);
}
END_TEST

START_TEST(options_select_detectors)
{
	mixed_trace();
	run_opts(false, true, 0);
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].detector, "deadlock");
	prediction_set_release(&ps);
	struct predict_opts o = { .deadlocks = false, .sidetrack = true };
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].detector, "sidetrack");
	prediction_set_release(&ps);
	struct predict_opts one = { .max_predictions = 1, .deadlocks = true, .sidetrack = true };
	ck_assert_int_eq(predict_run(tr, &one, &ps), 0);
	ck_assert_uint_eq(ps.n, 1);
}
END_TEST

START_TEST(loop_copies_one_prediction)
{
	spawn_step(2, 0);
	start(1);
	for (int i = 0; i < 500; i++) {
		acq(1, LM, SA);
		rel(1, LM, SA);
		acq(1, LM, SB);
		rel(1, LM, SB);
	}
	start(2);
	for (int i = 0; i < 500; i++) {
		acq(2, LM, SC);
		rel(2, LM, SC);
	}
	finish_and_join_step(2, 0);
	run();
	/* 1000 windows ((A, B), and (B, A) across iterations), all before T2
	 * runs: one after-window prediction */
	ck_assert_uint_eq(ps.n, 1);
	ck_assert_str_eq(ps.p[0].pattern, "after-window");
}
END_TEST

/* tests/targets/mutex_counter.c as recorded: 4 workers, 50 increments. */
START_TEST(mutex_counter_nothing)
{
	spawn_step(4, 0);
	for (uint32_t t = 1; t <= 4; t++) {
		start(t);
		for (int i = 0; i < 50; i++) {
			acq(t, LM, SA);
			rel(t, LM, SA);
		}
	}
	finish_and_join_step(4, 0);
	run();
	ck_assert_uint_eq(ps.n, 0);
}
END_TEST

/* tests/targets/condvar.c as recorded: put/get under queue_lock with
 * signals, waits when full or empty, finish with a broadcast. */
START_TEST(condvar_nothing)
{
	spawn_step(2, 0);
	start(1);
	start(2);
	for (int i = 0; i < 20; i++) {
		acq(1, LM, 0x100);                        /* put */
		if (i % 5 == 4) {
			evx(1, AVT_EV_WAIT, CV2, LM, 0, 0x110, 0);
			acq(2, LM, 0x200);                /* get */
			ev(2, AVT_EV_SIGNAL, CV2, 0x210);
			rel(2, LM, 0x218);
			evx(1, AVT_EV_ACQUIRE, LM, CV2, 0, 0x110, AVT_F_COND_WAKE);
		}
		ev(1, AVT_EV_SIGNAL, CV1, 0x120);
		rel(1, LM, 0x128);
	}
	acq(1, LM, 0x300);                                /* finish */
	ev(1, AVT_EV_BROADCAST, CV1, 0x310);
	rel(1, LM, 0x318);
	for (int i = 0; i < 16; i++) {
		acq(2, LM, 0x200);
		ev(2, AVT_EV_SIGNAL, CV2, 0x210);
		rel(2, LM, 0x218);
	}
	acq(2, LM, 0x200);                                /* the last look */
	rel(2, LM, 0x230);
	finish_and_join_step(2, 0);
	run();
	ck_assert_uint_eq(ps.n, 0);
}
END_TEST

/* tests/targets/workqueue.c as recorded: main submits, workers take jobs
 * and add results under another lock. */
START_TEST(workqueue_nothing)
{
	spawn_step(3, 0);
	for (int j = 0; j < 12; j++) {
		acq(0, LM, 0x100);                        /* submit */
		ev(0, AVT_EV_SIGNAL, CV1, 0x110);
		rel(0, LM, 0x118);
		uint32_t w = 1 + (uint32_t)j % 3;
		if (j < 3)
			start(w);
		acq(w, LM, 0x200);                        /* take */
		ev(w, AVT_EV_SIGNAL, CV2, 0x210);
		rel(w, LM, 0x218);
		acq(w, LR, 0x300);                        /* add_result */
		rel(w, LR, 0x308);
	}
	acq(0, LM, 0x180);                                /* shutdown */
	ev(0, AVT_EV_BROADCAST, CV1, 0x190);
	rel(0, LM, 0x198);
	for (uint32_t w = 1; w <= 3; w++) {
		acq(w, LM, 0x200);
		rel(w, LM, 0x230);
	}
	finish_and_join_step(3, 0);
	run();
	ck_assert_uint_eq(ps.n, 0);
}
END_TEST

static json_t *load_json(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	ck_assert_msg(j != NULL, "%s: %s", path, err.text);
	return j;
}

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/avt_predict_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char p[128];
	snprintf(p, sizeof p, "%s/schedules", dir);
	ck_assert_int_eq(mkdir(p, 0777), 0);
}

static void write_file(const char *rel_path, const char *text)
{
	char p[128];
	snprintf(p, sizeof p, "%s/%s", dir, rel_path);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(write_json_and_schedules)
{
	static const char observed[] = "avtrace-schedule 1\n# 0: the recorded order\nrun T0 3\nfree\n";
	mixed_trace();
	run();
	make_dir();
	write_file("schedules/0000.sched", observed);
	write_file("schedules/0007.sched", "stale");
	ck_assert_int_eq(predict_write(&ps, tr, dir), 0);

	char p[160], err[256];
	snprintf(p, sizeof p, "%s/schedules/0000.sched", dir);
	FILE *f = fopen(p, "r");
	char buf[256] = "";
	ck_assert_uint_gt(fread(buf, 1, sizeof buf - 1, f), 0);
	fclose(f);
	ck_assert_str_eq(buf, observed);
	snprintf(p, sizeof p, "%s/schedules/0007.sched", dir);
	ck_assert_int_ne(access(p, F_OK), 0);
	for (unsigned id = 1; id <= 2; id++) {
		snprintf(p, sizeof p, "%s/schedules/%04u.sched", dir, id);
		struct schedule *s = schedule_read(p, err, sizeof err);
		ck_assert_msg(s != NULL, "%s", err);
		ck_assert_uint_eq(s->nsteps, ps.p[id - 1].sched->nsteps);
		ck_assert(s->has_free);
		schedule_free(s);
	}

	snprintf(p, sizeof p, "%s/predictions.json", dir);
	json_t *root = load_json(p), *arr = json_object_get(root, "predictions");
	ck_assert_uint_eq(json_array_size(arr), 2);
	json_t *a = json_array_get(arr, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "id")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "rank")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(a, "detector")), "sidetrack");
	ck_assert_str_eq(json_string_value(json_object_get(a, "pattern")), "after-window");
	ck_assert_str_eq(json_string_value(json_object_get(a, "schedule")), "schedules/0001.sched");
	ck_assert_int_eq(json_integer_value(json_object_get(a, "context_switches")),
			 ps.p[0].context_switches);
	json_t *thr = json_object_get(a, "threads");
	ck_assert_uint_eq(json_array_size(thr), 2);
	ck_assert_int_eq(json_integer_value(json_array_get(thr, 0)), 1);
	json_t *evs = json_object_get(a, "events");
	ck_assert_uint_eq(json_array_size(evs), 3);
	json_t *e0 = json_array_get(evs, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(e0, "seq")), (json_int_t)ps.p[0].events[0]);
	ck_assert_int_eq(json_integer_value(json_object_get(e0, "thread")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(e0, "kind")), "acquire");
	ck_assert_int_eq(json_integer_value(json_object_get(e0, "site_mod")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(e0, "site_off")), SA);
	ck_assert_int_eq(json_integer_value(json_object_get(e0, "obj")), LM);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(a, "objs"), 0)), LM);
	ck_assert_ptr_nonnull(json_string_value(json_object_get(a, "summary")));
	json_t *b = json_array_get(arr, 1);
	ck_assert_str_eq(json_string_value(json_object_get(b, "detector")), "deadlock");
	ck_assert_str_eq(json_string_value(json_object_get(b, "schedule")), "schedules/0002.sched");
	json_decref(root);

	/* a later run with fewer predictions removes the extra schedule */
	ps.n = 1;
	ck_assert_int_eq(predict_write(&ps, tr, dir), 0);
	ps.n = 2;
	snprintf(p, sizeof p, "%s/schedules/0002.sched", dir);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof p, "%s/schedules/0000.sched", dir);
	ck_assert_int_eq(access(p, F_OK), 0);
}
END_TEST

START_TEST(write_creates_schedules_dir)
{
	mixed_trace();
	run();
	snprintf(dir, sizeof dir, "/tmp/avt_predict_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(predict_write(&ps, tr, dir), 0);
	char p[160], name[64];
	snprintf(p, sizeof p, "%s/%s", dir, predict_schedule_name(1, name, sizeof name));
	ck_assert_str_eq(name, "schedules/0001.sched");
	ck_assert_int_eq(access(p, F_OK), 0);
}
END_TEST

START_TEST(write_fails_cleanly)
{
	mixed_trace();
	run();
	int quiet = unit_quiet_begin();
	int rc = predict_write(&ps, tr, "/nonexistent/dir");
	unit_quiet_end(quiet);
	ck_assert_int_eq(rc, -1);
}
END_TEST

START_TEST(empty_and_bad_traces)
{
	struct predict_opts o = { .deadlocks = true, .sidetrack = true };
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	ck_assert_uint_eq(ps.n, 0);
	prediction_set_release(&ps);
	trace_free(tr);

	setup();
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	ev(0, AVT_EV_ACQUIRE, LM, SA);
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	tr->ev[1].thread = 0x7fffffff; /* corrupt */
	int quiet = unit_quiet_begin();
	int rc = predict_run(tr, &o, &ps);
	unit_quiet_end(quiet);
	ck_assert_int_eq(rc, -1);
	ck_assert_uint_eq(ps.n, 0);
	ck_assert_ptr_null(ps.p);
}
END_TEST

/* ---- the synthetic trace ---- */

START_TEST(synthetic_well_formed)
{
	pr_tracebuf_free(tb);
	tb = NULL;
	tr = predict_synthetic_trace(50000, 8, 16, 42);
	ck_assert_ptr_nonnull(tr);
	ck_assert_uint_ge(tr->nev, 49000);
	ck_assert_uint_le(tr->nev, 51000);
	uint32_t next[8] = { 0 }, owner[16] = { 0 };
	for (size_t i = 0; i < tr->nev; i++) {
		const struct avt_event *e = &tr->ev[i];
		if (e->seq != i || e->thread >= 8 || e->tindex != next[e->thread]++)
			ck_abort_msg("event %zu: bad seq, thread or tindex", i);
		if (e->kind == AVT_EV_ACQUIRE || e->kind == AVT_EV_RELEASE) {
			uint64_t l = (e->obj - 0x600000) / 64;
			if (l >= 16)
				ck_abort_msg("event %zu: lock out of range", i);
			if (e->kind == AVT_EV_ACQUIRE && owner[l])
				ck_abort_msg("event %zu: acquires a held lock", i);
			if (e->kind == AVT_EV_RELEASE && owner[l] != e->thread + 1)
				ck_abort_msg("event %zu: releases a lock it does not hold", i);
			owner[l] = e->kind == AVT_EV_ACQUIRE ? e->thread + 1 : 0;
		}
	}
	ck_assert_uint_eq(tr->nthr, 8);
	ck_assert_uint_eq(tr->ev[tr->nev - 1].kind, AVT_EV_EXIT);
	ck_assert_uint_eq(tr->ev[tr->nev - 1].thread, 0);

	/* the same arguments give the same trace */
	struct trace *again = predict_synthetic_trace(50000, 8, 16, 42);
	ck_assert_ptr_nonnull(again);
	ck_assert_uint_eq(again->nev, tr->nev);
	ck_assert_int_eq(memcmp(again->ev, tr->ev, tr->nev * sizeof *tr->ev), 0);
	trace_free(again);
	struct trace *other = predict_synthetic_trace(50000, 8, 16, 43);
	ck_assert_ptr_nonnull(other);
	ck_assert(other->nev != tr->nev || memcmp(other->ev, tr->ev, tr->nev * sizeof *tr->ev));
	trace_free(other);
}
END_TEST

START_TEST(synthetic_has_both_kinds)
{
	struct predict_opts o = { .deadlocks = true, .sidetrack = true };
	pr_tracebuf_free(tb);
	tb = NULL;
	tr = predict_synthetic_trace(200000, 8, 16, 7);
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(predict_run(tr, &o, &ps), 0);
	bool st = false, dl = false;
	for (size_t i = 0; i < ps.n; i++) {
		st |= !strcmp(ps.p[i].detector, "sidetrack");
		dl |= !strcmp(ps.p[i].detector, "deadlock");
	}
	ck_assert(st && dl);
}
END_TEST

START_TEST(synthetic_rejects_bad_args)
{
	int quiet = unit_quiet_begin();
	struct trace *t1 = predict_synthetic_trace(1000, 1, 16, 1);
	struct trace *t2 = predict_synthetic_trace(1000, 4, 2, 1);
	unit_quiet_end(quiet);
	ck_assert_ptr_null(t1);
	ck_assert_ptr_null(t2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_run");
	TCase *r = tcase_create("run");
	tcase_add_checked_fixture(r, setup_dir, teardown_dir);
	tcase_add_test(r, rank_fewer_threads_first);
	tcase_add_test(r, rank_fewer_switches_first);
	tcase_add_test(r, rank_order_keys);
	tcase_add_test(r, cands_dedupe_compares_equal_keys_only);
	tcase_add_test(r, options_select_detectors);
	tcase_add_test(r, loop_copies_one_prediction);
	tcase_add_test(r, mutex_counter_nothing);
	tcase_add_test(r, condvar_nothing);
	tcase_add_test(r, workqueue_nothing);
	tcase_add_test(r, empty_and_bad_traces);
	suite_add_tcase(s, r);
	TCase *w = tcase_create("write");
	tcase_add_checked_fixture(w, setup_dir, teardown_dir);
	tcase_add_test(w, write_json_and_schedules);
	tcase_add_test(w, write_creates_schedules_dir);
	tcase_add_test(w, write_fails_cleanly);
	suite_add_tcase(s, w);
	TCase *g = tcase_create("synthetic");
	tcase_add_checked_fixture(g, setup_dir, teardown_dir);
	tcase_add_test(g, synthetic_well_formed);
	tcase_add_test(g, synthetic_has_both_kinds);
	tcase_add_test(g, synthetic_rejects_bad_args);
	suite_add_tcase(s, g);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
