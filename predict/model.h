/*
 * The prediction model of one trace: per-thread event lists, the
 * happens-before relation as vector clocks, the lockset after every event
 * and, on demand, acquisition histories.  Everything the detectors and the
 * schedule synthesis know about a trace comes from here; it is built in one
 * linear pass (pr_model_new) and read-only afterwards.
 *
 * Events are named by their index in trace->ev (a uint32_t; traces of 2^31
 * events or more are refused).  A thread's events are tev[thread][0..tnev),
 * and tev[thread][i] has tindex i (checked when building).
 *
 * Vector clocks count events: VC(e)[u] is the number of u's events that
 * happen before e or are e, so VC(e)[thread(e)] = tindex(e) + 1, and
 * a happens before b iff VC(b)[thread(a)] > tindex(a).  Edges: program
 * order; create -> the child's start; the child's exit -> join; release
 * (and a cond wait, which releases its mutex) -> the next acquire of that
 * lock (rwlocks: the join of all releases so far); the last signal or
 * broadcast after a thread's wait -> its waking acquire; every sem_post so
 * far -> a sem_wait; all threads of one barrier episode -> each of their
 * barrier events; the holder's acquire -> a trylock_fail, and the
 * trylock_fail -> the holder's next release; a locked write (AVT_F_ATOMIC)
 * -> another thread's plain read of its bytes before any other write, if
 * its value may steer that thread (the read saw it: a release/acquire
 * pair, as std::atomic's flags; pr_model_new_steers()).  Clocks are stored
 * as shared snapshots: a thread's clock is copied only when another thread's
 * component changes, and a thread's own component is implied by tindex.
 *
 * Stored clocks count chains, not threads: a thread created by the thread
 * that joined an earlier one (whose exit the model saw) continues that
 * thread's chain (slot), since every event of the chain happens before its
 * start.  A chain is ordered by happens-before, so VC(e)[u] is the count
 * of e's chain component past u's first event in the chain, clamped to
 * u's events.  Thousands of short threads started and joined in batches
 * take as many slots as ever run at once: clocks and snapshots are sized
 * by slots, not threads (GLib's threadtests: 5,006 threads).
 *
 * Locksets are nodes of persistent lists (one node per acquisition, shared
 * by every event that holds it), so storing the lockset after every event
 * costs one index.  Acquisition histories are computed on demand from the
 * start of the stretch of events during which the thread held any lock.
 *
 * Ownership: struct pr_model borrows the trace (which must outlive it) and
 * owns every array in it; pr_model_free() frees them all.  struct pr_ah
 * owns its arrays (pr_ah_release()).
 */
#ifndef AVT_PREDICT_MODEL_H
#define AVT_PREDICT_MODEL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Cooperative stop (predict_interrupt(), predict.h): the signal that asked
 * prediction to stop, 0 if none.  The model's build, every detector's
 * outer loop and synthesis check it (every PR_STOP_EVERY + 1 steps of a
 * per-event loop) and end early; predict_run() then returns
 * PREDICT_STOPPED.  A detector that stops leaves partial candidates, which
 * predict_run() never synthesizes. */
extern volatile sig_atomic_t pr_stop_sig;
#define PR_STOP_EVERY 4095u

static inline bool pr_stopped(void)
{
	return pr_stop_sig != 0;
}

#define PR_NONE UINT32_MAX
/* Traces with more threads are refused: the current clocks alone are
 * threads^2 words, 1 GiB at this bound (the trace reader allows up to
 * AVT_TRACE_MAX_THREADS, for dump and replay). */
#define PR_MAX_THREADS 16384u
/* A clock reference (struct pr_model in_lock / in_sync) with this bit set
 * names a snapshot; without it, the event whose clock it is. */
#define PR_REF_SNAP 0x80000000u

enum pr_mode {
	PR_EXCL = 0,   /* acquire, wr_acquire */
	PR_READ = 1,   /* rd_acquire */
};

struct pr_lsnode {
	uint32_t lock;   /* object id */
	uint32_t acq;    /* the acquiring event */
	uint32_t parent; /* node of the locks held before it; 0 = none */
	uint32_t mode;   /* enum pr_mode */
};

struct pr_model {
	const struct trace *t;   /* borrowed */
	uint32_t nthreads;       /* max logical id + 1 */
	uint32_t nev;
	uint32_t **tev;          /* [thread][tindex] -> event */
	uint32_t *tnev;          /* events of each thread */

	uint32_t nobjs;          /* locks, conds, sems, barriers: ids 0..nobjs */
	uint64_t *objaddr;       /* id -> address */
	uint8_t *objrw;          /* id -> 1 if ever rd_/wr_acquired (an rwlock) */
	size_t objcap;
	uint32_t *htab;          /* address -> id + 1, open addressing (0 = free) */
	size_t hcap;

	/* per event */
	uint32_t *lock;          /* lock id of acquire/release/trylock_fail/wait, else PR_NONE */
	uint32_t *vc;            /* snapshot of VC(e) (own component implied) */
	uint32_t *in_lock;       /* clock the acquire joined from its lock, or PR_NONE */
	uint32_t *in_sync;       /* clock joined from other edges, or PR_NONE */
	uint32_t *ls;            /* lockset node after the event; 0 = empty */

	uint32_t nslots;         /* chains: the width of stored clocks */
	uint32_t *slot;          /* [thread] its chain */
	uint32_t *sbase;         /* [thread] index of its first event in the chain */
	uint32_t *snap;          /* nsnap x nslots clocks (chain counts) */
	size_t nsnap, snapcap;
	struct pr_lsnode *lsn;   /* [0] is the empty set */
	size_t nlsn, lsncap;
	uint64_t *var;           /* per event: the variable an access touches (pr_var); NULL: obj */
};

/* May the value the read at site mod+off of address addr loads steer its
 * thread (watched: a watchpoint saw it, and the site is the instruction
 * after it)?  false, with stores[0 .. *nstores) (at most max), when it
 * only reaches those globals, registers and the stack
 * (predict_opts.read_steers; avfilter.h asks it too).  ctx is the
 * caller's. */
typedef bool (*pr_steers_fn)(void *ctx, uint16_t mod, uint64_t off, uint64_t addr,
			     bool watched, uint64_t *stores, unsigned max, unsigned *nstores);

/* Builds the model of t.  NULL after an avt_error() (inconsistent thread
 * indices, a trace too long, out of memory). */
struct pr_model *pr_model_new(const struct trace *t);
/* The same, with a locked write -> read edge only for the reads whose
 * value may steer their thread, as steers (NULL: every read) answers: a
 * read whose value is only stored (a lock-free push's load of the top it
 * links below its node) reads another value in another order and its
 * thread goes on the same way, so what it saw is no order to keep. */
struct pr_model *pr_model_new_steers(const struct trace *t, pr_steers_fn steers, void *ctx);
void pr_model_free(struct pr_model *m);

static inline const struct avt_event *pr_ev(const struct pr_model *m, uint32_t e)
{
	return &m->t->ev[e];
}

/* The variable access event x touches: its address, told apart by the heap
 * allocation that last gave out that memory before x.  Two threads'
 * private std::vector buffers at one address (a block freed by one and
 * handed to the other by malloc: the allocator orders them, unseen) are two
 * variables, not a race; an access after the free still meets the
 * accesses made before it (use after free). */
static inline uint64_t pr_var(const struct pr_model *m, uint32_t x)
{
	return m->var ? m->var[x] : m->t->ev[x].obj;
}

/* Event of thread u at tindex i, or PR_NONE if out of range. */
uint32_t pr_tev(const struct pr_model *m, uint32_t u, uint32_t i);
/* The object id of address a, or PR_NONE if it never appears. */
uint32_t pr_obj_id(const struct pr_model *m, uint64_t a);
/* Acquire kinds that take the lock (not AVT_F_RECURSIVE inner levels). */
static inline bool pr_is_acquire(const struct avt_event *e)
{
	return avt_kind_is_acquire(e->kind) && !(e->flags & AVT_F_RECURSIVE);
}

/* Release of a lock (release not recursive, or a cond wait). */
static inline bool pr_is_release(const struct avt_event *e)
{
	return (e->kind == AVT_EV_RELEASE && !(e->flags & AVT_F_RECURSIVE)) ||
	       e->kind == AVT_EV_WAIT;
}
/* PR_EXCL or PR_READ for an acquire. */
enum pr_mode pr_acq_mode(const struct avt_event *e);

/* ---- vector clocks ---- */

/* VC(e)[u]. */
uint32_t pr_vc_at(const struct pr_model *m, uint32_t e, uint32_t u);
/* VC(e) into out[nthreads]. */
void pr_vc_get(const struct pr_model *m, uint32_t e, uint32_t *out);
/* Component u of the clock before e: VC of the previous event of e's
 * thread (the clock an acquire has before it joins its lock's), 0 if e is
 * the thread's first event. */
uint32_t pr_vc_pre_at(const struct pr_model *m, uint32_t e, uint32_t u);
/* Component u of a clock reference (in_lock / in_sync value). */
uint32_t pr_ref_at(const struct pr_model *m, uint32_t ref, uint32_t u);
/* The chain count of slot s in a clock reference (raw, not per thread):
 * for clocks of other relations built on the same chains (sclock.h). */
uint32_t pr_ref_slot(const struct pr_model *m, uint32_t ref, uint32_t s);
/* Thread u's events among the first v events of its chain. */
static inline uint32_t pr_slot_count(const struct pr_model *m, uint32_t u, uint32_t v)
{
	uint32_t b = m->sbase[u];
	v = v > b ? v - b : 0;
	return v < m->tnev[u] ? v : m->tnev[u];
}
/* The first tindex k in [from, to) of thread u whose event's VC[j] exceeds
 * lim, or to if none.  VC grows along a thread's part and bounds every
 * clock its events joined (in_lock, in_sync), so no event before k joined
 * anything of j past lim.  O(log(to - from)). */
uint32_t pr_vc_passes(const struct pr_model *m, uint32_t u, uint32_t from, uint32_t to,
		      uint32_t j, uint32_t lim);
/* a happens before b, or a == b. */
bool pr_hb(const struct pr_model *m, uint32_t a, uint32_t b);
/* a happens before b through some path other than b's own lock edge:
 * a is in the past of the clock b had before joining its lock (SideTrack's
 * test for "not concurrent"). */
bool pr_hb_pre(const struct pr_model *m, uint32_t a, uint32_t b);
/* The whole clock of a reference (PR_NONE: zeros) into out[nthreads]. */
void pr_ref_get(const struct pr_model *m, uint32_t ref, uint32_t *out);
/* out[u] = max(out[u], ref[u]) for a clock reference. */
void pr_ref_join(const struct pr_model *m, uint32_t ref, uint32_t *out);
/* The clock of thread u after its first pos events if event drop (one of
 * them, or PR_NONE) had not joined its lock's clock: what u needs to get
 * there when that lock is taken earlier than recorded.  out[nthreads]. */
void pr_cut_clock(const struct pr_model *m, uint32_t u, uint32_t pos, uint32_t drop,
		  uint32_t *out);

/* ---- locksets ---- */

/* Lockset node before e (after the thread's previous event). */
uint32_t pr_ls_before(const struct pr_model *m, uint32_t e);
/* Number of locks in the set of node n. */
uint32_t pr_ls_size(const struct pr_model *m, uint32_t n);
/* The node of lock l in set n, or 0. */
uint32_t pr_ls_find(const struct pr_model *m, uint32_t n, uint32_t lock);
/* Two lock sets (nodes) share a lock held in conflicting modes (not both
 * read). */
bool pr_ls_conflict(const struct pr_model *m, uint32_t a, uint32_t b);
/* The first event of the stretch during which thread u held a lock without
 * interruption and that ends with its first pos events (its tindex), or
 * pos itself when the thread held nothing after pos events.  Everything
 * before the returned tindex may run without holding a lock at the end. */
uint32_t pr_stretch_start(const struct pr_model *m, uint32_t u, uint32_t pos);
/* The end of the locked stretch that contains event e: the tindex of the
 * first event of its thread at or after e after which the thread holds
 * nothing (e itself if it holds nothing after it), or PR_NONE if the
 * thread never lets go. */
uint32_t pr_stretch_end(const struct pr_model *m, uint32_t e);

/* ---- acquisition histories ---- */

/* The locks a thread holds at a point and, for each, the locks it
 * acquired since it took it (PENELOPE Section 3.2, after Kahlon et al). */
struct pr_ah {
	uint32_t n;        /* held locks, outermost first */
	uint32_t *lock;
	uint32_t *mode;
	uint32_t *acq;     /* acquiring events */
	uint32_t *off;     /* history of held lock i: hist[off[i] .. off[i + 1]) */
	uint32_t *hist;
};

/* The state of thread u after its first pos events (0 <= pos <= tnev).
 * Returns 0 or -1 (out of memory, after avt_error()). */
int pr_ah_at(const struct pr_model *m, uint32_t u, uint32_t pos, struct pr_ah *out);
void pr_ah_release(struct pr_ah *ah);
bool pr_ah_holds(const struct pr_ah *ah, uint32_t lock);
/* No lock is held by both in conflicting modes. */
bool pr_ah_disjoint(const struct pr_ah *a, const struct pr_ah *b);
/* Compatible: there are no locks l, l' with l' in AH_a(l) and l in AH_b(l'). */
bool pr_ah_compatible(const struct pr_ah *a, const struct pr_ah *b);

#endif
