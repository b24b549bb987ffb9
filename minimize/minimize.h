/*
 * Minimisation: the fewest context switches a failing schedule needs.
 *
 * A switch is a change of thread between consecutive run/yield steps of a
 * schedule (docs/schedule-format.md); what runs after "free" is the replay
 * policy's, not the schedule's, and counts no switch.  A schedule is seen
 * as blocks: maximal runs of steps of one thread.  A switch is dropped by
 * taking a block out and letting its thread's steps happen elsewhere, in
 * that thread's order:
 *   - defer: the block's steps go in front of the thread's next block (or,
 *     if it has none, to the free part, where they run anyway);
 *   - advance: they go at the end of the thread's previous block;
 *   - truncate: every block from some point on goes to the free part.
 * Removing a block joins its neighbours: one switch fewer, or two when they
 * are the same thread.  Each thread keeps its own event order, so every
 * candidate is a schedule the recording can follow, or that replay calls
 * INFEASIBLE.
 *
 * The search (minimize_schedule): with the caller's help, every block whose
 * events commute with the other threads' deferred at once (one candidate);
 * the shortest failing prefix (binary search), then ddmin over the blocks (defer a chunk at a time, chunks
 * halving), then one block at a time, deferred or advanced, until no single
 * removal keeps the failure (1-minimal).  Each candidate is judged by the
 * caller's test (an ordinary replay that fails the same way); no candidate
 * is tried twice, and at most max_tests are tried in all.
 *
 * Ownership: minimize_schedule returns a new schedule (schedule_free) with
 * the input's comments; the input is borrowed.
 */
#ifndef AVT_MINIMIZE_MINIMIZE_H
#define AVT_MINIMIZE_MINIMIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/schedule.h"

/* A context switch: before step `step` (0-based index into the steps),
 * thread `from` (the previous step's) gives way to `to`.  before_events,
 * after_events: how many events of from and of to have run (by the
 * schedule's run steps) when it happens, i.e. from's last event before the
 * switch is its number before_events - 1 (0-based; none if 0), and to's
 * first event after it is its number after_events. */
struct min_switch {
	size_t step;
	uint32_t from, to;
	uint64_t from_done, to_done;
};

/* Number of switches of s. */
size_t min_count_switches(const struct schedule *s);

/* The switches of s into *out (malloc'ed, caller frees); their number, or
 * (size_t)-1 if out of memory (then *out is NULL). */
size_t min_list_switches(const struct schedule *s, struct min_switch **out);

/* A candidate's verdict: it fails the same way (1), it does not (0:
 * passes, fails otherwise, infeasible), or the search must stop (-1: an
 * error of the caller's). */
typedef int (*min_test_fn)(void *ctx, const struct schedule *cand);

struct min_opts {
	min_test_fn test;
	void *ctx;
	unsigned max_tests;   /* at most this many calls of test; 0: no cap */
	/* optional: true when the n events of `thread` numbered from `from` on
	 * (0-based, in its own order) touch no object another thread touches,
	 * create, join, start or end no thread: they commute with the other
	 * threads' events, so blocks made of such events are moved out first,
	 * all in one candidate. */
	bool (*quiet)(void *ctx, uint32_t thread, uint64_t from, uint64_t n);
};

struct min_stats {
	unsigned tests;       /* calls of test */
	unsigned accepted;    /* candidates that kept the failure */
	bool capped;          /* stopped at max_tests: maybe not 1-minimal */
	bool error;           /* test returned -1 */
	size_t from_switches, to_switches;
};

/* The schedule with the fewest switches found that still fails; s itself
 * is assumed to fail and is not tested.  NULL if out of memory. */
struct schedule *minimize_schedule(const struct schedule *s, const struct min_opts *o,
				   struct min_stats *st);

/* The neighbour of switch k of s (0-based, as min_list_switches): the
 * event right after the switch moved `shift` steps later, i.e. the thread
 * that gave way runs `shift` more events first (taken from its next run
 * steps, or from the free part).  thread_events[t] (t < nthreads): how
 * many events thread t has in the recording; a thread without `shift`
 * events left has no such neighbour.  NULL then, if k is out of range or
 * shift 0, or out of memory. */
struct schedule *minimize_neighbour(const struct schedule *s, size_t k, uint32_t shift,
				    const uint64_t *thread_events, size_t nthreads);

/* Primitives, exposed for the tests.  Each returns a new schedule with s's
 * comments, or NULL if out of memory. */
struct schedule *minimize_defer(const struct schedule *s, const bool *drop_block);
struct schedule *minimize_advance(const struct schedule *s, size_t block);
struct schedule *minimize_truncate(const struct schedule *s, size_t nblocks);
/* Number of blocks of s (switches + 1, 0 for no steps). */
size_t minimize_nblocks(const struct schedule *s);

#endif
