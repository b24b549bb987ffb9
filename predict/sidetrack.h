/*
 * SideTrack (Yi, Sadowski, Flanagan, PADTAD'09, Figure 6) over the lock
 * events of a trace: when a transaction acquires the same lock twice, the
 * code between the two critical sections is a vulnerable window, and an
 * acquisition of that lock by another thread that could have run inside
 * it is an atomicity violation:
 *
 *   before-window  the culprit acquisition came before the window and is
 *                  concurrent with the window's first acquisition;
 *   in-window      it ran inside the window in the recorded run;
 *   after-window   it came after the window, which does not happen before
 *                  it.
 *
 * "Concurrent" is the paper's: the earlier operation does not happen
 * before the later one through any path but the later one's own edge from
 * that lock (pr_hb_pre).  Which pairs of acquisitions form a window is
 * txn.h's business.  Candidates go to cs (deduplicated there).
 */
#ifndef AVT_PREDICT_SIDETRACK_H
#define AVT_PREDICT_SIDETRACK_H

#include "model.h"
#include "rank.h"

/* 0, or -1 after an avt_error() (out of memory). */
struct predict_opts;
/* o may be NULL (every function call is a transaction). */
int pr_sidetrack(const struct pr_model *m, struct pr_cands *cs, const struct predict_opts *o);

#endif
