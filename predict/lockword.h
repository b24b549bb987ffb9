/*
 * Lock words: hand-written locks (a futex mutex, a compare-and-swap
 * spinlock) whose code is instrumented, so that the trace has their
 * atomic accesses on the lock word instead of acquire/release events.
 * pr_lockwords_find() recognises the standard pattern (docs/predict.md,
 * "Lock words") and rewrites a copy of the events: the successful
 * compare-and-swap becomes an acquire of the word, the owner's next write
 * to it a release, another thread's failed compare-and-swap while it is
 * held a trylock_fail.  Every detector then sees the word as a lock (named
 * as the program names the variable), and the schedules respect it; the
 * events keep their seqs and tindexes, so schedules count the same events.
 *
 * Words that look like lock words (futex events on them, or a
 * compare-and-swap that failed) but do not follow the pattern are listed
 * with the reason, for predict's summary.
 *
 * Ownership: struct pr_lockwords owns its array (pr_lockwords_release());
 * why points to static strings.  The derived trace shares everything but
 * ev with the trace it came from: free it with pr_lockwords_trace_free(),
 * never trace_free().
 */
#ifndef AVT_PREDICT_LOCKWORD_H
#define AVT_PREDICT_LOCKWORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct pr_lockword {
	uint64_t addr;
	bool lock;         /* recognised: its accesses are lock events now */
	uint32_t pairs;    /* acquire/release pairs (recognised, or before the break) */
	const char *why;   /* not recognised: why (static); NULL when lock */
	uint64_t at;       /* the seq of the event that broke the pattern, or UINT64_MAX */
	uint32_t thread;   /* at's thread, and the holder it met (UINT32_MAX: none) */
	uint32_t holder;
};

struct pr_lockwords {
	struct pr_lockword *w; /* in address order */
	size_t n;
};

/* Finds t's lock words into out and sets *derived to a trace whose events
 * have the recognised words' accesses rewritten as lock events, or to t
 * itself when no word is recognised.  0, or -1 after an avt_error() (out
 * of memory; out is then empty, *derived t).  O(n) in t's events plus
 * O(w log w) for w candidate words. */
int pr_lockwords_find(const struct trace *t, struct pr_lockwords *out,
		      const struct trace **derived);
void pr_lockwords_release(struct pr_lockwords *lw);
/* Frees a derived trace (nothing if it is t). */
void pr_lockwords_trace_free(const struct trace *t, const struct trace *derived);

#endif
