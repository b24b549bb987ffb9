/*
 * Call stacks of events, with the identity of each function *call*
 * (record --stacks; on in avtrace test).  SideTrack and PENELOPE treat
 * every invocation of a function as a transaction, so predict needs to know
 * not only which functions enclose an event but whether two events are in
 * the same call of them.
 *
 * The stack is walked through the frame-pointer chain (rbp), which costs a
 * couple of 16-byte reads per frame; only frames in user code (the
 * executable and libraries other than libc / the dynamic linker) count.
 * A function's call is identified by its frame address (CFA = rbp + 16).
 * Two calls in a row from a loop have the same CFA, so the end of a call
 * is observed directly: the first time a frame is seen its return address
 * is swapped for the trampoline (as for hooked calls), and when the call
 * returns through it, the frame and everything inside it are closed.  The
 * next call at the same address gets a new invocation serial.
 *
 * Limits (docs/predict.md): code without frame pointers (-O2 without
 * -fno-omit-frame-pointer) gives shallow or wrong stacks; longjmp out of a
 * swapped frame is not followed.
 */
#include <string.h>

#include "ptrace_util.h"
#include "tracer_int.h"

static bool user_code(struct tracer *tr, uint64_t addr)
{
	struct elfmod *m = modmap_find(&tr->mods, addr);
	if (!m || addr < m->xlo || addr >= m->xhi)
		return false;
	const char *b = strrchr(m->path, '/');
	b = b ? b + 1 : m->path;
	return strncmp(b, "libc.so", 7) && strncmp(b, "libc-", 5) && strncmp(b, "ld-linux", 8) &&
	       strncmp(b, "libpthread", 10);
}

/* The real return address in a slot we may have swapped. */
static uint64_t real_ret(struct tthread *t, uint64_t slot, uint64_t val)
{
	struct tracer_priv_thread *p = t->priv;
	for (int i = p->nrets; i-- > 0;)
		if (p->rets[i].sp == slot)
			return p->rets[i].ret;
	return val;
}

static bool swapped(struct tthread *t, uint64_t slot)
{
	struct tracer_priv_thread *p = t->priv;
	for (int i = p->nrets; i-- > 0;)
		if (p->rets[i].sp == slot)
			return true;
	return false;
}

/* Swap the frame's return address for the trampoline, to see the call end.
 * Frames are pushed outermost first, so the LIFO of return frames holds. */
static void watch_return(struct tracer *tr, struct tthread *t, uint64_t slot, uint64_t ret)
{
	struct tracer_priv_thread *p = t->priv;
	if (p->nrets == MAX_RETFRAMES || swapped(t, slot))
		return;
	if (p->nrets && p->rets[p->nrets - 1].sp <= slot)
		return; /* would break the LIFO order (a pending call is outer) */
	if (ptu_write(tr->memfd, slot, &tr->tramp, sizeof tr->tramp) < 0)
		return;
	struct retframe *f = &p->rets[p->nrets++];
	memset(f, 0, sizeof *f);
	f->ret = ret;
	f->sp = slot;
	f->hook = HK_FRAME;
}

struct walked {
	uint64_t addr; /* address inside the function */
	uint64_t cfa;  /* identity of this call of it */
	uint64_t slot; /* where its return address is */
	uint64_t ret;  /* that return address (real) */
};

static int walk(struct tracer *tr, struct tthread *t, uint64_t site, uint64_t rbp,
		struct walked *w, int max)
{
	int n = 0;
	uint64_t addr = site;
	while (n < max && user_code(tr, addr) && rbp) {
		uint64_t fr[2];
		if (ptu_read(tr->pid, rbp, fr, sizeof fr) < 0)
			break;
		w[n].addr = addr;
		w[n].cfa = rbp + 16;
		w[n].slot = rbp + 8;
		w[n].ret = real_ret(t, rbp + 8, fr[1]);
		n++;
		if (fr[0] <= rbp) /* the chain must go up the stack */
			break;
		addr = w[n - 1].ret;
		rbp = fr[0];
	}
	return n;
}

/* rbp: the frame pointer of the function holding site (0: the thread's
 * current one). */
int stack_capture(struct tracer *tr, struct tthread *t, uint64_t site, uint64_t rbp,
		  struct avt_frame *out, int max)
{
	struct user_regs_struct r;
	struct walked w[MAX_STACK_DEPTH];
	struct tracer_priv_thread *p = t->priv;
	if (max > MAX_STACK_DEPTH)
		max = MAX_STACK_DEPTH;
	if (!rbp) {
		if (ptu_getregs(t->tid, &r) < 0)
			return 0;
		rbp = r.rbp;
	}
	int n = walk(tr, t, site, rbp, w, max);
	/* match with the live calls, outermost first */
	int k = 0;
	while (k < n && k < p->nlive && p->live[k].cfa == w[n - 1 - k].cfa)
		k++;
	p->nlive = k;
	for (int i = k; i < n && p->nlive < MAX_STACK_DEPTH; i++) {
		const struct walked *x = &w[n - 1 - i];
		p->live[p->nlive].cfa = x->cfa;
		p->live[p->nlive].inv = ++p->next_inv;
		p->nlive++;
		if (user_code(tr, x->ret) || i == 0)
			watch_return(tr, t, x->slot, x->ret);
	}
	for (int i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		tracer_site(tr, w[i].addr, &out[i].mod, &out[i].off);
		out[i].inv = n - 1 - i < p->nlive ? p->live[n - 1 - i].inv : 0;
	}
	return n;
}

void stack_frame_returned(struct tthread *t, uint64_t slot)
{
	struct tracer_priv_thread *p = t->priv;
	for (int i = 0; i < p->nlive; i++)
		if (p->live[i].cfa == slot + 8) {
			p->nlive = i; /* that call and every call inside it are over */
			return;
		}
}

void stack_unswap(struct tracer *tr, struct tthread *t)
{
	struct tracer_priv_thread *p = t->priv;
	for (int k = p->nrets; k-- > 0;)
		ptu_write(tr->memfd, p->rets[k].sp, &p->rets[k].ret, sizeof p->rets[k].ret);
}
