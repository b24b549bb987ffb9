/*
 * Transaction rules (txn.h).
 *
 * Why the body rule: SideTrack assumes every method is atomic, which for a
 * C program includes each thread's start routine and main: a worker that
 * takes a job under the queue lock and later takes the next one would be
 * "non-atomic" in every correct program.  Those functions are the thread's
 * whole life, not an operation, so windows inside them count only when the
 * function itself locks twice (a check-then-act written inline).
 */
#include <stdlib.h>

#include "trace/log.h"
#include "txn.h"

/* Frame k counted from the outermost. */
static const struct avt_frame *outer(const struct avt_stack *s, uint32_t k)
{
	return &s->frames[s->depth - 1 - k];
}

static const struct avt_stack *stack_of(const struct pr_model *m, uint32_t e)
{
	if (!m->t->nstacks)
		return NULL;
	const struct avt_stack *s = trace_stack(m->t, m->t->ev[e].seq);
	return s && s->depth && outer(s, 0)->inv ? s : NULL;
}

bool pr_txn_boundary(const struct avt_event *e)
{
	switch (e->kind) {
	case AVT_EV_START:
	case AVT_EV_EXIT:
	case AVT_EV_CREATE:
	case AVT_EV_JOIN:
	case AVT_EV_WAIT:
	case AVT_EV_SIGNAL:
	case AVT_EV_BROADCAST:
	case AVT_EV_BARRIER:
	case AVT_EV_SEM_WAIT:
	case AVT_EV_SEM_POST:
		return true;
	default:
		return false;
	}
}

bool pr_txn_has_site(const struct avt_event *e)
{
	return e->kind != AVT_EV_START && e->kind != AVT_EV_EXIT && e->kind != AVT_EV_NONE &&
	       e->site_mod != AVT_MOD_NONE;
}

/* The thread's body is its start function (main for T0: the tracer's
 * stacks stop at the first frame outside user code), whose one call spans
 * the whole thread and so is a transaction only for the locks it takes
 * directly.  The functions it calls, even once, are transactions of their
 * own (a copier thread's single call of vec_copy must still be one). */
#define BODY_DEPTH 1

struct pr_txn *pr_txn_new(const struct pr_model *m)
{
	struct pr_txn *x = calloc(1, sizeof *x);
	if (!x)
		goto oom;
	x->m = m;
	x->body = malloc((m->nthreads ? m->nthreads : 1) * sizeof *x->body);
	if (!x->body)
		goto oom;
	for (uint32_t u = 0; u < m->nthreads; u++)
		x->body[u] = BODY_DEPTH;
	return x;
oom:
	pr_txn_free(x);
	avt_error("cannot predict: out of memory");
	return NULL;
}

void pr_txn_free(struct pr_txn *x)
{
	if (!x)
		return;
	free(x->body);
	free(x);
}

bool pr_txn_stacked(const struct pr_txn *x, uint32_t a, uint32_t b)
{
	return stack_of(x->m, a) && stack_of(x->m, b);
}

static bool same_frame(const struct avt_frame *a, const struct avt_frame *b)
{
	return a->mod == b->mod && a->off == b->off;
}

static bool stack_window(const struct pr_txn *x, uint32_t a, uint32_t b,
			 struct predict_site *blame, uint32_t *nblame)
{
	const struct avt_stack *sa = stack_of(x->m, a), *sb = stack_of(x->m, b);
	uint32_t n = sa->depth < sb->depth ? sa->depth : sb->depth, kc = 0, body;
	while (kc < n && outer(sa, kc)->inv && outer(sa, kc)->inv == outer(sb, kc)->inv)
		kc++;
	if (!kc)
		return false; /* not inside one call of anything */
	kc--;
	if (x->atomic) {
		/* --atomic: the innermost common call of a declared function */
		uint32_t innermost = kc;
		while (!x->atomic(x->atomic_ctx, outer(sa, kc)->mod, outer(sa, kc)->off))
			if (kc-- == 0)
				return false;
		/* the loop rule holds only at the innermost common call: further
		 * out, one statement holds a call both events are inside */
		if (kc == innermost && same_frame(outer(sa, kc), outer(sb, kc)))
			return false;
		blame[0].mod = outer(sa, kc)->mod;
		blame[0].off = outer(sa, kc)->off;
		*nblame = 1;
		return true;
	}
	/* the same statement of the common function again: a loop */
	if (same_frame(outer(sa, kc), outer(sb, kc)))
		return false;
	body = x->body[pr_ev(x->m, a)->thread];
	if (kc < body && !(sa->depth == kc + 1 && sb->depth == kc + 1))
		return false;
	for (uint32_t k = kc + 1; k-- > 0 && *nblame < 4;) {
		blame[*nblame].mod = outer(sa, k)->mod;
		blame[*nblame].off = outer(sa, k)->off;
		++*nblame;
		if (k <= body)
			break;
	}
	return true;
}

bool pr_txn_one_pass(const struct pr_txn *x, uint32_t a, uint32_t b)
{
	const struct avt_stack *sa = stack_of(x->m, a), *sb = stack_of(x->m, b);
	uint32_t n = sa->depth < sb->depth ? sa->depth : sb->depth, kc = 0;
	while (kc < n && outer(sa, kc)->inv && outer(sa, kc)->inv == outer(sb, kc)->inv)
		kc++;
	if (!kc)
		return false; /* not inside one call of anything */
	const struct avt_frame *fa = outer(sa, kc - 1), *fb = outer(sb, kc - 1);
	return fa->mod == fb->mod && fb->off > fa->off;
}

bool pr_txn_window(const struct pr_txn *x, uint32_t a, uint32_t b, struct predict_site *blame,
		   uint32_t *nblame)
{
	const struct avt_event *ea = pr_ev(x->m, a), *eb = pr_ev(x->m, b);
	*nblame = 0;
	if (pr_txn_stacked(x, a, b))
		return stack_window(x, a, b, blame, nblame);
	return ea->site_mod != eb->site_mod || ea->site_off != eb->site_off;
}
