/*
 * Where the value a read loads may go (sym.h, sym_value_use()): a forward
 * taint walk over the machine code of the read's function, from the load
 * to wherever the value dies.  docs/avfilter.md, "Where a read's value
 * goes".
 *
 * The state at an instruction is which registers, which stack slots of
 * the frame (rbp- or rsp-relative, no index) and whether the flags carry
 * the value.  Every path through the function is followed (a work list
 * over instruction addresses, states joined) until the value is dead, the
 * function returns, or it steers: a conditional jump or an indirect
 * branch on it, an address computed from it, a call given it, the value
 * returned.  A store of it to a global (rip-relative) is data, and its
 * address is reported: the caller decides what the readers of that global
 * do with it.  What the walk cannot follow (a store through a pointer, a
 * push, a frame whose address escapes into a call, code it cannot read or
 * decode, too long a walk) is SYM_USE_UNKNOWN.
 */
#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sym_elf.h"
#include "sym_int.h"

#define FLOW_INSNS 8192 /* instructions walked per question, at most */
#define FLOW_PCS 1024   /* instruction addresses holding a state */
#define FLOW_SLOTS 16   /* tainted stack slots */
#define FLOW_FIND 16    /* instructions after an annotation searched for its load */

/* Canonical registers: rax rcx rdx rbx rsp rbp rsi rdi r8..r15 are 0..15,
 * xmm/ymm/zmm 0..31 are 16..47. */
enum { R_AX = 0, R_CX, R_DX, R_BX, R_SP, R_BP, R_SI, R_DI, R_8, R_9 };
#define R_XMM 16

static int canon(x86_reg r)
{
	switch (r) {
	case X86_REG_AL: case X86_REG_AH: case X86_REG_AX: case X86_REG_EAX: case X86_REG_RAX:
		return R_AX;
	case X86_REG_CL: case X86_REG_CH: case X86_REG_CX: case X86_REG_ECX: case X86_REG_RCX:
		return R_CX;
	case X86_REG_DL: case X86_REG_DH: case X86_REG_DX: case X86_REG_EDX: case X86_REG_RDX:
		return R_DX;
	case X86_REG_BL: case X86_REG_BH: case X86_REG_BX: case X86_REG_EBX: case X86_REG_RBX:
		return R_BX;
	case X86_REG_SPL: case X86_REG_SP: case X86_REG_ESP: case X86_REG_RSP:
		return R_SP;
	case X86_REG_BPL: case X86_REG_BP: case X86_REG_EBP: case X86_REG_RBP:
		return R_BP;
	case X86_REG_SIL: case X86_REG_SI: case X86_REG_ESI: case X86_REG_RSI:
		return R_SI;
	case X86_REG_DIL: case X86_REG_DI: case X86_REG_EDI: case X86_REG_RDI:
		return R_DI;
	default:
		break;
	}
	if (r >= X86_REG_R8 && r <= X86_REG_R15)
		return 8 + (int)(r - X86_REG_R8);
	if (r >= X86_REG_R8B && r <= X86_REG_R15B)
		return 8 + (int)(r - X86_REG_R8B);
	if (r >= X86_REG_R8D && r <= X86_REG_R15D)
		return 8 + (int)(r - X86_REG_R8D);
	if (r >= X86_REG_R8W && r <= X86_REG_R15W)
		return 8 + (int)(r - X86_REG_R8W);
	if (r >= X86_REG_XMM0 && r <= X86_REG_XMM31)
		return R_XMM + (int)(r - X86_REG_XMM0);
	if (r >= X86_REG_YMM0 && r <= X86_REG_YMM31)
		return R_XMM + (int)(r - X86_REG_YMM0);
	if (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31)
		return R_XMM + (int)(r - X86_REG_ZMM0);
	return -1;
}

struct slot {
	int base; /* R_BP or R_SP */
	int64_t off;
	uint32_t size;
};

struct fstate {
	uint64_t regs;
	bool flags;
	unsigned nslot;
	struct slot slot[FLOW_SLOTS];
};

/* A state kept at an instruction address. */
struct fpc {
	uint64_t pc;
	struct fstate st;
	bool queued;
};

struct flow {
	csh cs;
	bool returns;        /* the function returns a value (DWARF; true if unknown) */
	const uint8_t *code; /* the function's bytes, from runtime address lo */
	uint64_t lo, hi;
	bool frame_escapes;  /* the frame's address is taken somewhere */
	struct fpc pcs[FLOW_PCS];
	unsigned npc;
	struct sym_use_info *out;
	struct sym_mod *m;
};

enum { F_OK, F_END, F_STEERS, F_UNKNOWN };

static bool state_empty(const struct fstate *s)
{
	return !s->regs && !s->flags && !s->nslot;
}

static bool is_stack(const cs_x86_op *op)
{
	int b = canon(op->mem.base);
	return op->mem.index == X86_REG_INVALID && op->mem.segment == X86_REG_INVALID &&
	       (b == R_BP || b == R_SP);
}

static bool overlaps(const struct slot *a, int base, int64_t off, uint32_t size)
{
	return a->base == base && a->off < off + (int64_t)size && off < a->off + (int64_t)a->size;
}

static bool slot_tainted(const struct fstate *s, const cs_x86_op *op)
{
	for (unsigned i = 0; i < s->nslot; i++)
		if (overlaps(&s->slot[i], canon(op->mem.base), op->mem.disp, op->size))
			return true;
	return false;
}

/* Stores to a slot: tainted or not.  false if there are too many. */
static bool slot_set(struct fstate *s, const cs_x86_op *op, bool taint)
{
	int base = canon(op->mem.base);
	for (unsigned i = 0; i < s->nslot;) /* an overwritten slot is gone */
		if (!taint && overlaps(&s->slot[i], base, op->mem.disp, op->size) &&
		    s->slot[i].off >= op->mem.disp &&
		    s->slot[i].off + s->slot[i].size <= op->mem.disp + (int64_t)op->size)
			s->slot[i] = s->slot[--s->nslot];
		else
			i++;
	if (!taint)
		return true;
	for (unsigned i = 0; i < s->nslot; i++)
		if (s->slot[i].base == base && s->slot[i].off == op->mem.disp &&
		    s->slot[i].size >= op->size)
			return true;
	if (s->nslot == FLOW_SLOTS)
		return false;
	s->slot[s->nslot++] = (struct slot){ base, op->mem.disp, op->size };
	return true;
}

static void reg_set(struct fstate *s, int c, bool taint)
{
	if (c < 0)
		return;
	if (taint)
		s->regs |= (uint64_t)1 << c;
	else
		s->regs &= ~((uint64_t)1 << c);
}

static bool reg_tainted(const struct fstate *s, int c)
{
	return c >= 0 && (s->regs >> c & 1);
}

static int add_store(struct flow *f, uint64_t addr)
{
	struct sym_use_info *o = f->out;
	for (unsigned i = 0; i < o->nstore; i++)
		if (o->store[i] == addr)
			return F_OK;
	if (o->nstore == SYM_USE_STORES)
		return F_UNKNOWN;
	o->store[o->nstore++] = addr;
	return F_OK;
}

#define EFL_TEST                                                                               \
	(X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF | X86_EFLAGS_TEST_PF |   \
	 X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_NT | X86_EFLAGS_TEST_DF | X86_EFLAGS_TEST_RF |   \
	 X86_EFLAGS_TEST_IF | X86_EFLAGS_TEST_TF | X86_EFLAGS_TEST_AF)

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* A two-register instruction that zeroes its destination whatever it held. */
static bool zeroing(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_REG || x->operands[0].reg != x->operands[1].reg)
		return false;
	switch (in->id) {
	case X86_INS_XOR: case X86_INS_SUB: case X86_INS_PXOR: case X86_INS_XORPS:
	case X86_INS_XORPD: case X86_INS_VPXOR: case X86_INS_VXORPS: case X86_INS_VXORPD:
		return true;
	default:
		return false;
	}
}

/* The effect of instruction in on s.  load: in is the read itself (its
 * memory source is the value). */
/* Functions a critical section calls right after its loads, with their
 * argument count: a value still in a later argument register (rdx after
 * `b = x; x = b + amount` at -O0) is not given to them. */
static const struct {
	const char *name;
	unsigned nargs;
} known_args[] = {
	{ "pthread_mutex_lock", 1 },	  { "pthread_mutex_unlock", 1 },
	{ "pthread_mutex_trylock", 1 },	  { "pthread_spin_lock", 1 },
	{ "pthread_spin_unlock", 1 },	  { "pthread_rwlock_rdlock", 1 },
	{ "pthread_rwlock_wrlock", 1 },	  { "pthread_rwlock_unlock", 1 },
	{ "pthread_cond_signal", 1 },	  { "pthread_cond_broadcast", 1 },
	{ "pthread_cond_wait", 2 },	  { "mtx_lock", 1 },
	{ "mtx_unlock", 1 },		  { "g_mutex_lock", 1 },
	{ "g_mutex_unlock", 1 },	  { "g_rec_mutex_lock", 1 },
	{ "g_rec_mutex_unlock", 1 },	  { "g_cond_signal", 1 },
	{ "g_cond_broadcast", 1 },	  { "g_cond_wait", 2 },
	{ "sched_yield", 0 },
};

/* The name of the function a direct call to runtime address target
 * reaches through the module's PLT: the stub's `jmp *GOT(%rip)` (after an
 * endbr64), the GOT slot's JUMP_SLOT relocation, its dynamic symbol.
 * NULL when target is no such stub. */
static const char *plt_name(struct flow *f, uint64_t target)
{
	GElf_Addr bias;
	Elf *elf = f->m ? dwfl_module_getelf(f->m->dm, &bias) : NULL;
	struct sym_elf_sec sec;
	if (!elf || target < bias || !sym_elf_section(elf, NULL, target - bias, target - bias + 16, &sec))
		return NULL;
	cs_insn *in = cs_malloc(f->cs);
	if (!in)
		return NULL;
	const uint8_t *code = sec.bytes + (target - bias - sec.addr);
	size_t size = sec.size - (target - bias - sec.addr);
	uint64_t addr = target, got = 0;
	for (int k = 0; k < 2 && cs_disasm_iter(f->cs, &code, &size, &addr, in); k++) {
		if (in->id == X86_INS_ENDBR64)
			continue;
		const cs_x86_op *op = &in->detail->x86.operands[0];
		if (in->id == X86_INS_JMP && in->detail->x86.op_count == 1 && op->type == X86_OP_MEM &&
		    op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID)
			got = in->address + in->size + (uint64_t)op->mem.disp - bias;
		break;
	}
	cs_free(in, 1);
	if (!got)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 24); i++) {
			GElf_Rela r;
			GElf_Sym sym;
			Elf_Scn *ss;
			GElf_Shdr ssh;
			if (!gelf_getrela(d, (int)i, &r) || r.r_offset != got ||
			    GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT)
				continue;
			if (!(ss = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(ss, &ssh))
				return NULL;
			Elf_Data *sd = elf_getdata(ss, NULL);
			if (!sd || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
				return NULL;
			return elf_strptr(elf, ssh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

/* How many argument registers a direct call passes: the known function's
 * count, else all six (and the vector ones: -1). */
static int call_args(struct flow *f, const cs_insn *in)
{
	const cs_x86_op *op = &in->detail->x86.operands[0];
	if (in->detail->x86.op_count != 1 || op->type != X86_OP_IMM)
		return -1;
	const char *name = plt_name(f, (uint64_t)op->imm);
	for (size_t i = 0; name && i < sizeof known_args / sizeof known_args[0]; i++)
		if (!strcmp(name, known_args[i].name))
			return (int)known_args[i].nargs;
	return -1;
}

static int transfer(struct flow *f, const cs_insn *in, struct fstate *s, bool load)
{
	const cs_detail *d = in->detail;
	const cs_x86 *x = &d->x86;
	bool lea = in->id == X86_INS_LEA, tin = false, reads_flags = (x->eflags & EFL_TEST) != 0;
	bool writes_flags = (x->eflags & ~(uint64_t)EFL_TEST) != 0;
	for (uint8_t i = 0; i < d->regs_read_count; i++)
		if (d->regs_read[i] == X86_REG_EFLAGS)
			reads_flags = true;
		else if (canon(d->regs_read[i]) != R_SP && reg_tainted(s, canon(d->regs_read[i])))
			tin = true;
	for (uint8_t i = 0; i < d->regs_write_count; i++)
		writes_flags |= d->regs_write[i] == X86_REG_EFLAGS;
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type == X86_OP_REG) {
			int c = canon(op->reg);
			if (reg_tainted(s, c) && ((op->access & CS_AC_READ) || !op->access))
				tin = true;
		} else if (op->type == X86_OP_MEM) {
			bool taddr = reg_tainted(s, canon(op->mem.base)) ||
				     reg_tainted(s, canon(op->mem.index));
			if (lea) {
				tin |= taddr;
				continue;
			}
			if (taddr)
				return F_STEERS; /* an address made from the value */
			if (op->access & CS_AC_READ) {
				if (load || (is_stack(op) && slot_tainted(s, op)))
					tin = true;
			}
		}
	}
	if (reads_flags && s->flags)
		tin = true;
	if (zeroing(in))
		tin = false;

	/* control */
	if (in_group(in, CS_GRP_RET))
		return f->returns && (reg_tainted(s, R_AX) || reg_tainted(s, R_DX) ||
				      reg_tainted(s, R_XMM) || reg_tainted(s, R_XMM + 1)) ?
			       F_STEERS :
			       F_END;
	if (in_group(in, CS_GRP_CALL)) {
		static const int args[] = { R_DI, R_SI, R_DX, R_CX, R_8, R_9 };
		if (tin)
			return F_STEERS; /* an indirect call on the value */
		int nargs = call_args(f, in);
		for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
			if ((nargs < 0 || i < (size_t)nargs) && reg_tainted(s, args[i]))
				return F_STEERS;
		for (int i = 0; nargs < 0 && i < 8; i++)
			if (reg_tainted(s, R_XMM + i))
				return F_STEERS;
		if (s->nslot && f->frame_escapes)
			return F_UNKNOWN; /* the callee may read the frame */
		for (unsigned i = 0; i < s->nslot; i++)
			if (s->slot[i].base == R_SP)
				return F_UNKNOWN;
		/* caller-saved registers and the flags do not survive */
		s->regs &= ((uint64_t)1 << R_BX) | ((uint64_t)1 << R_BP) | (0xfULL << 12);
		s->flags = false;
		return F_OK;
	}
	if (in_group(in, CS_GRP_JUMP) && tin)
		return F_STEERS; /* a conditional jump on it, or a jump through it */
	if (in->id == X86_INS_PUSH && tin)
		return F_UNKNOWN;
	if (in->id == X86_INS_LEAVE) {
		s->nslot = 0; /* the frame is gone */
		reg_set(s, R_BP, false);
		return F_OK;
	}

	/* outputs */
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type == X86_OP_REG && (op->access & CS_AC_WRITE)) {
			int c = canon(op->reg);
			/* an 8- or 16-bit write keeps the rest of the register */
			reg_set(s, c, tin || (op->size < 4 && reg_tainted(s, c)));
		} else if (op->type == X86_OP_MEM && (op->access & CS_AC_WRITE)) {
			if (is_stack(op)) {
				if (!slot_set(s, op, tin))
					return F_UNKNOWN;
			} else if (tin) {
				if (op->mem.base != X86_REG_RIP || op->mem.index != X86_REG_INVALID)
					return F_UNKNOWN; /* through a pointer: who reads it? */
				if (add_store(f, in->address + in->size + (uint64_t)op->mem.disp) != F_OK)
					return F_UNKNOWN;
			}
		}
	}
	for (uint8_t i = 0; i < d->regs_write_count; i++) {
		int c = canon(d->regs_write[i]);
		if (c == R_SP) {
			for (unsigned k = 0; k < s->nslot; k++)
				if (s->slot[k].base == R_SP)
					return F_UNKNOWN; /* rsp moves under a tracked slot */
		} else if (c >= 0) {
			reg_set(s, c, tin);
		}
	}
	if (writes_flags)
		s->flags = tin;
	return F_OK;
}

/* Joins st into the state kept for pc; true if that changed it (or pc is
 * new).  -1 if there are too many addresses. */
static int join(struct flow *f, uint64_t pc, const struct fstate *st, struct fpc **at)
{
	for (unsigned i = 0; i < f->npc; i++) {
		struct fpc *p = &f->pcs[i];
		if (p->pc != pc)
			continue;
		*at = p;
		struct fstate n = p->st;
		n.regs |= st->regs;
		n.flags |= st->flags;
		for (unsigned k = 0; k < st->nslot; k++) {
			bool have = false;
			for (unsigned j = 0; j < n.nslot && !have; j++)
				have = n.slot[j].base == st->slot[k].base &&
				       n.slot[j].off == st->slot[k].off &&
				       n.slot[j].size == st->slot[k].size;
			if (have)
				continue;
			if (n.nslot == FLOW_SLOTS)
				return -1;
			n.slot[n.nslot++] = st->slot[k];
		}
		if (!memcmp(&n.regs, &p->st.regs, sizeof n.regs) && n.flags == p->st.flags &&
		    n.nslot == p->st.nslot)
			return 0;
		p->st = n;
		return 1;
	}
	if (f->npc == FLOW_PCS)
		return -1;
	*at = &f->pcs[f->npc++];
	(*at)->pc = pc;
	(*at)->st = *st;
	(*at)->queued = false;
	return 1;
}

static cs_insn *decode(struct flow *f, uint64_t pc, cs_insn *buf)
{
	if (pc < f->lo || pc >= f->hi)
		return NULL;
	const uint8_t *code = f->code + (pc - f->lo);
	size_t size = (size_t)(f->hi - pc);
	uint64_t addr = pc;
	return cs_disasm_iter(f->cs, &code, &size, &addr, buf) ? buf : NULL;
}

/* Follows the value from after the load at pc with state st. */
static enum sym_use walk(struct flow *f, uint64_t start, const struct fstate *st)
{
	cs_insn *in = cs_malloc(f->cs);
	struct fpc *at;
	enum sym_use rc = SYM_USE_DATA;
	if (!in)
		return SYM_USE_UNKNOWN;
	if (join(f, start, st, &at) < 0) {
		cs_free(in, 1);
		return SYM_USE_UNKNOWN;
	}
	at->queued = true;
	for (unsigned budget = 0; rc == SYM_USE_DATA;) {
		struct fpc *p = NULL;
		for (unsigned i = 0; i < f->npc && !p; i++)
			if (f->pcs[i].queued)
				p = &f->pcs[i];
		if (!p)
			break;
		p->queued = false;
		struct fstate s = p->st;
		uint64_t pc = p->pc;
		while (rc == SYM_USE_DATA && !state_empty(&s)) {
			if (pc >= f->hi)
				break; /* past the end: after a call that does not return */
			if (++budget > FLOW_INSNS || !decode(f, pc, in)) {
				rc = SYM_USE_UNKNOWN;
				break;
			}
			int r = transfer(f, in, &s, false);
			if (r == F_STEERS)
				rc = SYM_USE_STEERS;
			else if (r == F_UNKNOWN)
				rc = SYM_USE_UNKNOWN;
			if (r != F_OK)
				break;
			uint64_t next = in->address + in->size;
			if (!in_group(in, CS_GRP_JUMP)) {
				pc = next;
				continue;
			}
			/* a direct jump: its target, and the next instruction
			 * unless it always jumps */
			const cs_x86_op *op = &in->detail->x86.operands[0];
			if (in->detail->x86.op_count != 1 || op->type != X86_OP_IMM) {
				rc = SYM_USE_UNKNOWN; /* through a register or memory */
				break;
			}
			uint64_t target = (uint64_t)op->imm;
			bool always = in->id == X86_INS_JMP;
			if (target < f->lo || target >= f->hi) {
				rc = SYM_USE_UNKNOWN; /* a tail call */
				break;
			}
			int j = join(f, target, &s, &at);
			if (j < 0) {
				rc = SYM_USE_UNKNOWN;
				break;
			}
			if (j > 0)
				at->queued = true;
			if (always)
				break;
			pc = next;
		}
	}
	cs_free(in, 1);
	return rc;
}

/* Does the function around pc return a value?  Only DWARF can say no (a
 * void function leaves whatever it last computed in rax). */
static bool returns_value(struct sym_mod *m, uint64_t pc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = sym_mod_addrdie(m, pc, &bias), *scopes = NULL;
	if (!cu)
		return true;
	int n = dwarf_getscopes(cu, pc - bias, &scopes);
	bool ret = true;
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			ret = dwarf_hasattr_integrate(&scopes[i], DW_AT_type);
			break;
		}
	free(scopes);
	return ret;
}

/* The function around runtime address pc, its code. */
bool sym_function_code(struct sym_mod *m, uint64_t pc, uint64_t *lo, uint64_t *hi,
		       const uint8_t **code)
{
	GElf_Sym sym;
	GElf_Off off;
	GElf_Addr bias;
	if (!dwfl_module_addrinfo(m->dm, pc, &off, &sym, NULL, NULL, NULL) || !sym.st_size ||
	    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
		return false;
	*lo = pc - off;
	*hi = *lo + sym.st_size;
	Elf *elf = dwfl_module_getelf(m->dm, &bias);
	if (!elf)
		return false;
	struct sym_elf_sec sec;
	if (!sym_elf_section(elf, NULL, *lo - bias, *hi - bias, &sec))
		return false;
	*code = sec.bytes + (*lo - bias - sec.addr);
	return true;
}

/* Does in read addr: rip-relative at that address, or through a register
 * other than the frame's (taken to be it)? */
static bool reads_addr(const cs_insn *in, uint64_t addr)
{
	const cs_x86 *x = &in->detail->x86;
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM || !(op->access & CS_AC_READ) || in->id == X86_INS_LEA)
			continue;
		if (op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID) {
			if (in->address + in->size + (uint64_t)op->mem.disp == addr)
				return true;
		} else if (!is_stack(op)) {
			return true;
		}
	}
	return false;
}

/* The read: with after, the instruction that ends at pc, if it reads
 * addr; else the first load of addr in the instructions from pc on (an
 * annotation's probe comes right before the access).  Its address, or 0. */
static uint64_t find_load(struct flow *f, uint64_t pc, uint64_t addr, bool after, cs_insn *in)
{
	if (after) {
		for (uint64_t p = f->lo; p < pc && decode(f, p, in); p = in->address + in->size)
			if (in->address + in->size == pc)
				return reads_addr(in, addr) ? in->address : 0;
		return 0;
	}
	for (int n = 0; n < FLOW_FIND && decode(f, pc, in); n++, pc = in->address + in->size) {
		if (in_group(in, CS_GRP_JUMP) || in_group(in, CS_GRP_CALL) || in_group(in, CS_GRP_RET))
			return 0;
		if (reads_addr(in, addr))
			return in->address;
	}
	return 0;
}

int sym_value_use(struct sym *s, unsigned mod, uint64_t off, uint64_t addr, int after,
		  struct sym_use_info *out)
{
	memset(out, 0, sizeof *out);
	out->use = SYM_USE_UNKNOWN;
	struct sym_mod *m = sym_mod_by_id(s, mod);
	if (!m || !sym_mod_ready(m))
		return -1;
	struct flow *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	uint64_t pc = m->base + off, load;
	cs_insn *in = NULL;
	f->out = out;
	f->m = m;
	if (!sym_function_code(m, pc, &f->lo, &f->hi, &f->code) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &f->cs) != CS_ERR_OK) {
		free(f);
		return -1;
	}
	cs_option(f->cs, CS_OPT_DETAIL, CS_OPT_ON);
	f->returns = returns_value(m, pc);
	in = cs_malloc(f->cs);
	/* does the function take the frame's address anywhere? */
	for (uint64_t p = f->lo; in && p < f->hi && decode(f, p, in); p = in->address + in->size)
		for (uint8_t i = 0; i < in->detail->x86.op_count; i++) {
			const cs_x86_op *op = &in->detail->x86.operands[i];
			if (in->id == X86_INS_LEA && op->type == X86_OP_MEM && is_stack(op))
				f->frame_escapes = true;
			if (in->id == X86_INS_MOV && i == 1 && op->type == X86_OP_REG &&
			    (canon(op->reg) == R_SP || canon(op->reg) == R_BP) &&
			    !(canon(in->detail->x86.operands[0].reg) == R_BP))
				f->frame_escapes = true;
		}
	if (in && (load = find_load(f, pc, addr, after, in)) != 0 && decode(f, load, in)) {
		struct fstate st;
		memset(&st, 0, sizeof st);
		int r = transfer(f, in, &st, true);
		if (r == F_STEERS)
			out->use = SYM_USE_STEERS;
		else if (r == F_OK)
			out->use = walk(f, in->address + in->size, &st);
	}
	if (out->use != SYM_USE_DATA)
		out->nstore = 0;
	if (in)
		cs_free(in, 1);
	cs_close(&f->cs);
	free(f);
	return 0;
}

bool sym_read_steers(void *ctx, uint16_t mod, uint64_t off, uint64_t addr, bool watched,
		     uint64_t *stores, unsigned max, unsigned *nstores)
{
	struct sym_use_info u;
	*nstores = 0;
	if (mod == SYM_MOD_NONE || sym_value_use(ctx, mod, off, addr, watched, &u) < 0 ||
	    u.use != SYM_USE_DATA || u.nstore > max)
		return true;
	memcpy(stores, u.store, u.nstore * sizeof *stores);
	*nstores = u.nstore;
	return false;
}

/* ---- locked updates whose result nothing reads (sym_rmw_blind) */

#define BLIND_INSNS 64 /* instructions after the update followed, at most */
#define BLIND_JUMPS 4  /* unconditional jumps followed, at most */

#define FLAGS_TESTED                                                                         \
	(X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF | X86_EFLAGS_TEST_PF | \
	 X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_AF)

/* Does in give every status flag a value of its own (none survives)? */
static bool sets_all_flags(const cs_insn *in)
{
	uint64_t e = in->detail->x86.eflags;
	static const uint64_t each[6] = {
		X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_OF | X86_EFLAGS_SET_OF | X86_EFLAGS_UNDEFINED_OF,
		X86_EFLAGS_MODIFY_SF | X86_EFLAGS_RESET_SF | X86_EFLAGS_SET_SF | X86_EFLAGS_UNDEFINED_SF,
		X86_EFLAGS_MODIFY_ZF | X86_EFLAGS_RESET_ZF | X86_EFLAGS_SET_ZF | X86_EFLAGS_UNDEFINED_ZF,
		X86_EFLAGS_MODIFY_PF | X86_EFLAGS_RESET_PF | X86_EFLAGS_SET_PF | X86_EFLAGS_UNDEFINED_PF,
		X86_EFLAGS_MODIFY_CF | X86_EFLAGS_RESET_CF | X86_EFLAGS_SET_CF | X86_EFLAGS_UNDEFINED_CF,
		X86_EFLAGS_MODIFY_AF | X86_EFLAGS_RESET_AF | X86_EFLAGS_SET_AF | X86_EFLAGS_UNDEFINED_AF,
	};
	for (int i = 0; i < 6; i++)
		if (!(e & each[i]))
			return false;
	return true;
}

/* Instructions that neither read nor write the status flags (capstone
 * leaves their eflags 0, as it does for some that read them: an
 * instruction with no flag information outside this list is unknown). */
static bool flag_neutral(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_MOV: case X86_INS_MOVABS: case X86_INS_MOVZX: case X86_INS_MOVSX:
	case X86_INS_MOVSXD: case X86_INS_LEA: case X86_INS_PUSH: case X86_INS_POP:
	case X86_INS_NOP: case X86_INS_ENDBR64: case X86_INS_MOVD: case X86_INS_MOVQ:
	case X86_INS_MOVAPS: case X86_INS_MOVUPS: case X86_INS_MOVDQA: case X86_INS_MOVDQU:
	case X86_INS_XCHG: case X86_INS_LEAVE:
		return true;
	default:
		return false;
	}
}

/* The commutation class of a locked update of memory that loads nothing
 * into a register: 1 add/sub/inc/dec, 2 or, 3 and, 4 xor; 0 for others. */
static int update_class(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	if (x->prefix[0] != X86_PREFIX_LOCK || x->op_count < 1 || x->operands[0].type != X86_OP_MEM)
		return 0;
	if (x->op_count == 2 && x->operands[1].type == X86_OP_MEM)
		return 0;
	switch (in->id) {
	case X86_INS_ADD: case X86_INS_SUB: case X86_INS_INC: case X86_INS_DEC:
		return 1;
	case X86_INS_OR:
		return 2;
	case X86_INS_AND:
		return 3;
	case X86_INS_XOR:
		return 4;
	default:
		return 0;
	}
}

/* The code around runtime address pc: its function's (symbol table), or
 * the whole code section holding it (a stripped file). */
static bool code_around(struct sym_mod *m, uint64_t pc, uint64_t *lo, uint64_t *hi,
			const uint8_t **code)
{
	if (sym_function_code(m, pc, lo, hi, code))
		return true;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->dm, &bias);
	struct sym_elf_sec sec;
	if (!elf || pc < bias || !sym_elf_section(elf, NULL, pc - bias, pc - bias + 1, &sec))
		return false;
	*lo = sec.addr + bias;
	*hi = *lo + sec.size;
	*code = sec.bytes;
	return true;
}

/* The locked update at pc (watched: the one that ends at pc), into in. */
static bool find_update(struct flow *f, uint64_t pc, bool watched, cs_insn *in)
{
	if (!watched)
		return decode(f, pc, in) && update_class(in);
	for (uint64_t n = 2; n <= 15 && n <= pc - f->lo; n++)
		if (f->code[pc - n - f->lo] == 0xf0 && decode(f, pc - n, in) &&
		    in->address + in->size == pc && update_class(in))
			return true;
	return false;
}

int sym_rmw_blind(void *ctx, uint16_t mod, uint64_t off, bool watched)
{
	struct sym_mod *m = mod == SYM_MOD_NONE ? NULL : sym_mod_by_id(ctx, mod);
	if (!m || !sym_mod_ready(m))
		return 0;
	struct flow *f = calloc(1, sizeof *f);
	if (!f)
		return 0;
	uint64_t pc = m->base + off;
	int cls = 0;
	cs_insn *in = NULL;
	if (!code_around(m, pc, &f->lo, &f->hi, &f->code) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &f->cs) != CS_ERR_OK) {
		free(f);
		return 0;
	}
	cs_option(f->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(in = cs_malloc(f->cs)) || !find_update(f, pc, watched, in))
		goto out;
	int c = update_class(in);
	/* the flags it sets are its only result: dead if overwritten, or at
	 * a call or a return (no compiled caller or callee reads them) */
	uint64_t at = in->address + in->size;
	unsigned jumps = 0;
	for (int n = 0; n < BLIND_INSNS && decode(f, at, in); n++) {
		const cs_x86 *x = &in->detail->x86;
		if (in->id == X86_INS_CALL || in->id == X86_INS_RET) {
			cls = c;
			break;
		}
		if (in->id == X86_INS_JMP) {
			if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM || ++jumps > BLIND_JUMPS)
				break;
			at = (uint64_t)x->operands[0].imm;
			continue;
		}
		if ((x->eflags & FLAGS_TESTED) || in_group(in, CS_GRP_JUMP) ||
		    in_group(in, CS_GRP_INT) || in_group(in, CS_GRP_IRET))
			break; /* read, or control goes where we do not follow */
		if (sets_all_flags(in)) {
			cls = c;
			break;
		}
		if (!x->eflags && !flag_neutral(in))
			break;
		at = in->address + in->size;
	}
out:
	if (in)
		cs_free(in, 1);
	cs_close(&f->cs);
	free(f);
	return cls;
}
