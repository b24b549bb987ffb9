/*
 * AVFilter on a recording: loads DIR/trace.avt, predicts with the options
 * `avtrace test` uses (every detector, default maximum, no --atomic, and
 * the symbolizer telling where a read's value goes: docs/avfilter.md) and
 * prints, per prediction, what AVFilter says of its schedule:
 *
 *     ID DETECTOR PATTERN SEQ,SEQ,... flagged|kept [WHY]
 *
 * then "# N predictions, F flagged, T s" (the time of pr_avfilter alone).
 * With --br=yes every event is taken to follow a branch (the opposite of
 * the default pr_br_unknown), to measure what that choice would flag.
 * Usage: avfilter_bench [--br=yes] DIR | --synthetic (the 1M-event trace
 * of bench/predict, for the time).  bench/avfilter drives it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "predict/avfilter.h"
#include "predict/model.h"
#include "predict/predict.h"
#include "symbolizer/sym.h"
#include "trace/log.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool br_yes(void *ctx, const struct pr_model *m, uint32_t e)
{
	(void)ctx;
	(void)m;
	(void)e;
	return true;
}

int main(int argc, char **argv)
{
	bool yes = argc == 3 && !strcmp(argv[1], "--br=yes");
	if (argc != 2 && !yes) {
		fprintf(stderr, "usage: avfilter_bench [--br=yes] DIR | --synthetic\n");
		return 2;
	}
	char path[4096], err[512] = "";
	struct trace *t;
	if (!strcmp(argv[argc - 1], "--synthetic")) {
		t = predict_synthetic_trace(1000000, 16, 64, 1);
	} else {
		snprintf(path, sizeof path, "%s/trace.avt", argv[argc - 1]);
		t = trace_read(path, err, sizeof err);
	}
	if (!t) {
		fprintf(stderr, "avfilter_bench: %s\n", err);
		return 2;
	}
	struct sym *sy = sym_new();
	for (size_t i = 0; sy && i < t->nmod; i++)
		sym_add_module(sy, t->mod[i].rec.id, t->mod[i].path, t->mod[i].rec.base,
			       t->mod[i].rec.lo, t->mod[i].rec.hi, t->mod[i].rec.build_id,
			       t->mod[i].rec.build_id_len);
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true,
				  .pecan = true, .read_steers = sy ? sym_read_steers : NULL,
				  .read_ctx = sy };
	struct prediction_set set;
	struct pr_model *m = NULL;
	int rc = 2;
	if (predict_run(t, &o, &set) < 0)
		goto out;
	m = pr_model_new(t);
	if (!m)
		goto out_set;
	double t0 = now();
	if (pr_avfilter_use(m, set.p, set.n, yes ? br_yes : NULL, NULL, o.read_steers, sy) < 0)
		goto out_set;
	double dt = now() - t0;
	size_t nf = 0;
	for (size_t i = 0; i < set.n; i++) {
		const struct prediction *p = &set.p[i];
		printf("%u %s %s ", p->id, p->detector, p->pattern);
		for (unsigned k = 0; k < p->nevents; k++)
			printf("%s%" PRIu64, k ? "," : "", p->events[k]);
		printf(" %s%s%s\n", p->filtered ? "flagged" : "kept", p->filtered ? " " : "",
		       p->filtered ? p->filter_why : "");
		nf += p->filtered;
	}
	printf("# %zu predictions, %zu flagged, %.6f s\n", set.n, nf, dt);
	rc = 0;
out_set:
	prediction_set_release(&set);
out:
	pr_model_free(m);
	trace_free(t);
	sym_free(sy);
	return rc;
}
