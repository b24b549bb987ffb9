/*
 * Prediction at scale (issue 30): the model's clocks over chains of
 * threads (model.h) give every event the same clock as dense per-thread
 * vector clocks, with as many chains as threads run at once; sclock's
 * clocks likewise; and predict_interrupt() stops predict_run().
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "predict/model.h"
#include "predict/predict.h"
#include "predict/sclock.h"
#include "predict/tracebuf.h"

/* every event gets its own site, by kind (ev below) */
#define PREDICT_TEST_OWN_SITES
#include "predict_test.h"

enum { L0 = 0x1000, L1 = 0x1040, VAR = 0x2000, BATCH = 7, BATCHES = 12 };

static uint32_t nthr;

static void ev(uint32_t t, enum avt_kind k, uint64_t obj)
{
	ck_assert_uint_ne(pr_tracebuf_event(tb, t, k, obj, 0, 0, 0x100 + k, 0), UINT64_MAX);
}

/* One batch: main creates BATCH threads, they run interleaved (one unit
 * each in turn: start, a critical section, a read, exit); the first
 * creates a grandchild and joins it; main joins all but the last (which
 * never is: its chain must not be taken), and one thread of every third
 * batch has no exit event (joined without an edge: not reusable either);
 * in odd batches one child's first event is not its start. */
static void batch(unsigned bi)
{
	uint32_t ids[BATCH + 1], unit[BATCH + 1] = { 0 };
	for (unsigned i = 0; i < BATCH; i++) {
		ids[i] = nthr++;
		ev(0, AVT_EV_CREATE, ids[i]);
	}
	uint32_t g = PR_NONE;
	for (bool any = true; any;) {
		any = false;
		for (unsigned i = 0; i < BATCH; i++) {
			uint32_t t = ids[i], u = unit[i]++;
			bool nostart = bi % 2 && i == 2, noexit = bi % 3 == 0 && i == 3;
			any |= u < 6;
			if (u == 0 && !nostart)
				ev(t, AVT_EV_START, 0);
			else if (u == 1) {
				ev(t, AVT_EV_ACQUIRE, i % 2 ? L1 : L0);
				ev(t, AVT_EV_WRITE, VAR + 8 * (i % 3));
				ev(t, AVT_EV_RELEASE, i % 2 ? L1 : L0);
			} else if (u == 2 && i == 0) {
				g = nthr++;
				ev(t, AVT_EV_CREATE, g);
				ev(g, AVT_EV_START, t);
				ev(g, AVT_EV_READ, VAR);
			} else if (u == 3) {
				ev(t, AVT_EV_READ, VAR + 8 * ((i + 1) % 3));
				if (i == 0) {
					ev(g, AVT_EV_EXIT, 0);
					ev(t, AVT_EV_JOIN, g);
				}
			} else if (u == 4 && !noexit) {
				ev(t, AVT_EV_EXIT, 0);
			}
		}
	}
	for (unsigned i = 0; i + 1 < BATCH; i++)
		ev(0, AVT_EV_JOIN, ids[i]);
	ev(0, AVT_EV_ACQUIRE, L0);
	ev(0, AVT_EV_WRITE, VAR);
	ev(0, AVT_EV_RELEASE, L0);
}

static struct trace *many_threads(void)
{
	tb = pr_tracebuf_new();
	ck_assert_ptr_nonnull(tb);
	ck_assert_int_eq(pr_tracebuf_module(tb, 0, "/bin/app"), 0);
	nthr = 1;
	ev(0, AVT_EV_START, UINT32_MAX);
	for (unsigned b = 0; b < BATCHES; b++)
		batch(b);
	ev(0, AVT_EV_EXIT, 0);
	struct trace *t = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_ptr_nonnull(t);
	return t;
}

/* Dense clocks of the same edges, the obvious way: program order,
 * create -> start (a thread's first event, if it is its start), exit ->
 * join, and (with locks) every release -> later acquires of its lock. */
static uint32_t *dense(const struct trace *t, bool locks)
{
	uint32_t n = trace_nthreads(t);
	size_t nev = t->nev;
	uint32_t *vc = calloc(nev * n, sizeof *vc), *cur = calloc((size_t)n * n, sizeof *cur);
	uint32_t *rel = calloc(2 * (size_t)n, sizeof *rel);
	uint32_t *create = malloc(n * sizeof *create), *exitev = malloc(n * sizeof *exitev);
	ck_assert(vc && cur && rel && create && exitev);
	for (uint32_t u = 0; u < n; u++)
		create[u] = exitev[u] = UINT32_MAX;
	for (size_t i = 0; i < nev; i++) {
		const struct avt_event *e = &t->ev[i];
		uint32_t *c = cur + (size_t)e->thread * n;
		const uint32_t *src[2] = { NULL, NULL };
		if (e->kind == AVT_EV_START && e->tindex == 0 && create[e->thread] != UINT32_MAX)
			src[0] = vc + (size_t)create[e->thread] * n;
		if (e->kind == AVT_EV_JOIN && exitev[e->obj] != UINT32_MAX)
			src[0] = vc + (size_t)exitev[e->obj] * n;
		if (locks && e->kind == AVT_EV_ACQUIRE)
			src[1] = rel + (e->obj == L1) * (size_t)n;
		for (int k = 0; k < 2; k++)
			for (uint32_t u = 0; src[k] && u < n; u++)
				if (src[k][u] > c[u])
					c[u] = src[k][u];
		c[e->thread] = e->tindex + 1;
		memcpy(vc + i * n, c, n * sizeof *c);
		if (e->kind == AVT_EV_CREATE)
			create[e->obj] = (uint32_t)i;
		if (e->kind == AVT_EV_EXIT)
			exitev[e->thread] = (uint32_t)i;
		if (e->kind == AVT_EV_RELEASE)
			for (uint32_t u = 0; u < n; u++) {
				uint32_t *r = rel + (e->obj == L1) * (size_t)n;
				if (c[u] > r[u])
					r[u] = c[u];
			}
	}
	free(cur);
	free(rel);
	free(create);
	free(exitev);
	return vc;
}

START_TEST(chains_match_dense_clocks)
{
	struct trace *t = many_threads();
	struct pr_model *md = pr_model_new(t);
	ck_assert_ptr_nonnull(md);
	uint32_t n = md->nthreads;
	ck_assert_uint_eq(n, 1 + BATCHES * (BATCH + 1));
	/* chains: main, a batch and a grandchild, plus those never freed
	 * (not joined, joined without exit, no start) -- not one per thread */
	ck_assert_uint_le(md->nslots, 2 + BATCH + 3 * BATCHES);
	ck_assert_uint_lt(md->nslots, n / 2);
	uint32_t *ref = dense(t, true);
	for (uint32_t e = 0; e < md->nev; e++)
		for (uint32_t u = 0; u < n; u++)
			if (pr_vc_at(md, e, u) != ref[(size_t)e * n + u])
				ck_abort_msg("VC(%u)[T%u] = %u, dense %u", e, u, pr_vc_at(md, e, u),
					     ref[(size_t)e * n + u]);
	free(ref);
	struct pr_sclock sc;
	ck_assert_int_eq(pr_sclock_build(&sc, md), 0);
	ref = dense(t, false);
	for (uint32_t e = 0; e < md->nev; e++)
		for (uint32_t u = 0; u < n; u++)
			if (pr_sclock_at(&sc, e, u) != ref[(size_t)e * n + u])
				ck_abort_msg("sclock(%u)[T%u] = %u, dense %u", e, u,
					     pr_sclock_at(&sc, e, u), ref[(size_t)e * n + u]);
	free(ref);
	pr_sclock_release(&sc);
	pr_model_free(md);
	trace_free(t);
}
END_TEST

/* A stop asked before (as by a signal during recording) or while
 * predicting: PREDICT_STOPPED, a set that can be written and released. */
START_TEST(interrupt_stops_predict)
{
	struct trace *t = predict_synthetic_trace(20000, 8, 16, 3);
	ck_assert_ptr_nonnull(t);
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true,
				  .pecan = true, .order = true };
	struct prediction_set set;
	predict_interrupt(SIGTERM);
	ck_assert_int_eq(predict_interrupted(), SIGTERM);
	ck_assert_int_eq(predict_run(t, &o, &set), PREDICT_STOPPED);
	ck_assert_uint_eq(set.n, 0);
	prediction_set_release(&set);
	predict_interrupt(0);
	ck_assert_int_eq(predict_run(t, &o, &set), 0);
	ck_assert_uint_gt(set.n, 0);
	prediction_set_release(&set);
	trace_free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("predict_scale");
	TCase *tc = tcase_create("scale");
	tcase_add_test(tc, chains_match_dense_clocks);
	tcase_add_test(tc, interrupt_stops_predict);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
