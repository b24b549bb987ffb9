/*
 * libFuzzer harness: the trace reader, and what every consumer does with
 * a trace it got (thread count, stack and module look-ups, the recorded
 * schedule).  Whatever the bytes, trace_read returns a trace whose
 * invariants hold (trace.h) or NULL with a message naming the file.
 */
#include <string.h>

#include "fuzz_util.h"
#include "trace/schedule.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	const char *path = fuzz_file(data, size);
	struct trace *t = trace_read(path, err, sizeof err);

	if (!t) {
		if (!strstr(err, path)) {
			fprintf(stderr, "message without the file: %s\n", err);
			abort(); /* every message names the file */
		}
		return 0;
	}
	unsigned n = trace_nthreads(t);
	/* thread ids are dense and each record names at most two */
	if (n > 2 * (t->nev + t->nthr))
		abort();
	for (size_t i = 0; i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if (e->seq != i || e->thread >= n || !avt_kind_name(e->kind))
			abort();
		const struct avt_stack *s = trace_stack(t, e->seq);
		for (uint32_t k = 0; s && k < s->depth; k++)
			(void)trace_module(t, s->frames[k].mod);
		(void)trace_module(t, e->site_mod);
		(void)trace_thread(t, e->thread);
	}
	struct schedule *s = schedule_from_events(t->ev, t->nev);
	if (s && schedule_total_events(s) != t->nev)
		abort();
	schedule_free(s);
	trace_free(t);
	return 0;
}
