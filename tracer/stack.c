/*
 * Call stacks of events, with the identity of each function *call*
 * (record --stacks; on in avtrace test).  SideTrack and PENELOPE treat
 * every invocation of a function as a transaction, so predict needs to know
 * not only which functions enclose an event but whether two events are in
 * the same call of them.
 *
 * The stack is walked with the modules' call frame information (cfi.c):
 * only frames in user code (the executable and libraries other than libc /
 * the dynamic linker) count.  A function's call is identified by its CFA.
 * Two calls in a row from a loop have the same CFA, so the end of a call is
 * observed directly: the first time a frame is seen its return address is
 * swapped for the trampoline (as for hooked calls), and when the call
 * returns through it, the frame and everything inside it are closed.  The
 * next call at the same address gets a new invocation serial.
 *
 * A debugger must never change what the program computes: a word is
 * swapped only where the CFI located a return address (CFA - 8).  A frame
 * without usable CFI ends the walk: fewer frames, never a guess (the
 * frame-pointer walk this replaced wrote into live data at rbp+8 of -O2
 * code).  Unwinders inside the target (C++ exceptions, pthread_exit's
 * forced unwind, backtrace()) read return addresses too: their entry points
 * are hooked and put every swapped address back first (stack_unwinding).
 *
 * Limits (docs/predict.md): longjmp out of a swapped frame is not followed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cfi.h"
#include "ptrace_util.h"
#include "tracer_int.h"

static bool user_code(struct tracer *tr, uint64_t addr)
{
	struct elfmod *m = modmap_find(&tr->proc->as.mods, addr);
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
	if (ptu_write(tr->proc->memfd, slot, &tr->proc->as.tramp, sizeof tr->proc->as.tramp) < 0)
		return;
	struct retframe *f = &p->rets[p->nrets++];
	memset(f, 0, sizeof *f);
	f->ret = ret;
	f->sp = slot;
	f->hook = HK_FRAME;
}

/* Reading the stack: one snapshot from the stack pointer, then single
 * reads for what lies beyond it. */
#define SNAP_BYTES 2048

struct walk_ctx {
	struct tracer *tr;
	struct tthread *t;
	uint64_t base;
	size_t len;
	uint8_t buf[SNAP_BYTES];
};

static int walk_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct walk_ctx *w = ctx;
	if (addr >= w->base && addr - w->base + len <= w->len) {
		memcpy(buf, w->buf + (addr - w->base), len);
		return 0;
	}
	return ptu_read(w->tr->proc->pid, addr, buf, len);
}

static void *walk_find(void *ctx, uint64_t pc, uint64_t *bias)
{
	struct walk_ctx *w = ctx;
	struct elfmod *m = modmap_find(&w->tr->proc->as.mods, pc);
	if (!m || pc < m->xlo || pc >= m->xhi)
		return NULL;
	if (!w->tr->proc->as.cfi && !(w->tr->proc->as.cfi = cfi_cache_new()))
		return NULL;
	*bias = m->bias;
	return cfi_cache_get(w->tr->proc->as.cfi, m->path);
}

static uint64_t walk_real_ra(void *ctx, uint64_t slot, uint64_t value)
{
	struct walk_ctx *w = ctx;
	return real_ret(w->t, slot, value);
}

static void snapshot(struct walk_ctx *w, uint64_t sp)
{
	struct iovec local = { w->buf, sizeof w->buf };
	struct iovec remote = { (void *)(uintptr_t)sp, sizeof w->buf };
	ssize_t n = process_vm_readv(w->tr->proc->pid, &local, 1, &remote, 1, 0);
	w->base = sp;
	w->len = n > 0 ? (size_t)n : 0;
}

/* The registers of the innermost frame of an event.  A thread stopped at
 * an int3 has its pc one past it; at the return trampoline it has just
 * returned to site. */
static int start_regs(struct tracer *tr, struct tthread *t, uint64_t site, bool at_request,
		      struct cfi_regs *out)
{
	struct user_regs_struct r;
	struct tracer_priv_thread *p = t->priv;
	if (at_request) {
		r = p->regs;
		r.rip = p->stop_pc;
	} else {
		if (ptu_getregs(t->tid, &r) < 0)
			return -1;
		struct bpt *b = bpt_at_trap(&tr->proc->as.bpts, r.rip - 1);
		if (b)
			r.rip = b->kind == BK_TRAMP ? site : b->addr;
	}
	cfi_regs_from_user(out, &r);
	return 0;
}

/* at_request: the event is emitted from the thread's last request stop
 * (pthread_create, emitted deep inside libc), so walk from there. */
int stack_capture(struct tracer *tr, struct tthread *t, uint64_t site, bool at_request,
		  struct avt_frame *out, int max)
{
	struct cfi_frame w[MAX_STACK_WALK];
	struct cfi_regs regs;
	struct tracer_priv_thread *p = t->priv;
	if (max > MAX_STACK_DEPTH)
		max = MAX_STACK_DEPTH;
	if (start_regs(tr, t, site, at_request, &regs) < 0)
		return 0;
	struct walk_ctx *ctx = malloc(sizeof *ctx);
	if (!ctx)
		return 0;
	ctx->tr = tr;
	ctx->t = t;
	snapshot(ctx, regs.r[CFI_RSP]);
	struct cfi_env env = { walk_read, walk_find, walk_real_ra, ctx };
	int nw = cfi_walk(&env, &regs, w, MAX_STACK_WALK);
	free(ctx);
	/* skip the library frames above the user code (a hooked function,
	 * pthread_create's insides); stop at the first one below it */
	int first = 0;
	while (first < nw && !user_code(tr, w[first].pc))
		first++;
	int n = 0;
	while (first + n < nw && user_code(tr, w[first + n].pc))
		n++;
	const struct cfi_frame *u = w + first;
	/*
	 * Match with the live calls, outermost first: every user frame the
	 * walk read, not only the `max` innermost the event keeps (a C++
	 * thread is a dozen frames deep: matched on its innermost eight, the
	 * outermost kept moved with the depth of the event, and every event
	 * got new calls; cxx_account's read and write were in two calls of
	 * deposit).  A walk that filled its buffer starts below the thread's
	 * outermost calls: it is matched from the live call of its outermost
	 * frame's CFA (stacks grow down: outer calls have higher CFAs).
	 */
	int k0 = 0;
	if (n && first + n == nw && nw == MAX_STACK_WALK)
		while (k0 < p->nlive && p->live[k0].cfa > u[n - 1].cfa)
			k0++;
	if (k0 + n > MAX_STACK_WALK) { /* forget the outermost calls */
		int drop = k0 + n - MAX_STACK_WALK;
		memmove(p->live, p->live + drop, (size_t)(p->nlive - drop) * sizeof p->live[0]);
		p->nlive -= drop;
		k0 -= drop;
	}
	int k = 0;
	while (k < n && k0 + k < p->nlive && p->live[k0 + k].cfa == u[n - 1 - k].cfa)
		k++;
	p->nlive = k0 + k;
	for (int i = k; i < n; i++) {
		const struct cfi_frame *x = &u[n - 1 - i];
		p->live[p->nlive].cfa = x->cfa;
		p->live[p->nlive].inv = ++p->next_inv;
		p->nlive++;
		if (x->ra_slot && (user_code(tr, x->ra) || i == 0))
			watch_return(tr, t, x->ra_slot, x->ra);
	}
	int keep = n < max ? n : max;
	for (int i = 0; i < keep; i++) {
		memset(&out[i], 0, sizeof out[i]);
		tracer_site(tr, u[i].pc, &out[i].mod, &out[i].off);
		out[i].inv = p->live[k0 + n - 1 - i].inv;
	}
	return keep;
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
		ptu_write(tr->proc->memfd, p->rets[k].sp, &p->rets[k].ret, sizeof p->rets[k].ret);
}

void stack_unwinding(struct tracer *tr, struct tthread *t)
{
	stack_unswap(tr, t);
	t->priv->nrets = 0;
	/* a call it was waiting in is left for good (cancelled) */
	t->wait = TW_NONE;
	t->priv->expect_block = false;
	t->priv->sync_sleep = false;
}
