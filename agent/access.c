/*
 * The access stubs' entry (decode/stub.h, docs/memory-access.md): an
 * access breakpoint taken in-process.  The stub has saved the flags and
 * every caller-saved general register; this file is compiled with
 * -mgeneral-regs-only, so the program's vector registers are untouched.
 *
 * The supervisor filled the site's table entry when it planted the stub
 * (the event's kind, size, flags; how many hits may be taken here before
 * one must stop at ptrace, where the private-hit budget and a recorded
 * disarm are decided).  The rest is the lock hooks' path: the run token,
 * a ring slot, the commit, one unit of budget spent.
 *
 * The run token's wait in a hand-over script and the accounting of the
 * accesses the recording does not have are here too, for the lock hooks
 * as well: the access entry runs them between any two instructions of
 * the program, so they must be built with -mgeneral-regs-only.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>

#include "agent_int.h"

static long futex(_Atomic uint32_t *word, int op, uint32_t val)
{
	/* The program's errno is kept: this runs inside its lock calls
	 * (which never set errno natively) and between any two of its
	 * instructions, e.g. after its own futex wait returned ETIMEDOUT and
	 * before it reads errno; the token wait's EAGAIN or EINTR would
	 * replace it (a timed wait seen failing with EAGAIN: fidelity_waits). */
	int saved = errno;
	/* shared (not FUTEX_PRIVATE): avtrace wakes it through its own
	 * mapping of the region when it ends a script; the mark: no stop
	 * under avtrace's futex filter (--futex) */
	long rc = syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, AVT_AGENT_FUTEX_MARK);
	errno = saved;
	return rc;
}

/* The run token under a hand-over script (avt_agent_turn): a thread whose
 * event comes later in the script hands the token on if it holds it, and
 * waits on run_tid until the token comes back to it or the script ends
 * (avtrace sets script to 0, takes the token and wakes every waiter:
 * they take the ptrace path, where its scheduler decides).  Waiting is
 * inside the hook (avt_depth set: a signal handler's lock goes down the
 * ptrace path) but not busy: avtrace may stop a waiting thread. */
int avt_enter_event(uint16_t kind, uint64_t obj, uint64_t site)
{
	struct avt_agent_hdr *r = avt_ring;
	if (!avt_usable(r))
		return 0;
	avt_depth = 1;
	for (;;) {
		uint32_t who = 0;
		int turn = avt_agent_turn(r, avt_my_tid, kind, obj, site, &who);
		if (turn == 1)
			break;
		if (turn == 0) {
			avt_depth = 0;
			return 0;
		}
		if (atomic_load_explicit(&r->run_tid, memory_order_relaxed) == avt_my_tid) {
			atomic_store_explicit(&r->run_tid, who, memory_order_release);
			atomic_fetch_add_explicit(&r->handovers, 1, memory_order_relaxed);
			futex(&r->run_tid, FUTEX_WAKE, INT_MAX);
		}
		futex(&r->run_tid, FUTEX_WAIT, who);
	}
	avt_busy(r);
	return 1;
}

/* Accesses made in-process that the recording does not have
 * (avt_agent_extra), per thread: for the grant avt_xgen, the reads it
 * may still make (avt_xleft) and those of them that were extra since its
 * last expected event that is no access (avt_xextra). */
static __thread uint32_t avt_xgen TLS, avt_xleft TLS, avt_xextra TLS;

static int is_access(uint16_t kind)
{
	return kind == AVT_EV_READ || kind == AVT_EV_WRITE || kind == AVT_EV_RMW || kind == AVT_EV_NONE;
}

int avt_listed(uint16_t kind)
{
	struct avt_agent_hdr *h = avt_ring;
	uint32_t n = atomic_load_explicit(&h->expect_n, memory_order_relaxed);
	uint32_t pos = atomic_load_explicit(&h->expect_pos, memory_order_relaxed);
	if (!n || pos >= n)
		return 1;
	const struct avt_agent_expect *e = &avt_agent_expects(h)[pos];
	uint32_t gen = atomic_load_explicit(&h->gen, memory_order_relaxed);
	if (avt_xgen != gen) {
		avt_xgen = gen;
		avt_xextra = 0;
	}
	/* the explorer counted its reads up to here without the extra ones */
	if (kind == AVT_EV_READ && avt_xextra && e->reads <= avt_xextra)
		return 0;
	if (!is_access(e->kind)) {
		avt_xextra = 0;
		avt_xleft = e->reads;
	} else {
		avt_xleft = e->reads > avt_xextra ? e->reads - avt_xextra : 0;
	}
	return 1;
}

/*
 * avt_value_load(p, size): the 1, 2, 4 or 8 bytes at p, zero-extended, and
 * ok = 1; ok = 0 when the load faults.  The program's instruction loads
 * those bytes right after, so they are mapped unless it faults too (a NULL
 * dereference): the supervisor then sees the fault at a pc in
 * [avt_value_load_lo, avt_value_load_hi), resumes the thread at
 * avt_value_load_hi (ok = 0) and drops the signal, and the instruction
 * faults where it stands, as natively.  Plain loads: the stub saves no
 * vector register a libc memcpy would use.
 */
struct avt_vload {
	uint64_t value, ok; /* returned in rax, rdx */
};
HIDDEN struct avt_vload avt_value_load(const void *p, uint32_t size);
extern const char avt_value_load_lo[] HIDDEN, avt_value_load_hi[] HIDDEN;
__asm__(".text\n"
	".type avt_value_load, @function\n"
	"avt_value_load:\n"
	"	xorl %eax, %eax\n"
	"	movl $1, %edx\n"
	"	cmpl $1, %esi\n"
	"	je 1f\n"
	"	cmpl $2, %esi\n"
	"	je 2f\n"
	"	cmpl $4, %esi\n"
	"	je 4f\n"
	"	cmpl $8, %esi\n"
	"	je 8f\n"
	"	xorl %edx, %edx\n"
	"	ret\n"
	"avt_value_load_lo:\n"
	"1:	movzbl (%rdi), %eax\n"
	"	ret\n"
	"2:	movzwl (%rdi), %eax\n"
	"	ret\n"
	"4:	movl (%rdi), %eax\n"
	"	ret\n"
	"8:	movq (%rdi), %rax\n"
	"	ret\n"
	"avt_value_load_hi:\n"
	"	xorl %eax, %eax\n"
	"	xorl %edx, %edx\n"
	"	ret\n"
	".size avt_value_load, . - avt_value_load\n");

void avt_value_publish(struct avt_agent_hdr *h)
{
	atomic_store_explicit(&h->value_lo, (uint64_t)(uintptr_t)avt_value_load_lo,
			      memory_order_relaxed);
	atomic_store_explicit(&h->value_hi, (uint64_t)(uintptr_t)avt_value_load_hi,
			      memory_order_relaxed);
}

/* A read's or rmw's value (AVT_F_VALUE in *flag), else 0. */
static uint64_t read_value(const struct avt_agent_site *s, uint64_t addr, uint16_t *flag)
{
	*flag = 0;
	if (s->kind != AVT_EV_READ && s->kind != AVT_EV_RMW)
		return 0;
	struct avt_vload v = avt_value_load((const void *)(uintptr_t)addr, s->size);
	if (v.ok)
		*flag = AVT_F_VALUE;
	return v.value;
}

int avt_access_entry(uint32_t index, uint64_t addr, uint64_t rsp, uint64_t value)
{
	struct avt_agent_hdr *h = avt_ring;
	struct avt_agent_site *s = h && index < h->nsites ? &avt_agent_sites(h)[index] : 0;
	/* a store that lets the stack escape: the supervisor sees it at the
	 * ptrace stop, in order with the records before it */
	if (s && s->store && avt_stack_escapes(value, addr, rsp))
		return 1;
	if (!s || !avt_enter_event(s->kind, addr, s->pc))
		return 1;
	int32_t left = s ? atomic_load_explicit(&s->left, memory_order_relaxed) : 0;
	int extra = 0;
	if (left > 0 && !avt_agent_expected(h, avt_my_tid, s->kind, addr, s->pc)) {
		/* not the event the budget expects: ptrace decides, unless it
		 * is an access the recording does not have, with no decision */
		extra = avt_xgen == atomic_load_explicit(&h->gen, memory_order_relaxed) &&
			avt_agent_extra(h, avt_my_tid, s->kind, s, &avt_xleft);
		if (!extra)
			left = 0;
		else if (s->kind == AVT_EV_READ)
			avt_xextra++;
	} else if (left > 0 && !avt_listed(s->kind)) {
		left = 0;
	}
	int64_t ticket = left > 0 && s->kind ? avt_agent_claim(h, AVT_AGENT_UNLOCK_RESERVE) : -1;
	if (ticket < 0) {
		if (left > 0 && s->kind)
			atomic_fetch_add_explicit(&h->full, 1, memory_order_relaxed);
		avt_leave();
		return 1;
	}
	uint16_t vflag;
	uint64_t value_read = read_value(s, addr, &vflag);
	avt_agent_commit_access(h, (uint64_t)ticket, s, index, addr, rsp, avt_my_tid, value_read,
				vflag);
	if (left != AVT_AGENT_SITE_NOLIMIT)
		atomic_store_explicit(&s->left, left - 1, memory_order_relaxed);
	if (extra)
		atomic_fetch_add_explicit(&h->extras, 1, memory_order_relaxed);
	else
		avt_agent_spend(h);
	avt_leave();
	return 0;
}
