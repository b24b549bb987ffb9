/*
 * Lock-order deadlocks: the lock-order graph has an edge l1 -> l2 each
 * time a thread acquires l2 while holding l1, remembered with the thread,
 * the acquisition of l1 (hold) and of l2 (request).  A cycle of such
 * witnesses from two to four distinct threads is a potential deadlock if
 * the threads can be at their requests at once:
 *
 *  - no common lock held by two of them at their requests (a gate lock),
 *    nor one held in conflicting modes;
 *  - each held lock blocks the request for it (not two readers);
 *  - neither thread's way to its request needs another thread to have
 *    passed its own request (vector clocks; this prunes cycles whose
 *    parts are ordered by create/join or by other synchronization);
 *  - locksets disjoint and acquisition histories compatible at the
 *    requests (Kahlon et al.'s condition for reaching two points at once);
 *  - the recorded run did not end in that very deadlock.
 *
 * Candidates go to cs (deduplicated there).
 */
#ifndef AVT_PREDICT_DEADLOCK_H
#define AVT_PREDICT_DEADLOCK_H

#include "model.h"
#include "rank.h"

/* 0, or -1 after an avt_error() (out of memory). */
int pr_deadlock(const struct pr_model *m, struct pr_cands *cs);

/* One edge of the lock-order graph. */
struct pr_dl_wit {
	uint32_t l1, l2;   /* holds l1, requests l2 */
	uint32_t thread;
	uint32_t hold;     /* acquisition of l1 */
	uint32_t req;      /* acquisition of l2 */
	uint32_t occ;      /* detector's use: its occurrences, or PR_NONE */
};

/* The cycle feasibility tests above for witnesses w[0..k), where w[i]
 * holds the lock w[i-1] requests (exposed for the unit tests).  Returns
 * true if the cycle is a potential deadlock. */
bool pr_dl_gate_free(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k);
bool pr_dl_concurrent(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k);
bool pr_dl_feasible(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k);
/* w[i].hold if thread i must take its lock without the recorded lock edge
 * into hold (that edge comes from beyond another cycle thread's request),
 * else PR_NONE. */
uint32_t pr_dl_drop(const struct pr_model *m, const struct pr_dl_wit *w, uint32_t k, uint32_t i);

#endif
