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
 *   portfolio        policy.c, the default: runs cycle through surw, pos,
 *                    surw, pct (depth 3): no one policy finds every bug
 *                    shape (issue 30, 6b), and each member's runs are
 *                    those it would make alone with the same seed.
 *
 * Each implements struct xp_policy_ops (xp.h); policy.c's table picks
 * one per algorithm, and runs 1 .. xp_guide_npredicted() first follow a
 * prediction's starting point (prefix.h).  What a policy knows of a
 * thread's next event comes from the recording (rec.h).  This header is
 * what cli/ and explore.c use: it brings in rec.h, rf.h, start.h and
 * ahead.h (the view of the next pick) for them.
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

#include "explore/ahead.h"
#include "explore/pct.h"
#include "explore/rec.h"
#include "explore/rf.h"
#include "explore/start.h"
#include "trace/event.h"

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
/* Thread lid, about to be yielded, spins on what another thread must
 * write (xp_policy_ops.spun). */
void xp_policy_spun(struct xp_policy *p, uint32_t lid);
/* Thread lid stands at a process exit: 1 when the policy weighs the exit
 * as one more contender (SURW), 0 when it has no rule of its own (the
 * caller then makes the thread give way, as a spinner). */
int xp_policy_exiting(struct xp_policy *p, uint32_t lid);
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
size_t xp_policy_budget(struct xp_policy *p, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev,
			uint32_t *who, bool *extras, size_t max);
/* A guided run's target (a reads-from pair key), 0 for none or another
 * policy. */
uint64_t xp_policy_target(const struct xp_policy *p);
/* One line of the run's random choices (xp_run_describe's for PCT). */
void xp_policy_describe(const struct xp_policy *p, char *buf, size_t len);

/* The portfolio's cycle of members: runs 1, 2, 3, 4 are surw, pos, surw,
 * pct, and so on (policy.c). */
#define XP_PORTFOLIO_N 4u
/* Which member runs run run_index (from 1) of a portfolio: its config
 * (cfg's, with the member's algorithm and bounds) into *member and the
 * index of this run among the member's own runs (from 1) into
 * *member_run.  For another algorithm, cfg itself and run_index. */
void xp_portfolio_member(const struct xp_config *cfg, uint64_t run_index, struct xp_config *member,
			 uint64_t *member_run);

/* "pct", "pctvb", "tb", "pos", "surw", "guided", "portfolio"; NULL if
 * unknown. */
const char *xp_algo_name(enum xp_algo a);
/* The inverse; -1 if unknown. */
int xp_algo_parse(const char *s, enum xp_algo *a);

#endif
