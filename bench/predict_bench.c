/*
 * predict on a synthetic trace, with the issues' targets and the measured
 * ratio to each.  Usage:
 *   predict_bench [NEVENTS] [NTHREADS] [NLOCKS] [SEED] [accesses [NVARS]]
 *
 * Without "accesses" (issue: predict from lock events): NEVENTS lock
 * events (default 1M), 16 threads, 64 locks; predict_run is timed
 * (target <= 1 s, <= 200 MB peak).
 *
 * With "accesses" (issue: predict from access events): memory accesses
 * are woven into the lock trace, and NEVENTS counts the whole trace (the
 * lock trace is sized for it): every critical section reads and writes a
 * variable of its lock (protected: nothing to find, all the work to do),
 * and after one release in eight the thread reads, or one in sixteen
 * writes, one of NVARS (default 4) unprotected globals (races: windows
 * and culprits everywhere).  Then the searches of PENELOPE (cut-points,
 * target <= 1 s) and PECAN (patterns, target <= 2 s) are timed on their
 * own, without synthesis; peak memory target <= 300 MB.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "predict/model.h"
#include "predict/pattern.h"
#include "predict/order.h"
#include "predict/pecan.h"
#include "predict/penelope.h"
#include "predict/predict.h"
#include "predict/rank.h"
#include "predict/tracebuf.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 33);
}

static unsigned nglobals = 4;

static int add(struct pr_tracebuf *b, const struct avt_event *e, enum avt_kind k, uint64_t obj,
	       uint64_t site)
{
	return pr_tracebuf_event(b, e->thread, k, obj, 0, e->site_mod, site, 0) == UINT64_MAX ? -1 : 0;
}

/* The accesses after event e (see the header comment). */
static int accesses(struct pr_tracebuf *b, const struct avt_event *e)
{
	uint64_t h = mix(e->seq);
	if (avt_kind_is_acquire(e->kind))
		return add(b, e, AVT_EV_READ, 0x200000 + (e->obj & 0xffff) * 8, e->site_off + 0x1000) |
		       add(b, e, AVT_EV_WRITE, 0x200000 + (e->obj & 0xffff) * 8, e->site_off + 0x1008);
	if (e->kind != AVT_EV_RELEASE || h % 8)
		return 0;
	/* one line reads each global, one writes it, as in a program */
	bool w = (h >> 8) % 2;
	uint64_t v = (h >> 16) % nglobals;
	return add(b, e, w ? AVT_EV_WRITE : AVT_EV_READ, 0x300000 + v * 8,
		   0x9000 + (v % 64) * 16 + w * 8);
}

/* t with accesses woven in; t is freed. */
static struct trace *with_accesses(struct trace *t)
{
	struct pr_tracebuf *b = pr_tracebuf_new();
	for (size_t i = 0; b && i < t->nmod; i++)
		if (pr_tracebuf_module(b, t->mod[i].rec.id, t->mod[i].path) < 0)
			goto fail;
	for (size_t i = 0; b && i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if (pr_tracebuf_event(b, e->thread, e->kind, e->obj, e->obj2, e->site_mod, e->site_off,
				      e->flags) == UINT64_MAX || accesses(b, e) < 0)
			goto fail;
	}
	trace_free(t);
	return b ? pr_tracebuf_finish(b) : NULL;
fail:
	pr_tracebuf_free(b);
	trace_free(t);
	return NULL;
}

static void verdict(const char *what, double got, double target, const char *unit)
{
	printf("  %-34s %8.3f %s  target <= %g %s  ratio %.2f  %s\n", what, got, unit, target, unit,
	       got / target, got <= target ? "met" : "NOT MET");
}

/* The lock trace whose woven trace has about nev events. */
static struct trace *sized_trace(uint64_t nev, unsigned nthr, unsigned nlocks, uint64_t seed)
{
	uint64_t base = nev / 2 > 1000 ? nev / 2 : 1000;
	struct trace *t = with_accesses(predict_synthetic_trace(base, nthr, nlocks, seed));
	if (!t)
		return NULL;
	uint64_t scaled = (uint64_t)((double)base * (double)nev / (double)t->nev);
	trace_free(t);
	return with_accesses(predict_synthetic_trace(scaled, nthr, nlocks, seed));
}

int main(int argc, char **argv)
{
	uint64_t nev = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	unsigned nthr = argc > 2 ? (unsigned)atoi(argv[2]) : 16;
	unsigned nlocks = argc > 3 ? (unsigned)atoi(argv[3]) : 64;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	bool acc = argc > 5 && !strcmp(argv[5], "accesses");
	if (acc && argc > 6)
		nglobals = (unsigned)atoi(argv[6]) ? (unsigned)atoi(argv[6]) : 4;
	struct trace *t = acc ? sized_trace(nev, nthr, nlocks, seed)
			      : predict_synthetic_trace(nev, nthr, nlocks, seed);
	if (!t)
		return 2;
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true,
				  .pecan = true, .order = true };
	struct prediction_set set;
	double t0 = now();
	if (predict_run(t, &o, &set) < 0)
		return 2;
	double t1 = now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (acc)
		printf("predict: %zu events (%u globals), %u threads, %u locks\n", t->nev, nglobals,
		       nthr, nlocks);
	else
		printf("predict: %zu events, %u threads, %u locks\n", t->nev, nthr, nlocks);
	printf("  predict_run (every detector, synthesis): %.3f s, %zu predictions\n", t1 - t0,
	       set.n);
	prediction_set_release(&set);
	if (!acc) {
		verdict("predict_run", t1 - t0, 1, "s");
		verdict("peak RSS (trace included)", (double)ru.ru_maxrss / 1024, 200, "MB");
	} else {
		/* the detectors' search alone (PENELOPE's cut-points, PECAN's
		 * pattern search), without schedule synthesis */
		struct pr_model *m = pr_model_new(t);
		const struct pr_patterns *b = pr_builtin_patterns();
		struct pr_cands cs;
		if (!m)
			return 2;
		static const char *const names[] = { "penelope", "pecan", "order" };
		for (int d = 0; d < 3; d++) {
			pr_cands_init(&cs, m);
			t0 = now();
			int rc = d == 0 ? pr_penelope(m, &cs, NULL) : d == 1 ? pr_pecan(m, &cs, &b, 1) : pr_order(m, &cs);
			if (rc < 0)
				return 2;
			t1 = now();
			char what[64];
			snprintf(what, sizeof what, "%s search (%zu candidates)", names[d], cs.n);
			verdict(what, t1 - t0, d == 1 ? 2 : 1, "s");
			pr_cands_release(&cs);
		}
		pr_model_free(m);
		getrusage(RUSAGE_SELF, &ru);
		verdict("peak RSS (trace included)", (double)ru.ru_maxrss / 1024, 300, "MB");
	}
	trace_free(t);
	return 0;
}
