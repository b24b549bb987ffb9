/*
 * Inside the policies of explore/policy.h: the per-run view of threads
 * they share (events made so far, the recorded next event, spinning), and
 * each policy's constructor.  Included by policy.c, pos.c, surw.c,
 * guided.c and their unit tests.
 */
#ifndef AVT_EXPLORE_POLICY_INT_H
#define AVT_EXPLORE_POLICY_INT_H

#include "explore/policy.h"

/* A thread in one run. */
struct xp_lthread {
	uint32_t done;  /* where it stands in its recording: the recorded
	                   events its events so far are taken to be */
	uint32_t made;  /* its events so far in this run (done, and those the
	                   recording does not have) */
	uint32_t spins; /* event-less slices in a row */
	bool parked;    /* spun yield_limit slices: run only when nothing else can */
	uint64_t parked_at; /* when (xp_look.parks at the time) */
};

struct xp_look {
	const struct xp_rec *rec; /* may be NULL */
	struct xp_lthread *t;     /* by logical id */
	size_t n, cap;
	unsigned yield_limit;
	uint64_t parks;           /* parkings so far */
};

void xp_look_init(struct xp_look *l, const struct xp_rec *rec, unsigned yield_limit);
void xp_look_release(struct xp_look *l);
/* Makes ids 0 .. lid known; -1 after avt_error(). */
int xp_look_reg(struct xp_look *l, uint32_t lid);
/* The event's thread made one more event (and is not spinning). */
int xp_look_event(struct xp_look *l, const struct avt_event *ev);
/* The recorded event lid is taken to be about to make, or NULL (no
 * recording, or the thread ran past its recorded events).  A start is
 * skipped: the tracer makes it with the thread's first request. */
const struct xp_rev *xp_look_next(const struct xp_look *l, uint32_t lid);
/* Counts a spun slice; true when the thread has just been parked. */
bool xp_look_yield(struct xp_look *l, uint32_t lid);
/* The candidates of a pick: the indexes of lids[0..n) not parked, or, if
 * every one is parked, the one parked longest ago (each spinner gets its
 * turn, as PCT's drops), into idx; returns how many. */
size_t xp_look_candidates(const struct xp_look *l, const uint32_t *lids, size_t n, size_t *idx);

/* ---- each policy: the same verbs as xp_policy_* */

struct xp_pos;
struct xp_pos *xp_pos_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_pos_free(struct xp_pos *p);
int xp_pos_event(struct xp_pos *p, const struct avt_event *ev);
size_t xp_pos_pick(struct xp_pos *p, const uint32_t *lids, size_t n);
void xp_pos_yield(struct xp_pos *p, uint32_t lid);
void xp_pos_describe(const struct xp_pos *p, char *buf, size_t len);
/* The current priority of lid's pending event (for tests); 0 if unknown. */
uint64_t xp_pos_priority(const struct xp_pos *p, uint32_t lid);
/* Times lid's priority was drawn again because another thread's event
 * raced with its pending one (for tests). */
unsigned xp_pos_reassigned(const struct xp_pos *p, uint32_t lid);

struct xp_surw;
struct xp_surw *xp_surw_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_surw_free(struct xp_surw *s);
int xp_surw_event(struct xp_surw *s, const struct avt_event *ev);
size_t xp_surw_pick(struct xp_surw *s, const uint32_t *lids, size_t n);
void xp_surw_yield(struct xp_surw *s, uint32_t lid);
void xp_surw_describe(const struct xp_surw *s, char *buf, size_t len);
/* Whether events on obj are interesting in this run (for tests). */
bool xp_surw_interesting(const struct xp_surw *s, uint64_t obj);
/* lid's weight now: its remaining interesting events (for tests). */
uint64_t xp_surw_weight(const struct xp_surw *s, uint32_t lid);
/* xp_policy_budget for SURW. */
size_t xp_surw_budget(struct xp_surw *s, uint32_t lid, const struct xp_view *v, struct xp_rev *ev,
		      uint32_t *who, bool *extras, size_t max);

struct xp_guided;
struct xp_guided *xp_guided_new(const struct xp_config *c, uint64_t seed, uint64_t run_index);
void xp_guided_free(struct xp_guided *g);
int xp_guided_event(struct xp_guided *g, const struct avt_event *ev);
size_t xp_guided_pick(struct xp_guided *g, const uint32_t *lids, size_t n);
void xp_guided_yield(struct xp_guided *g, uint32_t lid);
void xp_guided_describe(const struct xp_guided *g, char *buf, size_t len);
uint64_t xp_guided_target(const struct xp_guided *g);

/* The threads of the i-th starting point from predictions. */
const uint32_t *xp_guide_predicted(const struct xp_guide *g, size_t i, size_t *n);
/* Its pattern threads (NULL, 0: not known; the prefix is then followed
 * as it is). */
const uint32_t *xp_guide_pattern(const struct xp_guide *g, size_t i, size_t *n);

/* Appends printf output to buf[0..len) at *used; on overflow the line
 * ends in "..." and later calls add nothing. */
void xp_put(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
