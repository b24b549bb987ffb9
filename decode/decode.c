/*
 * x86-64 memory operands from capstone's detail (see decode.h).
 *
 * capstone gives each operand its read/write access; the exceptions are
 * fixed here from the instruction itself: string instructions (their
 * operands are implicit, rsi/rdi), the atomic read-modify-writes (lock
 * prefix, xchg with memory, cmpxchg, xadd) and the memory operands that
 * are not accesses (lea, nop, prefetch, cache-line flushes).
 */
#include "decode.h"

#include <capstone/capstone.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dec {
	csh cs;
};

struct dec *dec_new(void)
{
	struct dec *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		free(d);
		return NULL;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	return d;
}

void dec_free(struct dec *d)
{
	if (!d)
		return;
	cs_close(&d->cs);
	free(d);
}

/* capstone register -> decoder register (64- and 32-bit names). */
static int map_reg(x86_reg r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_EAX: return DEC_RAX;
	case X86_REG_RCX: case X86_REG_ECX: return DEC_RCX;
	case X86_REG_RDX: case X86_REG_EDX: return DEC_RDX;
	case X86_REG_RBX: case X86_REG_EBX: return DEC_RBX;
	case X86_REG_RSP: case X86_REG_ESP: return DEC_RSP;
	case X86_REG_RBP: case X86_REG_EBP: return DEC_RBP;
	case X86_REG_RSI: case X86_REG_ESI: return DEC_RSI;
	case X86_REG_RDI: case X86_REG_EDI: return DEC_RDI;
	case X86_REG_R8: case X86_REG_R8D: return DEC_R8;
	case X86_REG_R9: case X86_REG_R9D: return DEC_R9;
	case X86_REG_R10: case X86_REG_R10D: return DEC_R10;
	case X86_REG_R11: case X86_REG_R11D: return DEC_R11;
	case X86_REG_R12: case X86_REG_R12D: return DEC_R12;
	case X86_REG_R13: case X86_REG_R13D: return DEC_R13;
	case X86_REG_R14: case X86_REG_R14D: return DEC_R14;
	case X86_REG_R15: case X86_REG_R15D: return DEC_R15;
	case X86_REG_RIP: case X86_REG_EIP: return DEC_RIP;
	case X86_REG_INVALID: return DEC_NOREG;
	default: return -2; /* a vector index (VSIB) or something odd */
	}
}

uint64_t dec_reg_value(const struct user_regs_struct *r, int reg)
{
	switch (reg) {
	case DEC_RAX: return r->rax;
	case DEC_RCX: return r->rcx;
	case DEC_RDX: return r->rdx;
	case DEC_RBX: return r->rbx;
	case DEC_RSP: return r->rsp;
	case DEC_RBP: return r->rbp;
	case DEC_RSI: return r->rsi;
	case DEC_RDI: return r->rdi;
	case DEC_R8: return r->r8;
	case DEC_R9: return r->r9;
	case DEC_R10: return r->r10;
	case DEC_R11: return r->r11;
	case DEC_R12: return r->r12;
	case DEC_R13: return r->r13;
	case DEC_R14: return r->r14;
	case DEC_R15: return r->r15;
	case DEC_RIP: return r->rip;
	default: return 0;
	}
}

uint64_t dec_ea(const struct dec_mem *m, const struct user_regs_struct *r)
{
	uint64_t a;
	if (m->base == DEC_RIP)
		return m->rip_target;
	a = (uint64_t)m->disp;
	if (m->base != DEC_NOREG)
		a += dec_reg_value(r, m->base);
	if (m->index != DEC_NOREG)
		a += dec_reg_value(r, m->index) * m->scale;
	if (m->addr32)
		a &= 0xffffffffu;
	if (m->seg == DEC_SEG_FS)
		a += r->fs_base;
	else if (m->seg == DEC_SEG_GS)
		a += r->gs_base;
	return a;
}

uint64_t dec_extent(const struct dec_mem *m, const struct user_regs_struct *r, uint64_t cap)
{
	if (!(m->flags & DEC_F_REP))
		return m->size;
	uint64_t n = m->addr32 ? (r->rcx & 0xffffffffu) : r->rcx;
	if (n > cap / (m->size ? m->size : 1))
		return cap;
	return n * m->size;
}

static bool is_no_access(unsigned id)
{
	switch (id) {
	case X86_INS_LEA: case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH: case X86_INS_CLFLUSHOPT: case X86_INS_CLWB:
		return true;
	default:
		return false;
	}
}

/* Moves and extracts: capstone 4 marks some vector stores as reads
 * (movq %xmm1,(%rax)); for these the operand's position tells: the
 * destination (operand 0 in Intel order) is written, a source is read. */
static bool is_move(const char *mn)
{
	static const char *const pre[] = { "mov", "vmov", "pextr", "vpextr", "extractps",
					   "vextract", "movnt", "vmovnt" };
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
		if (!strncmp(mn, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static bool is_stack_op(unsigned id)
{
	switch (id) {
	case X86_INS_PUSH: case X86_INS_POP: case X86_INS_PUSHFQ: case X86_INS_POPFQ:
	case X86_INS_CALL: case X86_INS_RET: case X86_INS_ENTER: case X86_INS_LEAVE:
		return true;
	default:
		return false;
	}
}

/* One-byte string opcodes a4..af: their operands are [rsi] and/or [rdi]. */
static bool string_op(const cs_x86 *x, struct dec_insn *out)
{
	uint8_t op = x->opcode[0];
	if (x->opcode[1] || op < 0xa4 || op > 0xaf || op == 0xa8 || op == 0xa9)
		return false; /* a8/a9 are test al/eax, imm */
	uint16_t size = 1;
	if (op & 1)
		size = (x->rex & 8) ? 8 : x->prefix[2] == 0x66 ? 2 : 4;
	bool rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	bool a32 = x->prefix[3] == 0x67;
	struct dec_mem src = { .base = DEC_RSI, .index = DEC_NOREG, .scale = 1, .size = size,
			       .kind = DEC_READ, .addr32 = a32 };
	struct dec_mem dst = src;
	dst.base = DEC_RDI;
	uint8_t fl = DEC_F_STRING | (rep ? DEC_F_REP : 0);
	src.flags = dst.flags = fl;
	switch (op & ~1) {
	case 0xa4: /* movs: read [rsi], write [rdi] */
		dst.kind = DEC_WRITE;
		out->mem[out->nmem++] = src;
		out->mem[out->nmem++] = dst;
		break;
	case 0xa6: /* cmps: read both */
		out->mem[out->nmem++] = src;
		out->mem[out->nmem++] = dst;
		break;
	case 0xaa: /* stos: write [rdi] */
		dst.kind = DEC_WRITE;
		out->mem[out->nmem++] = dst;
		break;
	case 0xac: /* lods: read [rsi] */
		out->mem[out->nmem++] = src;
		break;
	case 0xae: /* scas: read [rdi] */
		out->mem[out->nmem++] = dst;
		break;
	}
	return true;
}

/* Does the instruction copy rsp or rbp into another register? */
static void frame_copy(const cs_insn *in, const cs_x86 *x, struct dec_insn *out)
{
	if (in->id == X86_INS_LEA && x->op_count == 2 && x->operands[1].type == X86_OP_MEM) {
		x86_reg b = x->operands[1].mem.base;
		if (b == X86_REG_RSP || b == X86_REG_RBP) {
			out->flags |= DEC_F_FRAMEADDR;
			out->frame_src = (int8_t)map_reg(b);
		}
		return;
	}
	if (in->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG) {
		x86_reg s = x->operands[1].reg, dreg = x->operands[0].reg;
		if (s == X86_REG_RSP && dreg == X86_REG_RBP)
			out->flags |= DEC_F_FPSETUP;
		else if (s == X86_REG_RSP || s == X86_REG_RBP) {
			out->flags |= DEC_F_FRAMEADDR;
			out->frame_src = (int8_t)map_reg(s);
		}
	}
}

/* mov %r64,mem: what a pointer's store is (its value may be an address
 * into the thread's own stack: tracer/access.c, stack escape). */
static void store_source(const cs_insn *in, const cs_x86 *x, struct dec_insn *out)
{
	if (in->id != X86_INS_MOV || x->op_count != 2 || x->operands[0].type != X86_OP_MEM ||
	    x->operands[0].size != 8 || x->operands[1].type != X86_OP_REG)
		return;
	int r = map_reg(x->operands[1].reg);
	if (r >= DEC_RAX && r <= DEC_R15)
		out->store_src = (int8_t)r;
}

static void fill(const cs_insn *in, struct dec_insn *out)
{
	const cs_detail *dt = in->detail;
	const cs_x86 *x = &dt->x86;
	for (int g = 0; g < dt->groups_count; g++) {
		uint8_t gr = dt->groups[g];
		if (gr == CS_GRP_JUMP || gr == CS_GRP_CALL || gr == CS_GRP_RET ||
		    gr == CS_GRP_INT || gr == CS_GRP_IRET || gr == CS_GRP_BRANCH_RELATIVE)
			out->flags |= DEC_F_BRANCH;
	}
	if (out->flags & DEC_F_BRANCH) {
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			out->target = (uint64_t)x->operands[0].imm;
		else if (in->id == X86_INS_JMP || in->id == X86_INS_LJMP)
			out->flags |= DEC_F_INDIRECT;
	}
	if (is_stack_op(in->id))
		out->flags |= DEC_F_STACKOP;
	frame_copy(in, x, out);
	store_source(in, x, out);
	if (string_op(x, out))
		return;
	bool lock = x->prefix[0] == X86_PREFIX_LOCK;
	bool has_mem = false;
	for (int i = 0; i < x->op_count && out->nmem < 2; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		has_mem = true;
		if (is_no_access(in->id))
			continue;
		struct dec_mem m;
		memset(&m, 0, sizeof m);
		int b = map_reg(op->mem.base), ix = map_reg(op->mem.index);
		if (b == -2 || ix == -2) {
			out->flags |= DEC_F_VSIB;
			continue;
		}
		m.base = (int8_t)b;
		m.index = (int8_t)ix;
		m.scale = (uint8_t)(op->mem.scale > 0 ? op->mem.scale : 1);
		m.disp = op->mem.disp;
		m.seg = op->mem.segment == X86_REG_FS ? DEC_SEG_FS :
			op->mem.segment == X86_REG_GS ? DEC_SEG_GS : DEC_SEG_NONE;
		m.addr32 = x->prefix[3] == 0x67;
		if (m.base == DEC_RIP)
			m.rip_target = in->address + in->size + (uint64_t)m.disp;
		m.size = op->size;
		switch (in->id) {
		case X86_INS_CMPXCHG: case X86_INS_CMPXCHG8B: case X86_INS_CMPXCHG16B:
			m.kind = DEC_RMW;
			m.flags |= DEC_F_CAS | (lock ? DEC_F_ATOMIC : 0);
			break;
		case X86_INS_XCHG: /* with a memory operand: locked by the CPU */
			m.kind = DEC_RMW;
			m.flags |= DEC_F_ATOMIC;
			break;
		case X86_INS_XADD:
			m.kind = DEC_RMW;
			m.flags |= lock ? DEC_F_ATOMIC : 0;
			break;
		default:
			if (lock) {
				m.kind = DEC_RMW;
				m.flags |= DEC_F_ATOMIC;
			} else if (is_move(in->mnemonic)) {
				m.kind = i == 0 ? DEC_WRITE : DEC_READ;
			} else {
				m.kind = (uint8_t)(((op->access & CS_AC_READ) ? DEC_READ : 0) |
						   ((op->access & CS_AC_WRITE) ? DEC_WRITE : 0));
				if (!m.kind) /* capstone does not say: a load is the safe side */
					m.kind = DEC_READ;
			}
			break;
		}
		out->mem[out->nmem++] = m;
	}
	if (has_mem && !out->nmem && is_no_access(in->id))
		out->flags |= DEC_F_NOACCESS;
}

size_t dec_cover(const struct dec_insn *ins, size_t n, size_t i, const bool *site, size_t need,
		 size_t max)
{
	if (i >= n)
		return 0;
	size_t cover = ins[i].len;
	for (size_t j = i + 1, k = 1; cover < need; j++, k++) {
		if (j >= n || k == 4 || ins[j].addr != ins[i].addr + cover || site[j] ||
		    ins[j].flags & DEC_F_BRANCH)
			return 0;
		cover += ins[j].len;
	}
	return cover <= max ? cover : 0;
}

bool dec_lands_inside(const uint64_t *targets, size_t n, uint64_t addr, size_t cover)
{
	size_t lo = 0, hi = n; /* the first target above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (targets[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && targets[lo] < addr + cover;
}

bool dec_same_function(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");
	return la == lb && !strncmp(a, b, la);
}

int dec_insn(struct dec *d, const uint8_t *code, size_t len, uint64_t addr, struct dec_insn *out)
{
	cs_insn *in;
	memset(out, 0, sizeof *out);
	out->addr = addr;
	out->frame_src = DEC_NOREG;
	out->store_src = DEC_NOREG;
	size_t n = cs_disasm(d->cs, code, len, addr, 1, &in);
	if (n != 1) {
		if (n)
			cs_free(in, n);
		return 0;
	}
	out->len = (uint8_t)in->size;
	snprintf(out->text, sizeof out->text, "%.31s%s%.46s", in->mnemonic, in->op_str[0] ? " " : "",
		 in->op_str);
	fill(in, out);
	cs_free(in, n);
	return out->len;
}
