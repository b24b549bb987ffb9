/*
 * Shared by the predict unit tests: the fixture (the trace being written,
 * the trace and model built from it, the candidates and predictions found),
 * event builders on that trace, and the suite runner (unit_util.h).
 *
 * Sites: the builders below take the event's site.  A file whose events
 * get sites by a rule of its own (one per event) defines
 * PREDICT_TEST_OWN_SITES before including this and builds on evx().
 */
#ifndef AVT_TESTS_PREDICT_TEST_H
#define AVT_TESTS_PREDICT_TEST_H

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "predict/model.h"
#include "predict/predict.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"
#include "unit_util.h"

/* Owned by the fixture: setup() makes tb, teardown() frees what is set. */
static struct pr_tracebuf *tb;
__attribute__((unused)) static struct trace *tr;
__attribute__((unused)) static struct pr_model *m;
__attribute__((unused)) static struct pr_cands cs;
__attribute__((unused)) static struct prediction_set ps;
/* Flags ev() gives reads and writes: 0, or AVT_F_WATCHED. */
__attribute__((unused)) static uint16_t access_flags;

static inline void setup(void)
{
	tb = pr_tracebuf_new();
	ck_assert_ptr_nonnull(tb);
	ck_assert_int_eq(pr_tracebuf_module(tb, 0, "/bin/app"), 0);
	tr = NULL;
	m = NULL;
	memset(&cs, 0, sizeof cs);
	memset(&ps, 0, sizeof ps);
	access_flags = 0;
}

static inline void teardown(void)
{
	pr_cands_release(&cs);
	prediction_set_release(&ps);
	pr_model_free(m);
	trace_free(tr);
	pr_tracebuf_free(tb);
}

static inline uint32_t evx(uint32_t t, enum avt_kind k, uint64_t obj, uint64_t obj2,
			   uint16_t mod, uint64_t site, uint16_t flags)
{
	uint64_t s = pr_tracebuf_event(tb, t, k, obj, obj2, mod, site, flags);
	ck_assert(s != UINT64_MAX);
	return (uint32_t)s;
}

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

/* Ends the trace being written: tr (tb is gone). */
static inline void finish_trace(void)
{
	tr = pr_tracebuf_finish(tb);
	tb = NULL;
	ck_assert_ptr_nonnull(tr);
}

/* The same, and the model m of tr. */
static inline void finish_model(void)
{
	finish_trace();
	m = pr_model_new(tr);
	ck_assert_ptr_nonnull(m);
}

/* The same, and predict_run on tr with o: the predictions in ps. */
static inline void finish_predict(const struct predict_opts *o)
{
	finish_trace();
	ck_assert_int_eq(predict_run(tr, o, &ps), 0);
}

/* A schedule's steps as "T0:3 T1:2 ... free" (a static buffer). */
static inline const char *steps(const struct schedule *s)
{
	static char buf[256];
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < s->nsteps && off < sizeof buf; i++)
		off += (size_t)snprintf(buf + off, sizeof buf - off, "%sT%u:%u", i ? " " : "",
					s->steps[i].thread, s->steps[i].count);
	if (s->has_free && off < sizeof buf)
		snprintf(buf + off, sizeof buf - off, " free");
	return buf;
}

#ifndef PREDICT_TEST_OWN_SITES

static inline uint32_t ev(uint32_t t, enum avt_kind k, uint64_t obj, uint64_t site)
{
	uint16_t fl = k == AVT_EV_READ || k == AVT_EV_WRITE ? access_flags : 0;
	return evx(t, k, obj, 0, 0, site, fl);
}

/* Lock l at site, unlocked at site + 8. */
static inline uint32_t acq(uint32_t t, uint64_t l, uint64_t site)
{
	return ev(t, AVT_EV_ACQUIRE, l, site);
}

static inline uint32_t rel(uint32_t t, uint64_t l, uint64_t site)
{
	return ev(t, AVT_EV_RELEASE, l, site + 8);
}

/* T0 starts and creates T1 .. Tn, Tt at site 0x700 + t * step. */
static inline void spawn_step(uint32_t n, uint64_t step)
{
	ev(0, AVT_EV_START, UINT32_MAX, 0);
	for (uint32_t t = 1; t <= n; t++)
		ev(0, AVT_EV_CREATE, t, 0x700 + t * step);
}

static inline void spawn(uint32_t n)
{
	spawn_step(n, 8);
}

static inline void start(uint32_t t)
{
	ev(t, AVT_EV_START, 0, 0);
}

/* T1 .. Tn exit, T0 joins each (Tt at site 0x780 + t * step) and exits. */
static inline void finish_and_join_step(uint32_t n, uint64_t step)
{
	for (uint32_t t = 1; t <= n; t++)
		ev(t, AVT_EV_EXIT, 0, 0);
	for (uint32_t t = 1; t <= n; t++)
		ev(0, AVT_EV_JOIN, t, 0x780 + t * step);
	ev(0, AVT_EV_EXIT, 0, 0);
}

static inline void finish_and_join(uint32_t n)
{
	finish_and_join_step(n, 8);
}

#endif

#endif
