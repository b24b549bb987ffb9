/*
 * The recording per thread, and a run's view of it.
 *
 * A policy does not know a thread's next event before the thread runs to
 * it; the recording does.  struct xp_rec keeps the recording's events per
 * thread, so that a thread that has made i events in this run is taken to
 * be about to make its recorded event i (struct xp_look, one per run).
 * When a run diverges that guess goes wrong for a while; it costs the
 * policy precision, never correctness (any runnable thread may still be
 * picked).
 *
 * Ownership: xp_rec_new() copies what it needs; xp_look borrows its
 * recording (the caller keeps it alive).
 */
#ifndef AVT_EXPLORE_REC_H
#define AVT_EXPLORE_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/xp.h"
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

/* An event reads obj if it can observe what an earlier event left there
 * (a read, any lock acquire, a semaphore wait, the kinds to come that are
 * not pure writes); it writes obj if it changes it (a write, an acquire, a
 * release, a post, a signal; not a read, read lock or failed trylock). */
bool xp_kind_reads(unsigned kind);
bool xp_kind_writes(unsigned kind);

/* ---- a run's view: where each thread stands in its recording */

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

#endif
