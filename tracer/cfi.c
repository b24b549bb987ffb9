/*
 * Call-frame walking from .eh_frame (see cfi.h).
 *
 * libdw parses the CFI and gives, for a pc, the rule of the CFA and of each
 * register as a small DWARF expression; the few operations that x86-64
 * compilers emit for ordinary frames are evaluated here.  Anything else
 * ends the walk.
 */
#include "cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>
#include <unistd.h>

void cfi_regs_from_user(struct cfi_regs *c, const struct user_regs_struct *u)
{
	memset(c, 0, sizeof *c);
	const uint64_t v[CFI_NREGS] = {
		u->rax, u->rdx, u->rcx, u->rbx, u->rsi, u->rdi, u->rbp, u->rsp,
		u->r8, u->r9, u->r10, u->r11, u->r12, u->r13, u->r14, u->r15, u->rip,
	};
	memcpy(c->r, v, sizeof v);
	c->known = (1u << CFI_NREGS) - 1;
}

#define EVAL_DEPTH 8

/* Evaluates a CFI expression.  cfa: the frame's CFA for register rules
 * (DW_OP_call_frame_cfa), or 0 while computing the CFA itself.  *is_value
 * tells whether the result is the value (DW_OP_stack_value) or the address
 * where the value is saved.  Returns 0, or -1 for what it does not know. */
static int eval(const Dwarf_Op *ops, size_t nops, const struct cfi_regs *regs, uint64_t cfa,
		uint64_t *out, bool *is_value)
{
	uint64_t st[EVAL_DEPTH];
	int sp = 0;
	*is_value = false;
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		unsigned reg;
		int64_t off;
		switch (op->atom) {
		case DW_OP_breg0 ... DW_OP_breg31:
		case DW_OP_bregx:
			reg = op->atom == DW_OP_bregx ? (unsigned)op->number : (unsigned)(op->atom - DW_OP_breg0);
			off = op->atom == DW_OP_bregx ? (int64_t)op->number2 : (int64_t)op->number;
			if (reg >= CFI_NREGS || !(regs->known & (1u << reg)) || sp == EVAL_DEPTH)
				return -1;
			st[sp++] = regs->r[reg] + (uint64_t)off;
			break;
		case DW_OP_call_frame_cfa:
			if (!cfa || sp == EVAL_DEPTH)
				return -1;
			st[sp++] = cfa;
			break;
		case DW_OP_lit0 ... DW_OP_lit31:
			if (sp == EVAL_DEPTH)
				return -1;
			st[sp++] = op->atom - DW_OP_lit0;
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			if (sp == EVAL_DEPTH)
				return -1;
			st[sp++] = op->number;
			break;
		case DW_OP_plus_uconst:
			if (sp < 1)
				return -1;
			st[sp - 1] += op->number;
			break;
		case DW_OP_plus:
		case DW_OP_minus:
			if (sp < 2)
				return -1;
			sp--;
			st[sp - 1] = op->atom == DW_OP_plus ? st[sp - 1] + st[sp] : st[sp - 1] - st[sp];
			break;
		case DW_OP_stack_value:
			if (i + 1 != nops)
				return -1;
			*is_value = true;
			break;
		default:
			return -1; /* dereferences, branches, PLT arithmetic: not ours to guess */
		}
	}
	if (sp != 1)
		return -1;
	*out = st[0];
	return 0;
}

/* Registers a caller can expect to find as they were (System V callee-saved). */
static const int callee_saved[] = { CFI_RBX, CFI_RBP, CFI_R12, CFI_R13, CFI_R14, CFI_R15 };

/* The caller's value of reg in frame fr; 0 if known, -1 if not. */
static int caller_reg(const struct cfi_env *env, Dwarf_Frame *fr, int reg, const struct cfi_regs *regs,
		      uint64_t cfa, uint64_t *out)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool is_value;
	uint64_t v;
	if (dwarf_frame_register(fr, reg, mem, &ops, &nops) != 0)
		return -1;
	if (nops == 0) {
		if (ops) /* undefined */
			return -1;
		if (!(regs->known & (1u << reg))) /* same value */
			return -1;
		*out = regs->r[reg];
		return 0;
	}
	if (eval(ops, nops, regs, cfa, &v, &is_value) < 0)
		return -1;
	if (is_value) {
		*out = v;
		return 0;
	}
	return env->read(env->ctx, v, out, sizeof *out);
}

int cfi_walk(const struct cfi_env *env, const struct cfi_regs *start, struct cfi_frame *out, int max)
{
	struct cfi_regs regs = *start;
	uint64_t prev_cfa = 0;
	int n = 0;
	while (n < max && (regs.known & (1u << CFI_RIP))) {
		uint64_t pc = regs.r[CFI_RIP], bias = 0;
		Dwarf_CFI *cfi = env->find(env->ctx, pc, &bias);
		Dwarf_Frame *fr = NULL;
		/* a return address may be just past the end of its function (a
		 * call to a noreturn function): look up the call itself */
		uint64_t at = n ? pc - 1 : pc;
		if (!cfi || dwarf_cfi_addrframe(cfi, at - bias, &fr) != 0)
			break;
		Dwarf_Op *ops;
		size_t nops;
		bool is_value;
		uint64_t cfa, slot, ra;
		if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops == 0 ||
		    eval(ops, nops, &regs, 0, &cfa, &is_value) < 0 || cfa <= prev_cfa) {
			free(fr);
			break;
		}
		out[n] = (struct cfi_frame){ .pc = pc, .cfa = cfa };
		n++;
		/* the return address must be saved in memory, where a call puts it */
		Dwarf_Op mem[3];
		if (dwarf_frame_register(fr, CFI_RIP, mem, &ops, &nops) != 0 || nops == 0 ||
		    eval(ops, nops, &regs, cfa, &slot, &is_value) < 0 || is_value || slot != cfa - 8 ||
		    env->read(env->ctx, slot, &ra, sizeof ra) < 0) {
			free(fr);
			break;
		}
		if (env->real_ra)
			ra = env->real_ra(env->ctx, slot, ra);
		out[n - 1].ra_slot = slot;
		out[n - 1].ra = ra;
		struct cfi_regs next = { .known = 0 };
		next.r[CFI_RSP] = cfa;
		next.r[CFI_RIP] = ra;
		next.known = (1u << CFI_RSP) | (1u << CFI_RIP);
		for (size_t i = 0; i < sizeof callee_saved / sizeof callee_saved[0]; i++) {
			int r = callee_saved[i];
			if (caller_reg(env, fr, r, &regs, cfa, &next.r[r]) == 0)
				next.known |= 1u << r;
		}
		free(fr);
		if (!ra)
			break; /* the outermost frame (_start's caller is 0) */
		prev_cfa = cfa;
		regs = next;
	}
	return n;
}

/* ---- the cache of modules' CFI */

struct cfi_file {
	char *path;
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi; /* NULL: none */
};

struct cfi_cache {
	struct cfi_file *f;
	size_t n, cap;
};

struct cfi_cache *cfi_cache_new(void)
{
	elf_version(EV_CURRENT);
	return calloc(1, sizeof(struct cfi_cache));
}

void cfi_cache_free(struct cfi_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->f[i].cfi)
			dwarf_cfi_end(c->f[i].cfi);
		if (c->f[i].elf)
			elf_end(c->f[i].elf);
		if (c->f[i].fd >= 0)
			close(c->f[i].fd);
		free(c->f[i].path);
	}
	free(c->f);
	free(c);
}

void *cfi_cache_get(struct cfi_cache *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->f[i].path, path))
			return c->f[i].cfi;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct cfi_file *f = realloc(c->f, cap * sizeof *f);
		if (!f)
			return NULL;
		c->f = f;
		c->cap = cap;
	}
	struct cfi_file *f = &c->f[c->n];
	memset(f, 0, sizeof *f);
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	c->n++;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd >= 0)
		f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (f->elf)
		f->cfi = dwarf_getcfi_elf(f->elf);
	return f->cfi;
}
