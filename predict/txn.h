/*
 * Transactions: which pairs of acquisitions of one lock by one thread the
 * atomicity detector treats as the two ends of a vulnerable window, and
 * which functions to blame.  The rules (docs/predict.md, "Transactions"):
 *
 *  - Thread communication ends a transaction: start, exit, create, join,
 *    cond wait, signal, broadcast, barrier, semaphore operations (PECAN
 *    treats fork/join/wait/notify as region boundaries; a cond wait gives
 *    the lock up on purpose).
 *  - An explicit atomic block (begin ... end events) is one transaction.
 *  - With call stacks, two acquisitions are in one transaction when they
 *    are in the same invocation of some function (equal nonzero inv at the
 *    same depth from the outermost frame); the innermost such invocation
 *    is blamed, with its callers up to the thread's body.  Not a window:
 *    the two acquisitions reached from the same statement of that function
 *    (a loop calling the same code again), and acquisitions in the
 *    thread's body functions (its start routine, and main with the
 *    functions around it) unless both are made directly there.
 *  - Without stacks: a run of the thread's events whose sites are in one
 *    module forms a transaction, and two acquisitions at the same site are
 *    loop iterations, not a window.
 *
 * Ownership: struct pr_txn borrows the model and owns its arrays.
 */
#ifndef AVT_PREDICT_TXN_H
#define AVT_PREDICT_TXN_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "predict.h"

struct pr_txn {
	const struct pr_model *m;
	uint32_t *body;      /* per thread: frames (from the outermost) that are its body */
	/* --atomic: which functions' calls are transactions (NULL: all) */
	bool (*atomic)(void *ctx, uint16_t mod, uint64_t off);
	void *atomic_ctx;
};

struct pr_txn *pr_txn_new(const struct pr_model *m);
void pr_txn_free(struct pr_txn *x);

/* Events that end a transaction. */
bool pr_txn_boundary(const struct avt_event *e);
/* Event e carries a site (it is the caller of a synchronization call). */
bool pr_txn_has_site(const struct avt_event *e);
/* Both events have call stacks with invocation serials. */
bool pr_txn_stacked(const struct pr_txn *x, uint32_t a, uint32_t b);

/* a then b (one thread, both stacked): in one pass through some function,
 * a call both are inside whose code b reached at a later instruction than
 * a (no loop of it went round between them, and it is not the same
 * statement again).  PECAN's regions split where this is false. */
bool pr_txn_one_pass(const struct pr_txn *x, uint32_t a, uint32_t b);

/*
 * a and b are consecutive acquisitions of one lock by one thread with no
 * boundary between them.  True if they make a vulnerable window under the
 * stack rules (when both are stacked) or the site rule (otherwise; the
 * caller has checked the module run).  blame[0..*nblame) receives the
 * functions to blame (stack rules only).
 */
bool pr_txn_window(const struct pr_txn *x, uint32_t a, uint32_t b, struct predict_site *blame,
		   uint32_t *nblame);

#endif
