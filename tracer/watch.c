/*
 * --watch: hardware watchpoints (x86 debug registers DR0-DR3, DR7) on up
 * to four variables, for accesses the program does not annotate.
 *
 * The registers are per thread and a new thread does not inherit working
 * ones (PTRACE-NOTES pitfall 4), so they are written at every thread's
 * first stop.  A trap arrives after the access; DR6 says which register
 * fired and is cleared after each trap.
 *
 * Read or write: x86 cannot watch reads alone, so each register watches
 * both (RW=11) and the trap comes after the access.  The instruction that
 * made it is decoded (decode/): the one that ends at the trap's pc and
 * whose memory operand, computed from the registers, covers the watched
 * variable; its operand says read, write or read-modify-write, so a store
 * of the value already there is a write.  Only when no such instruction
 * is found (code that moved its base register, say) is the kind told by
 * the value: changed, a write.  The event's site is the instruction after
 * the access, looked up like a return address (pc - 1), which names the
 * access's line.
 *
 * Unannotated programs with no --watch get access breakpoints instead
 * (access.c), which replaced the automatic choice of four globals.
 */
#include <errno.h>
#include <signal.h>
#include <linux/hw_breakpoint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "decode/decode.h"
#include "ptrace_util.h"
#include "symbolizer/sym.h"
#include "tracer_int.h"

#define DR_OFF(i) (offsetof(struct user, u_debugreg) + (size_t)(i) * sizeof(long))

static int len_bits(uint64_t size)
{
	switch (size) {
	case 1: return 0;
	case 2: return 1;
	case 4: return 3;
	case 8: return 2;
	default: return -1;
	}
}

static uint64_t dr7_value(const struct tracer *tr)
{
	uint64_t dr7 = 0;
	for (size_t i = 0; i < tr->nwatch; i++) {
		dr7 |= 1ull << (2 * i);                                     /* local enable */
		dr7 |= 3ull << (16 + 4 * i);                                /* RW: read+write */
		dr7 |= (uint64_t)len_bits(tr->watch[i].size) << (18 + 4 * i); /* LEN */
	}
	return dr7;
}

int watch_arm_thread(struct tracer *tr, pid_t tid)
{
	if (!tr->nwatch)
		return 0;
	for (size_t i = 0; i < tr->nwatch; i++)
		if (ptrace(PTRACE_POKEUSER, tid, (void *)DR_OFF(i), (void *)(uintptr_t)tr->watch[i].addr) < 0)
			return -1;
	if (ptrace(PTRACE_POKEUSER, tid, (void *)DR_OFF(7), (void *)(uintptr_t)dr7_value(tr)) < 0)
		return -1;
	return 0;
}

static int read_value(struct tracer *tr, const struct watch *w, uint64_t *v)
{
	*v = 0;
	return ptu_read(tr->proc->pid, w->addr, v, w->size);
}

/* Resolves the --watch names in the live process (at the entry stop). */
int watch_setup(struct tracer *tr, char *why, size_t whylen)
{
	tr->nwatch = 0;
	if (!tr->opts.nwatch)
		return 0;
	struct sym *s = sym_new();
	if (!s || sym_add_process(s, tr->proc->pid) < 0) {
		sym_free(s);
		snprintf(why, whylen, "cannot read the program's symbols for --watch");
		return -1;
	}
	for (size_t i = 0; i < tr->opts.nwatch; i++) {
		const char *expr = tr->opts.watch[i];
		struct watch *w = &tr->watch[tr->nwatch];
		char *end;
		memset(w, 0, sizeof *w);
		if (!strncmp(expr, "0x", 2)) {
			w->addr = strtoull(expr, &end, 16);
			w->size = 8;
			if (*end == ':')
				w->size = strtoull(end + 1, &end, 10);
		} else if (sym_var_lookup(s, expr, &w->addr, &w->size) < 0) {
			snprintf(why, whylen, "--watch %s: %s (it takes globals and statics by name, var.member, var[N], or 0xADDR[:SIZE])",
				 expr, sym_error(s));
			sym_free(s);
			return -1;
		}
		if (w->size > 8) {
			avt_warn("--watch %s: %llu bytes, more than a watchpoint covers: watching its first 8",
				 expr, (unsigned long long)w->size);
			w->size = 8;
		}
		while (w->size & (w->size - 1))
			w->size &= w->size - 1; /* 3, 5-7 bytes: the largest power of two below */
		if (w->addr & (w->size - 1)) {
			snprintf(why, whylen, "--watch %s: address 0x%llx is not aligned to its size %llu (x86 watchpoints need that)",
				 expr, (unsigned long long)w->addr, (unsigned long long)w->size);
			sym_free(s);
			return -1;
		}
		snprintf(w->name, sizeof w->name, "%s", expr);
		read_value(tr, w, &w->last);
		tr->nwatch++;
	}
	sym_free(s);
	return 0;
}

/* A SIGTRAP that may be a watchpoint: if so, emit the access and return
 * true (the thread stays stopped after the access: a scheduling point). */
/* DR6 said nothing, yet the kernel calls the trap a hardware breakpoint
 * (seen about once in a few thousand runs under load): it is ours and
 * must not reach the program.  Which variable: one whose value changed
 * (a write), else the only one armed (a read); else say so and drop it. */
static long guess_dr6(struct tracer *tr, struct tthread *t)
{
	long bits = 0;
	size_t armed = 0, last = 0;
	for (size_t i = 0; i < tr->nwatch; i++) {
		uint64_t v;
		armed++;
		last = i;
		if (read_value(tr, &tr->watch[i], &v) == 0 && v != tr->watch[i].last)
			bits |= 1L << i;
	}
	if (!bits && armed == 1)
		bits = 1L << last;
	if (!bits)
		avt_warn("T%u: a watchpoint fired but neither DR6 nor the values tell which; access not recorded",
			 t->lid);
	return bits;
}

/* The kind of the access that just trapped at w, decoded from the
 * instruction ending at r->rip: AVT_EV_NONE if it cannot be told. */
static enum avt_kind decoded_kind(struct tracer *tr, const struct watch *w,
				  const struct user_regs_struct *r)
{
	uint8_t code[15];
	if (r->rip < sizeof code || bpt_read_orig(&tr->proc->as.bpts, r->rip - sizeof code, code, sizeof code) < 0)
		return AVT_EV_NONE;
	struct dec *d = dec_new();
	if (!d)
		return AVT_EV_NONE;
	enum avt_kind kind = AVT_EV_NONE;
	/* the longest instruction that ends exactly at rip and touches w */
	for (size_t len = sizeof code; len >= 1 && kind == AVT_EV_NONE; len--) {
		struct dec_insn in;
		uint64_t at = r->rip - len;
		if (dec_insn(d, code + sizeof code - len, len, at, &in) != (int)len)
			continue;
		for (unsigned k = 0; k < in.nmem; k++) {
			uint64_t ea = dec_ea(&in.mem[k], r), n = in.mem[k].size;
			if (ea < w->addr + w->size && ea + n > w->addr) {
				kind = in.mem[k].kind == DEC_READ ? AVT_EV_READ :
				       in.mem[k].kind == DEC_WRITE ? AVT_EV_WRITE : AVT_EV_RMW;
				break;
			}
		}
	}
	dec_free(d);
	return kind;
}

bool watch_trap(struct tracer *tr, struct tthread *t, struct ptu_status *s,
		const struct user_regs_struct *r)
{
	if (!tr->nwatch)
		return false;
	errno = 0;
	long dr6 = ptrace(PTRACE_PEEKUSER, t->tid, (void *)DR_OFF(6), 0L);
	if (errno || !(dr6 & 0xf)) {
		/* a debug exception (not int3's SI_KERNEL, nor a raise()) while
		 * watchpoints are armed; the kernel calls one whose DR6 it lost
		 * TRAP_BRKPT, not TRAP_HWBKPT */
		const siginfo_t *si = ptu_siginfo(s);
		if (!si || (si->si_code != TRAP_HWBKPT && si->si_code != TRAP_BRKPT &&
			    si->si_code != TRAP_TRACE))
			return false;
		avt_debug("T%u: hardware breakpoint trap with empty DR6", t->lid);
		dr6 = guess_dr6(tr, t);
	}
	ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFF(6), 0L);
	for (size_t i = 0; i < tr->nwatch; i++) {
		if (!(dr6 & (1L << i)))
			continue;
		struct watch *w = &tr->watch[i];
		uint64_t v;
		read_value(tr, w, &v);
		enum avt_kind kind = decoded_kind(tr, w, r);
		if (kind == AVT_EV_NONE)
			kind = v != w->last ? AVT_EV_WRITE : AVT_EV_READ;
		w->last = v;
		tr_emit(tr, t, kind, w->addr, 0, r->rip, AVT_F_WATCHED, (uint16_t)w->size);
	}
	return true;
}

size_t tracer_watch_count(const struct tracer *tr)
{
	return tr->nwatch;
}

const char *tracer_watch_name(const struct tracer *tr, size_t i)
{
	return i < tr->nwatch ? tr->watch[i].name : NULL;
}
