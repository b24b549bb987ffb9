/*
 * One interface over every exploration policy, and what the recording
 * tells the policies that look ahead.
 *
 *   pct, pctvb, tb   explore/pct.h: priorities and change points; they
 *                    need only counts from the recording.
 *   pos              explore/pos.c: partial-order sampling (Yuan, Yang,
 *                    Gu, CAV'18): a random priority per pending event,
 *                    drawn again for the events that race with the one
 *                    that just ran.
 *   surw             explore/surw.c: selectively uniform random walk
 *                    (ASPLOS'25): at events on a few objects drawn per
 *                    run, a thread is chosen with probability proportional
 *                    to its remaining events on them; elsewhere the
 *                    current thread keeps running.
 *   guided           explore/guided.c: reads-from guided search (after
 *                    RFF, ASPLOS'24): each run tries to make one read take
 *                    its value from a write no run so far has shown it,
 *                    from a prefix of an earlier run that reached a new
 *                    reads-from pair (or of a prediction's schedule).
 *
 * A policy does not know a thread's next event before the thread runs to
 * it; the recording does.  struct xp_rec keeps the recording's events per
 * thread, so that a thread that has made i events in this run is taken to
 * be about to make its recorded event i.  When a run diverges that guess
 * goes wrong for a while; it costs the policy precision, never
 * correctness (any runnable thread may still be picked).
 *
 * Everything is deterministic given the configuration, the seed and the
 * run index (and, for guided, the feedback folded in before the run was
 * forked: explore.c folds it in run order, one round at a time).
 *
 * Ownership: xp_rec_new() copies what it needs; xp_policy_new() borrows
 * cfg->rec and cfg->guide for the life of the policy (the caller keeps
 * them alive); struct xp_policy owns the rest.
 */
#ifndef AVT_EXPLORE_POLICY_H
#define AVT_EXPLORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/pct.h"
#include "trace/event.h"

/* ---- the recording, per thread */

/* One recorded event, as much as the policies use of it. */
struct xp_rev {
	uint64_t obj;  /* address, or 0 if the kind has none */
	uint64_t site; /* site_mod << 48 ^ site_off */
	uint16_t kind;
	uint16_t pad[3];
};

struct xp_rec;

/* From the recording's events in order.  NULL after avt_error(). */
struct xp_rec *xp_rec_new(const struct avt_event *ev, size_t n);
void xp_rec_free(struct xp_rec *r);
/* Threads of the recording (highest logical id + 1). */
uint32_t xp_rec_nthreads(const struct xp_rec *r);
/* Recorded events of thread lid (0 for an unknown thread). */
size_t xp_rec_count(const struct xp_rec *r, uint32_t lid);
/* Its idx-th event, or NULL past the end. */
const struct xp_rev *xp_rec_event(const struct xp_rec *r, uint32_t lid, size_t idx);
/* Objects touched by at least two threads (variables and locks), in
 * address order, into *objs (malloc'ed, the caller frees); -1 after
 * avt_error(). */
int xp_rec_shared(const struct xp_rec *r, uint64_t **objs, size_t *n);

/* The object an event is on, 0 if its kind names none (start, exit,
 * create, join, begin, end, fatal signal).  Every other kind counts, the
 * kinds to come included. */
uint64_t xp_event_obj(unsigned kind, uint64_t obj);
/* Two events on the same object that do not commute: not both reads (a
 * read or a read lock).  For POS's races and SURW's interest. */
bool xp_conflict(unsigned k1, uint64_t o1, unsigned k2, uint64_t o2);
uint64_t xp_site(const struct avt_event *ev);

/* ---- reads-from feedback (guided) and starting points (every policy) */

/* An event reads obj if it can observe what an earlier event left there
 * (a read, any lock acquire, a semaphore wait, the kinds to come that are
 * not pure writes); it writes obj if it changes it (a write, an acquire, a
 * release, a post, a signal; not a read, read lock or failed trylock). */
bool xp_kind_reads(unsigned kind);
bool xp_kind_writes(unsigned kind);

/* The reads-from pairs of a run, as keys: for each event that reads an
 * object, the (thread, site) of the last event before it that wrote the
 * object, or none (the initial value), with the reader's (thread, site)
 * and the object.  Sorted and distinct, malloc'ed into *keys.  -1 after
 * avt_error(). */
int xp_rf_keys(const struct avt_event *ev, size_t n, uint64_t **keys, size_t *nkeys);

/* What explore has learnt so far, and where runs may start.  Built and
 * changed by the parent between rounds; runs only read it. */
struct xp_guide;

/* rec gives the readers and writers a guided run can pair (borrowed, kept
 * alive by the caller).  NULL after avt_error(). */
struct xp_guide *xp_guide_new(const struct xp_rec *rec);
void xp_guide_free(struct xp_guide *g);
/* Adds keys (any order) to the pairs seen; returns how many were new, -1
 * after avt_error(). */
long xp_guide_add_rf(struct xp_guide *g, const uint64_t *keys, size_t n);
bool xp_guide_seen(const struct xp_guide *g, uint64_t key);
/* Targets (pair keys) a guided run has tried already: not drawn again.
 * xp_policy_target() gives a run's. */
bool xp_guide_tried(const struct xp_guide *g, uint64_t key);
int xp_guide_add_tried(struct xp_guide *g, uint64_t key);
size_t xp_guide_nseen(const struct xp_guide *g);
/* A starting point: the threads of a schedule's first events, in order
 * (the run steps of a prediction, or what a run did).  Starting points
 * from predictions come first: run i (from 1) of any policy follows the
 * i-th of them as far as it can, then goes on by its policy.  Seeds of
 * the corpus (from_prediction false) are guided's: a guided run may
 * follow a prefix of one.  The corpus keeps at most XP_GUIDE_CORPUS
 * seeds (the first ones).  -1 after avt_error(). */
#define XP_GUIDE_CORPUS 64u
/* Guided runs are forked in rounds of this many: a round sees the
 * feedback of every earlier round and none of its own (explore.c). */
#define XP_GUIDE_ROUND 4u
int xp_guide_add_start(struct xp_guide *g, const uint32_t *threads, size_t n, bool from_prediction);
/* The same, for a prediction whose pattern names the threads pattern[0..
 * npattern): a run that starts there keeps the order of those threads'
 * events in the prefix and places every other thread (a bystander) at
 * random among them, a uniform interleaving of the pattern's sequence
 * with each bystander's remaining recorded events, instead of where the
 * recording had it (policy.c, follow_pick). */
int xp_guide_add_prediction(struct xp_guide *g, const uint32_t *threads, size_t n, bool from_prediction,
			    const uint32_t *pattern, size_t npattern);
size_t xp_guide_npredicted(const struct xp_guide *g);
size_t xp_guide_ncorpus(const struct xp_guide *g);

/* ---- one run's policy */

struct xp_policy;

/* Any algorithm of enum xp_algo.  POS, SURW and guided need cfg->rec
 * (without it they know no thread's next event and degrade to random
 * walks); guided also reads cfg->guide.  NULL after avt_error(). */
struct xp_policy *xp_policy_new(const struct xp_config *cfg, uint64_t seed, uint64_t run_index);
void xp_policy_free(struct xp_policy *p);
/* After every event of the run, in order.  -1 after avt_error(). */
int xp_policy_event(struct xp_policy *p, const struct avt_event *ev);
/* The index in lids[0..n) (n > 0) of the thread to run next; n after
 * avt_error() (out of memory). */
size_t xp_policy_pick(struct xp_policy *p, const uint32_t *lids, size_t n);
/* lid ran through a time slice without an event (it may spin). */
void xp_policy_yield(struct xp_policy *p, uint32_t lid);
/* The next pick as it stands while the thread just picked runs on alone
 * (from the tracer: tracer_pick_view): the threads it may offer, in order
 * (that thread among them), each as it is (lock 0) or while that lock is
 * free (held: the running thread's holds on it now; its acquires and
 * releases change that); and the objects the others wait for (any other
 * event on one, or on a lock above, may change who can run).
 *
 * A thread may also be one the agent can hand the run token to (park:
 * stopped at that request, an acquire or a release of park_obj, which it
 * can wait to make in-process); with locks_known, locks[] are all the
 * locks held now (owner UINT32_MAX - 1: readers), and a budget may then
 * go on through the walks such threads win (a hand-over script). */
struct xp_view_thread {
	uint32_t lid;
	uint32_t held;
	uint64_t lock;
	uint16_t park;
	uint64_t park_obj;
};
struct xp_view_lock {
	uint64_t obj;
	uint32_t owner, count;
};
struct xp_view {
	const struct xp_view_thread *thr;
	size_t n;
	const uint64_t *objs;
	size_t nobjs;
	const struct xp_view_lock *locks;
	size_t nlocks;
	bool locks_known;
};
/* lid was just picked: the next events every pick would give it again,
 * whatever the others do, if they are these recorded ones (up to max into
 * ev; their number), so that they may run with no decision (the agent's
 * run token; an event that is not the one expected takes the ptrace path,
 * and a pick).  0 when the next is a decision.  SURW only: the current
 * thread up to its next interesting event, and with a view (may be NULL)
 * on through the walks it would win there, drawn now, as long as none of
 * its events touches what the others wait for; each such draw is applied
 * by xp_policy_event when its event comes (a pick, a yield or the next
 * budget drops those not reached).  With who (the thread of each event
 * into who[]) and a view whose locks are known, on also through walks a
 * parked thread wins, from where the thread that gives way is at an
 * acquire, release or access, in a script (docs/agent.md).  With extras,
 * extras[i] says whether a pick just before event i (an event the
 * recording does not have came first) would give its thread that event
 * with no draw (event i is not interesting).
 * The other policies decide at every event. */
size_t xp_policy_budget(struct xp_policy *p, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
			uint32_t *who, bool *extras, size_t max);
/* A guided run's target (a reads-from pair key), 0 for none or another
 * policy. */
uint64_t xp_policy_target(const struct xp_policy *p);
/* One line of the run's random choices (xp_run_describe's for PCT). */
void xp_policy_describe(const struct xp_policy *p, char *buf, size_t len);

/* "pct", "pctvb", "tb", "pos", "surw", "guided"; NULL if unknown. */
const char *xp_algo_name(enum xp_algo a);
/* The inverse; -1 if unknown. */
int xp_algo_parse(const char *s, enum xp_algo *a);

#endif
