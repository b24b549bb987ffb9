/*
 * predict: offline analyses of one recorded trace that produce alternative
 * schedules, each meant to expose a concurrency bug the recorded run did
 * not show.  See docs/predict.md for the model, the detectors' rules and
 * the schedule synthesis.
 *
 *     struct prediction_set set;
 *     struct predict_opts o = { .max_predictions = 0, .deadlocks = true,
 *                               .sidetrack = true, .penelope = true,
 *                               .pecan = true };
 *     if (predict_run(trace, &o, &set) == 0) {
 *             predict_write(&set, trace, "avtrace-out");
 *             prediction_set_release(&set);
 *     }
 *
 * Detectors: "sidetrack" (atomicity violations predicted from lock events,
 * patterns "before-window", "in-window", "after-window"), "deadlock"
 * (lock-order cycles, pattern "cycle") and "penelope" (atomicity
 * violations predicted from memory accesses, patterns "RWR", "RWW",
 * "WWR", "WRW", "WWW").  Every prediction carries the
 * schedule that replay should enforce to reproduce it.
 *
 * Ownership: a struct prediction_set owns its array, and every prediction
 * owns its schedule and summary; prediction_set_release() frees them all.
 * detector, detectors[] and pattern point to static strings, except a
 * user pattern's name, which lives in predict_opts.patterns: keep those
 * patterns until the set is released.  The trace passed to
 * predict_run() is borrowed and may be freed once it returns.
 */
#ifndef AVT_PREDICT_PREDICT_H
#define AVT_PREDICT_PREDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "predict/lockword.h"
#include "trace/schedule.h"
#include "trace/trace.h"

/* max_predictions 0 means this many. */
#define PREDICT_DEFAULT_MAX 100u

/* A code site as in events: module id + offset (absolute if AVT_MOD_NONE). */
struct predict_site {
	uint16_t mod;
	uint64_t off;
};

struct prediction {
	unsigned id;               /* 1-based, in rank order */
	const char *detector;      /* "sidetrack", "deadlock", "penelope", "pecan" */
	const char *pattern;       /* "before-window", "in-window", "after-window", "cycle",
				      "RWR", "RWW", "WWR", "WRW", "WWW"; pecan: the
				      pattern's name */
	/* every detector that found this anomaly, detectors[0] == detector */
	const char *detectors[4];
	unsigned ndetectors;
	/* distinct variables (accesses) or locks (sidetrack, deadlock)
	 * involved: the first ranking key */
	unsigned nvars;
	uint32_t threads[4];
	unsigned nthreads;
	/* seqs of the events that make the violation, in the order the
	 * schedule puts them.  sidetrack: e1 (T1's first acquire), e2 (T2's
	 * acquire), e3 (T1's second acquire).  deadlock with k threads: the k
	 * acquisitions each thread holds, then the k requests (the first
	 * request is the one the schedule ends with).  penelope: e1, e' (the
	 * other thread's access), e2. */
	uint64_t events[8];
	unsigned nevents;
	uint64_t objs[4];          /* locks involved (addresses); penelope, pecan: the variables */
	unsigned nobjs;
	unsigned context_switches; /* of its schedule: steps - 1 */
	/* an access anomaly of writes only (race-WW, WWW): ranked after those
	 * of as many variables and threads that change what a read sees */
	bool writes_only;
	/* pecan's race of a pair of sites that are not neighbours in the
	 * variable's order (docs/predict.md, PECAN, site pairs): ranked after
	 * every other prediction */
	bool site_pair;
	/* pecan's race of two accesses: one of which is a locked instruction
	 * (AVT_F_ATOMIC: a flag's xchg, a counter's lock xadd), or neither
	 * (plain data).  When there are races of both kinds, the locked ones
	 * are ranked after the plain ones (issue 29, tests/targets/atomic_wait.cc) */
	bool locked_race, plain_race;
	struct schedule *sched;    /* owned */
	char *summary;             /* owned; one line, sites as module+0xoff */
	/* sidetrack and penelope with call stacks: a site inside each
	 * function whose invocation the prediction shows is not atomic,
	 * innermost first; penelope in an atomic block: its begin */
	struct predict_site blame[4];
	unsigned nblame;
	uint64_t cut_seq;          /* first recorded event the schedule reorders */
	/* AVFilter (predict/avfilter.h): the schedule breaks a critical
	 * read-after-write relation, so replay will likely diverge; such
	 * predictions are replayed last, or skipped with --filter. */
	bool filtered;
	char *filter_why;          /* owned; one line, or NULL */
	/* the schedule makes a read that runs before its thread's part of the
	 * violation load another value than in the recording, a value that
	 * may steer the thread away (avfilter.h): not predicted (predict_run
	 * drops it, counting it in prediction_set.ndropped); owned, or NULL */
	char *prefix_why;
};

struct pr_patterns;

struct predict_opts {
	unsigned max_predictions;  /* 0: PREDICT_DEFAULT_MAX */
	bool deadlocks;
	bool sidetrack;
	bool penelope;             /* read/write events: PENELOPE's five patterns */
	bool pecan;                /* read/write events: PECAN's built-in patterns */
	bool order;                /* reads in critical sections: from another
	                              thread's later write (order.h) */
	/* more patterns for pecan (borrowed; NULL: none); searched even
	 * without .pecan */
	const struct pr_patterns *patterns;
	/* --atomic FUNC: when set, only calls of the functions it accepts are
	 * transactions (it is given a site inside the function: module id +
	 * offset); every other function's calls are not checked. */
	bool (*atomic)(void *ctx, uint16_t mod, uint64_t off);
	void *atomic_ctx;
	/* --filter: drop the predictions AVFilter flags (by default they are
	 * kept, ranked after all the others) */
	bool filter;
	/* AVFilter's question about a read whose writer a schedule changes
	 * (avfilter.h, pr_avfilter_use()): may the value the read at site
	 * mod+off of address addr loads steer its thread (watched: a
	 * watchpoint saw the read, and the site is the instruction after
	 * it)?  false, with stores[0 .. *nstores) (at most max), when it only
	 * reaches those globals, registers and the stack.  NULL: every read
	 * may steer. */
	bool (*read_steers)(void *ctx, uint16_t mod, uint64_t off, uint64_t addr, bool watched,
			    uint64_t *stores, unsigned max, unsigned *nstores);
	void *read_ctx;
	/* Is the locked update at site mod+off (watched: the instruction
	 * that ends there) one whose result nothing reads, and of which
	 * commutation class (sym.h, sym_rmw_blind(); 0: not one)?  Two
	 * accesses of one class commute: their race is no race (predict.c,
	 * commuting_updates).  ctx: read_ctx.  NULL: none is. */
	int (*rmw_blind)(void *ctx, uint16_t mod, uint64_t off, bool watched);
	/* The recording's --access-scope is known (scope: its value, NULL for
	 * none): an atomicity candidate whose events all lie in code outside
	 * it (a system library's, whose accesses are no events) is not
	 * predicted (predict.c, outside_scope).  false: every module counts
	 * as the user's.  program: the program named on the command line,
	 * the user's code wherever it is installed (NULL: none). */
	bool scope_known;
	const char *scope;
	const char *program;
};

struct prediction_set {
	struct prediction *p;
	size_t n;
	/* the lock words found (recognised, or looking like one but not
	 * recognised: lockword.h), for the summary */
	struct pr_lockwords words;
	/* predictions dropped because their schedule changes what a read
	 * before the violation loads (prediction.prefix_why) */
	size_t ndropped;
};

/* Analyses t and fills out with the predictions in rank order, ids 1..n.
 * out is overwritten, not released: release a set before reusing it.
 * Returns 0; PREDICT_STOPPED when predict_interrupt() asked it to stop,
 * with the predictions synthesized so far (none if it was still
 * detecting), ranked and ready for predict_write(); or -1 after an
 * avt_error() (malformed trace, out of memory), out then empty. */
int predict_run(const struct trace *t, const struct predict_opts *o,
		struct prediction_set *out);
void prediction_set_release(struct prediction_set *s);

#define PREDICT_STOPPED 1
/* Asks a running predict_run() to stop soon (its outer loops check; work
 * between two checks is bounded, see docs/predict.md): async-signal-safe,
 * meant for a SIGINT/SIGTERM/SIGHUP handler.  sig 0 clears the request. */
void predict_interrupt(int sig);
/* The signal given to predict_interrupt(), 0 if none. */
int predict_interrupted(void);

/* Writes DIR/predictions.json and DIR/schedules/NNNN.sched for every
 * prediction (NNNN = id, from 0001; 0000, the recorded order, is never
 * touched).  Schedules NNNN > n left by an earlier run are removed, so the
 * directory always matches predictions.json.  Returns 0, or -1 after an
 * avt_error(). */
int predict_write(const struct prediction_set *s, const struct trace *t, const char *dir);

/* "penelope+pecan": the detectors that found p, in buf. */
const char *predict_detectors(const struct prediction *p, char *buf, size_t len);

/* The file name of prediction id's schedule relative to the output
 * directory ("schedules/0001.sched"), in buf. */
const char *predict_schedule_name(unsigned id, char *buf, size_t len);

/*
 * A synthetic, well-formed trace for benchmarks: T0 creates nthreads - 1
 * workers, which perform about nevents lock events in total on nlocks
 * mutexes (plain critical sections, nested pairs mostly in a global order,
 * some inverted, and check-then-act pairs), serialized by a seeded random
 * scheduler that never lets a thread acquire a held lock; then T0 joins
 * them.  Sites come from a small fixed set, as code would.  The same
 * arguments always give the same trace.  Free with trace_free(); NULL
 * after an avt_error().
 */
struct trace *predict_synthetic_trace(uint64_t nevents, unsigned nthreads, unsigned nlocks,
				      uint64_t seed);

#endif
