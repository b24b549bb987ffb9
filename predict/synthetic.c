/*
 * A synthetic trace for benchmarks (predict.h, predict_synthetic_trace).
 *
 * Workers run "operations", each a short fixed sequence of lock events as
 * one function of a program would make them, chosen at random:
 *
 *   plain     lock L; unlock L                               (60%)
 *   nested    lock L1; lock L2; unlock L2; unlock L1 on one of
 *             eight fixed pairs, L1 < L2                        (24%)
 *   check-act lock L; unlock L; lock L; unlock L             (14%)
 *   inverted  nested with L1 > L2, on two fixed pairs         (2%)
 *
 * and a seeded random scheduler interleaves them in bursts, as a
 * serializing recorder would.  The recorded run must not deadlock: a
 * thread starts a nested operation only when both its locks are free and
 * then reserves the inner one, so nobody ever waits for a lock whose holder
 * waits.  Sites depend on the operation and on the lock modulo 4 (four
 * copies of each function), so sites repeat as in real code.
 */
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "trace/log.h"
#include "tracebuf.h"

enum gop { G_PLAIN, G_NESTED, G_CTA, G_INVERTED };

struct gstep {
	enum avt_kind kind;
	uint32_t lock;
	uint64_t site;
};

struct gthread {
	uint32_t id;
	bool started, exited;
	uint64_t quota;        /* lock events still to make */
	struct gstep op[4];
	uint32_t nop, at;      /* current operation and the next step in it */
	uint32_t reserved;     /* lock reserved by a nested operation, or UINT32_MAX */
};

struct gen {
	struct pr_tracebuf *b;
	uint64_t rng;
	unsigned nlocks;
	uint32_t *owner;       /* per lock: holder + 1, 0 if free */
	uint32_t *resv;        /* per lock: reserver + 1, 0 if none */
	struct gthread *thr;   /* workers: T1 .. Tn-1 at index 0 .. */
	unsigned nw;
	unsigned joined;       /* T0's joins made */
};

static uint64_t next_rand(struct gen *g)
{
	/* splitmix64: small, fast, and the same everywhere */
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t below(struct gen *g, uint32_t n)
{
	return (uint32_t)(next_rand(g) % n);
}

static uint64_t lock_addr(uint32_t l)
{
	return 0x600000 + (uint64_t)l * 64;
}

static uint64_t site(enum gop op, uint32_t lock, uint32_t step)
{
	return 0x1000 + (uint64_t)op * 0x400 + (lock % 4) * 0x100 + step * 8;
}

static void set_op(struct gthread *w, enum gop op, uint32_t a, uint32_t b)
{
	static const enum avt_kind acq = AVT_EV_ACQUIRE, rel = AVT_EV_RELEASE;
	w->at = 0;
	if (op == G_PLAIN) {
		w->nop = 2;
		w->op[0] = (struct gstep){ acq, a, site(op, a, 0) };
		w->op[1] = (struct gstep){ rel, a, site(op, a, 1) };
		return;
	}
	w->nop = 4;
	if (op == G_CTA) {
		w->op[0] = (struct gstep){ acq, a, site(op, a, 0) };
		w->op[1] = (struct gstep){ rel, a, site(op, a, 1) };
		w->op[2] = (struct gstep){ acq, a, site(op, a, 2) };
		w->op[3] = (struct gstep){ rel, a, site(op, a, 3) };
		return;
	}
	w->op[0] = (struct gstep){ acq, a, site(op, a, 0) };
	w->op[1] = (struct gstep){ acq, b, site(op, a, 1) };
	w->op[2] = (struct gstep){ rel, b, site(op, a, 2) };
	w->op[3] = (struct gstep){ rel, a, site(op, a, 3) };
}

/* Chooses the worker's next operation; false if it must wait (a nested
 * operation whose locks are not both free). */
static bool new_op(struct gen *g, struct gthread *w)
{
	uint32_t r = below(g, 100), a = below(g, g->nlocks), b = 0;
	enum gop op = r < 60 ? G_PLAIN : r < 84 ? G_NESTED : r < 98 ? G_CTA : G_INVERTED;
	uint32_t npairs = g->nlocks / 2 < 8 ? g->nlocks / 2 : 8;
	if (op == G_NESTED) {
		/* code nests fixed pairs of locks, in one order */
		a = 2 * below(g, npairs);
		b = a + 1;
	}
	if (op == G_INVERTED) {
		/* two code paths take the first two pairs the other way round */
		a = below(g, 2) * 2 + 1;
		b = a - 1;
	}
	if (op == G_NESTED || op == G_INVERTED) {
		if (g->owner[a] || g->owner[b] || g->resv[a] || g->resv[b])
			return false;
		g->resv[b] = w->id + 1;
		w->reserved = b;
	}
	set_op(w, op, a, b);
	return true;
}

static uint64_t emit(struct gen *g, uint32_t t, enum avt_kind k, uint64_t obj, uint64_t site_off)
{
	return pr_tracebuf_event(g->b, t, k, obj, 0, 0, site_off, 0);
}

/* Runs worker w's next event if it can; 1 done, 0 cannot, -1 error. */
static int worker_step(struct gen *g, struct gthread *w)
{
	if (!w->started) {
		w->started = true;
		return emit(g, w->id, AVT_EV_START, 0, 0) == UINT64_MAX ? -1 : 1;
	}
	if (w->at == w->nop) {
		if (!w->quota) {
			w->exited = true;
			return emit(g, w->id, AVT_EV_EXIT, 0, 0) == UINT64_MAX ? -1 : 1;
		}
		if (!new_op(g, w))
			return 0;
	}
	const struct gstep *s = &w->op[w->at];
	if (s->kind == AVT_EV_ACQUIRE) {
		if (g->owner[s->lock] || (g->resv[s->lock] && g->resv[s->lock] != w->id + 1))
			return 0;
		g->owner[s->lock] = w->id + 1;
	} else {
		g->owner[s->lock] = 0;
		if (w->reserved == s->lock) {
			g->resv[s->lock] = 0;
			w->reserved = UINT32_MAX;
		}
	}
	w->at++;
	if (w->quota)
		w->quota--;
	return emit(g, w->id, s->kind, lock_addr(s->lock), s->site) == UINT64_MAX ? -1 : 1;
}

/* T0 joins the workers in order once each has exited. */
static int main_step(struct gen *g)
{
	if (g->joined == g->nw || !g->thr[g->joined].exited)
		return 0;
	uint64_t r = emit(g, 0, AVT_EV_JOIN, g->thr[g->joined].id, 0x800);
	g->joined++;
	return r == UINT64_MAX ? -1 : 1;
}

static int run(struct gen *g)
{
	unsigned n = g->nw + 1, idle = 0;
	while (g->joined < g->nw) {
		uint32_t t = below(g, n), burst = 1 + below(g, 12), ran = 0;
		for (; ran < burst; ran++) {
			int rc = t ? (g->thr[t - 1].exited ? 0 : worker_step(g, &g->thr[t - 1]))
				   : main_step(g);
			if (rc < 0)
				return -1;
			if (!rc)
				break;
		}
		/* every thread waits: only possible if the generator is wrong */
		idle = ran ? 0 : idle + 1;
		if (idle > 1000u * n) {
			avt_error("synthetic trace generator is stuck");
			return -1;
		}
	}
	return 0;
}

static int setup(struct gen *g, uint64_t nevents, unsigned nthreads, unsigned nlocks)
{
	g->nlocks = nlocks;
	g->nw = nthreads - 1;
	g->owner = calloc(nlocks, sizeof *g->owner);
	g->resv = calloc(nlocks, sizeof *g->resv);
	g->thr = calloc(g->nw, sizeof *g->thr);
	if (!g->owner || !g->resv || !g->thr || pr_tracebuf_module(g->b, 0, "/synthetic") < 0)
		return -1;
	uint64_t overhead = 2 + 4ull * g->nw, each = nevents > overhead ?
		(nevents - overhead) / g->nw : 0;
	if (emit(g, 0, AVT_EV_START, UINT32_MAX, 0) == UINT64_MAX)
		return -1;
	for (unsigned i = 0; i < g->nw; i++) {
		g->thr[i].id = i + 1;
		g->thr[i].quota = each;
		g->thr[i].reserved = UINT32_MAX;
		if (emit(g, 0, AVT_EV_CREATE, i + 1, 0x700) == UINT64_MAX)
			return -1;
	}
	return 0;
}

struct trace *predict_synthetic_trace(uint64_t nevents, unsigned nthreads, unsigned nlocks,
				      uint64_t seed)
{
	struct gen g;
	struct trace *t = NULL;
	if (nthreads < 2 || nlocks < 4) {
		avt_error("synthetic trace: need at least 2 threads and 4 locks");
		return NULL;
	}
	memset(&g, 0, sizeof g);
	g.rng = seed;
	g.b = pr_tracebuf_new();
	if (!g.b || setup(&g, nevents, nthreads, nlocks) < 0) {
		avt_error("synthetic trace: out of memory");
		pr_tracebuf_free(g.b);
		g.b = NULL;
	}
	if (g.b && (run(&g) < 0 || emit(&g, 0, AVT_EV_EXIT, 0, 0) == UINT64_MAX)) {
		avt_error("synthetic trace: cannot build it");
		pr_tracebuf_free(g.b);
		g.b = NULL;
	}
	if (g.b) {
		t = pr_tracebuf_finish(g.b);
		if (!t)
			avt_error("synthetic trace: out of memory");
	}
	free(g.owner);
	free(g.resv);
	free(g.thr);
	return t;
}
