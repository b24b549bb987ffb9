/*
 * libFuzzer harness: predict on a read trace, every detector on, as
 * `avtrace predict` runs it.  The reader's checks are what predict relies
 * on; the harness only bounds the work by the validated counts (threads
 * and events) so one input stays a few milliseconds.
 */
#include <string.h>

#include "fuzz_util.h"
#include "predict/pattern.h"
#include "predict/predict.h"
#include "trace/trace.h"

#define FUZZ_MAX_THREADS 16u
#define FUZZ_MAX_EVENTS 2048u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	char err[512] = "";
	struct trace *t = trace_read(fuzz_file(data, size), err, sizeof err);

	if (!t)
		return 0;
	if (!null)
		null = fopen("/dev/null", "w");
	if (trace_nthreads(t) <= FUZZ_MAX_THREADS && t->nev <= FUZZ_MAX_EVENTS) {
		struct predict_opts o = { .deadlocks = true, .sidetrack = true,
					  .penelope = true, .pecan = true, .order = true,
					  .max_predictions = 8 };
		struct prediction_set set;
		if (predict_run(t, &o, &set) == 0) {
			for (size_t i = 0; i < set.n; i++) {
				const struct prediction *p = &set.p[i];
				for (unsigned k = 0; k < p->nevents; k++)
					if (p->events[k] >= t->nev)
						abort(); /* a prediction names events of the trace */
				if (null)
					schedule_write_fp(p->sched, null);
			}
			prediction_set_release(&set);
		}
	}
	trace_free(t);
	return 0;
}
