/*
 * Priority policies for `avtrace explore`: which thread a serializing
 * scheduler runs next.  Pure and deterministic: no ptrace, no clock, no
 * global state; the same configuration, seed and run index give the same
 * choices.  docs/explore.md explains the algorithms and every choice made
 * where the papers leave room.
 *
 *   PCT    (Burckhardt et al., ASPLOS'10; as restated in Bindal, Bansal,
 *          Lal, "Variable and Thread Bounding", Section 3).  Threads get
 *          the distinct priorities d .. d+n-1 at random.  d-1 distinct
 *          change points k_1 .. k_{d-1} are drawn uniformly from
 *          [1, k_est]; after the k_i-th event of the run (every event
 *          counts) the thread of that event gets priority i, below every
 *          initial priority.
 *   PCTVB  (ibid., Section 3).  v of the candidate variables are drawn
 *          uniformly; S = {(q, j) : q drawn, 1 <= j <= count_q}; d-1
 *          distinct elements of S are drawn; after the j-th event on q
 *          (ev->obj == q, any thread) the thread of that event gets
 *          priority i.  Only events on drawn variables count.
 *   TB     (ibid., Sections 4 and 5, "randomized algorithm").  A random
 *          permutation P of 1 .. n+c: P_1 .. P_n are the priorities of
 *          T0 .. T(n-1); c change points are drawn as in PCT (nvars == 0)
 *          or as in PCTVB (nvars > 0); at the i-th the thread of the event
 *          gets priority P_{n+i}, which may be above other threads'.
 *
 * Threads.  Priorities belong to logical ids (T0 = main, Tk = k-th
 * created).  T0 .. T(n_est-1) get theirs when the run is made; a thread
 * beyond the estimate is inserted at a uniformly random rank among the
 * initial priorities (PCT, PCTVB) or among all n+c+... ranks (TB), which
 * keeps the order a uniform random permutation.  Threads are registered
 * in id order (seeing T7 registers T5 and T6 first), so a thread's
 * priority depends only on the seed, the run index and its id, never on
 * the order the caller happens to mention threads in.
 *
 * Spinning.  A thread that spins on a flag set by a lower-priority thread
 * would starve it for ever.  The caller reports each time slice a thread
 * ran through without an event (xp_run_yield); after yield_limit such
 * slices in a row (default XP_YIELD_LIMIT) the thread drops below every
 * other thread, the latest dropped lowest.  An event of the thread resets
 * its count.  A later change point on that thread overrides the drop.
 *
 * Priorities are reported as numbers: higher runs first.  PCT and PCTVB:
 * change point i is i, initial priorities are d, d+1, ...; TB: 1 .. n+c,
 * more as threads beyond the estimate arrive.  A dropped thread has 0,
 * -1, -2, ... (the latest lowest).  All current priorities are distinct.
 *
 * Ownership: xp_run_new() copies what it needs from the config (the
 * caller's vars array is only read during the call); struct xp_run owns
 * all its memory, xp_run_free() frees it.  struct xp_rng is plain data.
 */
#ifndef AVT_EXPLORE_PCT_H
#define AVT_EXPLORE_PCT_H

#include "explore/xp.h"

/* ---- one run's priorities */

struct xp_run;

/* 0, or -1 after avt_error() naming what is wrong (depth 0, PCTVB with
 * nvars 0, vars NULL with nvars_all > 0, unknown algo). */
int xp_config_check(const struct xp_config *c);

/* Draws the random choices of run run_index.  NULL after avt_error() if
 * the config is invalid or memory runs out. */
struct xp_run *xp_run_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_run_free(struct xp_run *r);

/* Called after every event of the run, in order.  If the event is a
 * change point, ev->thread's priority changes (see above).  A create
 * registers the child.  0, or -1 after avt_error() (out of memory). */
int xp_run_event(struct xp_run *r, const struct avt_event *ev);

/* The index in lids[0..n) (n > 0, distinct logical ids) of the thread
 * with the highest priority.  Unknown threads are registered first.
 * Returns n after avt_error() if memory runs out. */
size_t xp_run_pick(struct xp_run *r, const uint32_t *lids, size_t n);

/* The thread ran through a whole time slice without an event. */
void xp_run_yield(struct xp_run *r, uint32_t lid);

/* The current priority of a thread (see above); INT64_MIN if the run has
 * not registered it yet. */
int64_t xp_run_priority(const struct xp_run *r, uint32_t lid);

/* Change points that have fired so far. */
size_t xp_run_fired(const struct xp_run *r);

/* One line (no newline, always NUL-terminated if len > 0, cut with "..."
 * if too long) with the run's random choices: algorithm, seed, run,
 * initial priorities of the registered threads, drawn variables, change
 * points (and, once fired, the thread each one hit), dropped threads:
 *   "pct d=3 seed=7 run=2 prio T0=4 T1=3 T2=5 cp 1@ev17=T1 2@ev230"
 *   "pctvb d=2 v=1 ... vars 0x4c1040/12 cp 1@0x4c1040#5"
 *   "tb c=1 seed=7 run=0 prio T0=3 T1=1 cp 2@ev40=T0"
 * A change point reads PRIORITY@WHERE[=THREAD IT HIT]; WHERE is evK (the
 * run's K-th event) or OBJ#J (the J-th event on variable OBJ).
 */
void xp_run_describe(const struct xp_run *r, char *buf, size_t len);

/* ---- thread bounding (Lemma 4.1) */

/* A uniformly random permutation of 0 .. m-1 into out[0..m) (Fisher-Yates
 * on r).  Successive calls on one rng give the randomized family of the
 * lemma: independent uniform permutations. */
void xp_perm(struct xp_rng *r, uint32_t *out, uint32_t m);

/* Failure probability the budget is computed for. */
#define XP_PERM_EPSILON 0.01

/* How many permutations of m elements Lemma 4.1 says show every ordered
 * t-subset (all t! relative orders of every t of the m) with probability
 * at least 1 - XP_PERM_EPSILON:
 *     ceil((t+1)! * (ln(m t) + ln(1/epsilon)))
 * (natural logarithms, as the lemma's e-based derivation implies; it is
 * an over-estimate of the union bound t! C(m,t) (1-1/t!)^P <= epsilon).
 * With c change points use m = n+c and t+c for t (Section 4).  1 when
 * t < 2 or t > m; saturates at UINT64_MAX. */
uint64_t xp_perm_budget(uint32_t m, unsigned t);

/* PCT, PCTVB and TB behind struct xp_policy_ops (policy.c's table). */
extern const struct xp_policy_ops xp_pct_ops;

#endif
