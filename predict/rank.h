/*
 * Candidates and their order.  A detector reports each violation it finds
 * as a struct pr_cand; pr_cands_add() keeps only the first of every
 * (detector, pattern, sites) so that a loop repeating one violation gives
 * one candidate, not one per iteration (penelope: also the variable and
 * the variant, see pr_cand).  Candidates are synthesized in
 * pr_cands_prerank() order (cheap: fewer threads, earlier in the trace,
 * the detectors taking turns),
 * and the resulting predictions are put in final order by
 * pr_predictions_rank(): fewer variables, then fewer threads, then fewer
 * context switches, then earlier in the trace (variable and thread
 * bounding: most bugs need few of each).
 *
 * Ownership: struct pr_cands owns its arrays (pr_cands_release()).
 */
#ifndef AVT_PREDICT_RANK_H
#define AVT_PREDICT_RANK_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "pattern.h"
#include "predict.h"

enum pr_detector { PR_DET_SIDETRACK, PR_DET_DEADLOCK, PR_DET_PENELOPE, PR_DET_PECAN, PR_DET_ORDER, PR_DET_COUNT };
enum pr_pattern {
	PR_PAT_BEFORE, PR_PAT_IN, PR_PAT_AFTER, PR_PAT_CYCLE,
	/* penelope: e1 e2 of T1, e' of T2 (R read, W write) */
	PR_PAT_RWR, PR_PAT_RWW, PR_PAT_WWR, PR_PAT_WRW, PR_PAT_WWW,
	PR_PAT_PECAN, /* pecan: the pattern is pr_cand.pp */
	PR_PAT_ORDER, /* order: ev[1] (a read) takes its value from ev[0] (a write) */
};

struct pr_cand {
	enum pr_detector det;
	enum pr_pattern pat;
	uint32_t nthr;
	uint32_t thr[4];
	/* events (indices into trace->ev).  sidetrack: e1, e2, e3.  deadlock
	 * with k threads: hold_0 .. hold_k-1, then req_0 .. req_k-1, where
	 * thread i holds lock[i] (acquired at hold_i) and requests lock[i+1
	 * mod k] at req_i.  penelope: e1, e' (the other thread's access), e2;
	 * the variable is ev[0]'s obj. */
	uint32_t nev;
	uint32_t ev[8];
	uint32_t nlock;
	uint32_t lock[4];          /* lock ids */
	uint32_t nblame;
	struct predict_site blame[4];
	/* penelope: the cut-point of T1, e1 <= cut < e2, where T1 may stand
	 * while T2 runs up to e' (locksets and acquisition histories allow
	 * it); and whether e' was recorded before the window (0) or after it
	 * (1).  The variant is part of the dedupe key, not of the bug: the
	 * two can need different schedules, and synthesis keeps the first of
	 * them that works (pr_cands_same_bug). */
	uint32_t cut;
	uint32_t variant;
	uint32_t order;            /* earliest event involved: the pre-rank key */
	/* pecan: the pattern matched (borrowed: built-in, or from
	 * predict_opts.patterns); ev[0 .. nev) are its events in pattern
	 * order and thr[i] is thread role i; the variables are the events'
	 * objs */
	const struct pr_pat *pp;
	/* pecan: a race of a pair of sites (pecan.c, site pairs), not of
	 * neighbours in the variable's order: synthesized after every other
	 * candidate and ranked after every other prediction, so it never
	 * takes another's place */
	bool pair;
	uint32_t round;            /* pr_cands_prerank()'s use */
};

struct pr_cands {
	struct pr_cand *c;
	size_t n, cap;
	uint32_t *tab;             /* dedupe: open addressing of index + 1 */
	uint64_t *tabh;            /* the key hash of each tab entry: most probes
	                            * end on it, without reading the candidate
	                            * and its events, and a rehash reads no event */
	size_t tabcap;
	uint64_t ncmp;             /* full key comparisons pr_cands_add() made
	                            * (its work beyond hashing: tests bound it) */
	const struct pr_model *m;  /* borrowed: sites of events */
};

void pr_cands_init(struct pr_cands *cs, const struct pr_model *m);
void pr_cands_release(struct pr_cands *cs);
/* 1 if added, 0 if an equal (detector, pattern, sites) is already there,
 * -1 if out of memory (after avt_error()).  A deadlock cycle is rotated
 * first so that the same cycle found from another lock compares equal. */
int pr_cands_add(struct pr_cands *cs, const struct pr_cand *c);
/* Would c be a duplicate (same key as one added)? */
int pr_cands_has(const struct pr_cands *cs, const struct pr_cand *c);
void pr_cands_prerank(struct pr_cands *cs);
/* Same detector, pattern, sites (and penelope's and pecan's variables),
 * variant aside;
 * and a hash of that. */
int pr_cands_same_bug(const struct pr_model *m, const struct pr_cand *a, const struct pr_cand *b);
uint64_t pr_cands_bug_hash(const struct pr_model *m, const struct pr_cand *c);

const char *pr_detector_name(enum pr_detector d);
const char *pr_pattern_name(enum pr_pattern p);

/* Sorts p[0..n) into rank order and numbers them 1..n. */
void pr_predictions_rank(struct prediction *p, size_t n);

#endif
