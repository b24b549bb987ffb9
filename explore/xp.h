/*
 * What every file of explore/ shares: the algorithms, their
 * configuration, the deterministic random numbers every draw comes from,
 * the interface every policy implements (struct xp_policy_ops, chosen by
 * policy.c's table) and a line printer for describe.  The bottom of
 * explore/: it uses nothing else of explore/.
 *
 *   xp.h      this: config, algorithm enum, RNG, the policy operations
 *   rec.c     the recording per thread (xp_rec), a run's view of it (xp_look)
 *   rf.c      reads-from pairs of a run, as keys
 *   start.c   what explore has learnt (xp_guide): pairs seen, targets
 *             tried, the starting points every policy may follow
 *   prefix.c  following a starting point (a prediction's, a corpus seed's)
 *   pct.c pos.c surw.c guided.c   the policies
 *   sim.c     the locks a look-ahead follows
 *   ahead.c   SURW's look-ahead (xp_surw_budget)
 *   policy.c  the table of algorithms, xp_policy_* (policy.h)
 *   explore.c runs: forks replays with a policy as the picker
 *
 * Each file uses only files above it in this list.
 * Ownership: struct xp_rng is plain data; xp_config borrows what it
 * points to.
 */
#ifndef AVT_EXPLORE_XP_H
#define AVT_EXPLORE_XP_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

/* ---- deterministic PRNG: xoshiro256** seeded by splitmix64 */

struct xp_rng {
	uint64_t s[4];
};

/* Any seed, 0 included, gives a valid (nonzero) state. */
void xp_rng_seed(struct xp_rng *r, uint64_t seed);
/* The stream of run run_index of an exploration seeded with seed:
 * distinct run indexes give unrelated streams. */
void xp_rng_seed_run(struct xp_rng *r, uint64_t seed, uint64_t run_index);
uint64_t xp_rng_next(struct xp_rng *r);
/* Uniform in [0, n), without modulo bias; n > 0. */
uint64_t xp_rng_below(struct xp_rng *r, uint64_t n);

/* ---- the algorithms and their configuration */

/* PCT, PCTVB and TB are explore/pct.c's (xp_run_new() refuses the
 * others); POS, SURW and guided explore/pos.c's, surw.c's, guided.c's,
 * all behind struct xp_policy_ops (policy.c's table).  XP_PORTFOLIO is
 * none of its own: policy.c gives each run to one of its members
 * (xp_portfolio_member, policy.h). */
enum xp_algo { XP_PCT, XP_PCTVB, XP_TB, XP_POS, XP_SURW, XP_GUIDED, XP_PORTFOLIO };

/* Consecutive event-less time slices before a spinning thread drops. */
#define XP_YIELD_LIMIT 3u

/* A variable (global, lock, or a heap-allocation site the caller has
 * mapped its blocks to) and its estimated events per run.  Matched
 * against ev->obj of events whose obj is an address. */
struct xp_var {
	uint64_t obj;
	uint64_t count;
};

struct xp_rec;
struct xp_guide;

/* SURW: draw how many objects too, uniformly among 1 .. all shared ones
 * and every event (explore/surw.c). */
#define XP_VARS_RANDOM 0xffffffffu

struct xp_config {
	enum xp_algo algo;
	unsigned depth;        /* d >= 1: d-1 change points (PCT, PCTVB) */
	unsigned nvars;        /* v: variables drawn per run (PCTVB >= 1; TB: 0 = PCT-style points;
	                          SURW: objects, 0 every event, XP_VARS_RANDOM drawn) */
	unsigned threads;      /* t: thread bound (TB); only informs the budget, see xp_perm_budget */
	unsigned contexts;     /* c: change points per run (TB) */
	unsigned nthreads_est; /* n: threads per run, from the recording */
	uint64_t k_est;        /* events per run, all kinds, from the recording */
	const struct xp_var *vars; /* candidate variables, distinct objs (borrowed) */
	size_t nvars_all;
	unsigned yield_limit;  /* 0: XP_YIELD_LIMIT */
	/* explore/rec.h: the recording per thread (POS, SURW, guided); start.h:
	 * what earlier runs found (guided); borrowed, may be NULL */
	const struct xp_rec *rec;
	const struct xp_guide *guide;
};

/* ---- one run of a policy, as every policy implements it */

/* The run's state is the policy's own (void *); each verb is the
 * xp_policy_* of policy.h that calls it.  new returns NULL after
 * avt_error(); target may be NULL (no target: 0). */
struct xp_policy_ops {
	void *(*new)(const struct xp_config *c, uint64_t seed, uint64_t run_index);
	int (*event)(void *run, const struct avt_event *ev);
	size_t (*pick)(void *run, const uint32_t *lids, size_t n);
	void (*yield)(void *run, uint32_t lid);
	/* optional: thread lid stands at a process exit (exit(), return from
	 * main: every thread ends with it).  NULL: it gives way to every
	 * other thread, as one spinning through yield_limit slices does */
	void (*exiting)(void *run, uint32_t lid);
	/* optional: lid, about to be yielded, was seen to wait on another
	 * thread (a spin), not to compute: NULL, nothing to do */
	void (*spun)(void *run, uint32_t lid);
	void (*describe)(const void *run, char *buf, size_t len);
	uint64_t (*target)(const void *run);
	void (*free)(void *run);
};

/* Appends printf output to buf[0..len) at *used; on overflow the line
 * ends in "..." and later calls add nothing. */
void xp_put(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
