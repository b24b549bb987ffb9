/*
 * Vector clocks over thread communication only: create/join, condition
 * signals and a locked write -> the reads that saw it (model.h) exactly,
 * semaphores and barriers through the model's clock of their sources
 * (which counts lock edges too: only conservative).  No lock
 * edges: a predicted run may take a lock in another order than the
 * recorded one, so locks are left to locksets (PENELOPE, and PECAN's
 * hybrid independence model, whose partial order is exactly this one).
 *
 * A thread's clock changes in other threads' components only at the few
 * events with such an edge: those change points are kept (linear in the
 * number of communication events times chains, model.h), and each event
 * keeps the index of its thread's last one (4 bytes an event), so the
 * clock of any event is found in O(1).
 *
 * Ownership: struct pr_sclock borrows the model and owns its arrays
 * (pr_sclock_release()).
 */
#ifndef AVT_PREDICT_SCLOCK_H
#define AVT_PREDICT_SCLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct pr_sclock {
	const struct pr_model *m;
	uint32_t n;               /* the model's chains (nslots): row width */
	uint32_t nthr;
	uint32_t *cur;            /* n x n: each chain's clock now */
	uint32_t **cpidx, **cpsnap; /* per thread: tindex of each change point, its row */
	uint32_t *ncp, *capcp;
	uint32_t *snap;           /* rows of n */
	size_t nsnap, capsnap;
	uint32_t *evrow;          /* per event: the row of its thread's last
				   * change point at or before it, or UINT32_MAX */
	uint32_t nrow;            /* evrow[0 .. nrow) set (all once built) */
};

/* Builds the clocks of m.  0, or -1 if out of memory (no message). */
int pr_sclock_build(struct pr_sclock *s, const struct pr_model *m);
void pr_sclock_release(struct pr_sclock *s);
/* Component u of event e's clock. */
uint32_t pr_sclock_at(const struct pr_sclock *s, uint32_t e, uint32_t u);
/* a happens before b (or is b) through communication (not locks). */
bool pr_sclock_hb(const struct pr_sclock *s, uint32_t a, uint32_t b);

#endif
