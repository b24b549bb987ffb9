/*
 * Names of stack objects: "main's stack: e.pendingIo".
 *
 * An address on a thread's stack has no symbol; its frame's DWARF does
 * name it, once the frame's base is known.  The frame base is taken from
 * an access the function made itself through its frame: the instruction
 * at the site has a memory operand based on rsp or rbp (decode/), so the
 * register's value at that moment is ea - disp; the call frame's CFA rule
 * at the site (.eh_frame) turns it into the CFA, and the function's
 * DW_AT_frame_base (DW_OP_call_frame_cfa, or a register + offset) into
 * its frame base.  Variables whose location at the site is DW_OP_fbreg
 * then have absolute addresses, and any address inside one (even one
 * another thread touched through a pointer) is named by its type.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "sym_int.h"

/* DWARF register numbers of rbp and rsp (x86-64 psABI). */
#define DW_RBP 6
#define DW_RSP 7

/* The DWARF register and offset of a one-operation "register + offset"
 * expression, or -1. */
static int breg(const Dwarf_Op *ops, size_t n, int *reg, int64_t *off)
{
	if (n != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (int)ops[0].number;
		*off = (int64_t)ops[0].number2;
		return 0;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
		return 0;
	}
	return -1;
}

static int dw_reg(int dec_reg)
{
	return dec_reg == DEC_RSP ? DW_RSP : dec_reg == DEC_RBP ? DW_RBP : -1;
}

/* The CFA at pc, given that DWARF register reg held val there. */
static int cfa_at(struct sym_mod *m, uint64_t pc, int reg, uint64_t val, uint64_t *cfa)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(m->dm, &bias);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(m->dm, &bias);
	Dwarf_Frame *frame = NULL;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
		return -1;
	Dwarf_Op *ops;
	size_t nops;
	int r, rc = -1;
	int64_t off;
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && breg(ops, nops, &r, &off) == 0 && r == reg) {
		*cfa = val + (uint64_t)off;
		rc = 0;
	}
	free(frame);
	return rc;
}

/* A variable or parameter of a scope placed at fb + N at pc. */
struct frame_var {
	Dwarf_Die die, type;
	uint64_t lo, size;
};

static int var_place(Dwarf_Die *die, Dwarf_Addr pc, uint64_t fb, struct frame_var *out)
{
	Dwarf_Attribute a;
	Dwarf_Op *expr;
	size_t len;
	Dwarf_Word size;
	int tag = dwarf_tag(die);
	if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) ||
	    !dwarf_attr_integrate(die, DW_AT_location, &a) ||
	    dwarf_getlocation_addr(&a, pc, &expr, &len, 1) != 1 || len != 1 ||
	    expr[0].atom != DW_OP_fbreg || !dwarf_attr_integrate(die, DW_AT_type, &a) ||
	    !dwarf_formref_die(&a, &out->type) || dwarf_aggregate_size(&out->type, &size) != 0)
		return -1;
	out->die = *die;
	out->lo = fb + (uint64_t)(int64_t)expr[0].number;
	out->size = size;
	return 0;
}

const char *sym_stack_name(struct sym *s, unsigned mod, uint64_t off, uint64_t ea,
			   uint64_t addr, char *buf, size_t len)
{
	struct sym_mod *m = sym_mod_by_id(s, mod);
	if (!m || !sym_mod_ready(m))
		return NULL;
	uint64_t pc = m->base + off, lo, hi;
	const uint8_t *code;
	struct dec *d = dec_new();
	struct dec_insn in;
	if (!d)
		return NULL;
	int ok = sym_function_code(m, pc, &lo, &hi, &code) &&
		 dec_insn(d, code + (pc - lo), (size_t)(hi - pc), pc, &in) > 0;
	dec_free(d);
	/* the operand that made ea, through the frame's register */
	int reg = -1;
	uint64_t val = 0;
	for (unsigned k = 0; ok && k < in.nmem && reg < 0; k++) {
		const struct dec_mem *mm = &in.mem[k];
		if (mm->index == DEC_NOREG && mm->seg == DEC_SEG_NONE && dw_reg(mm->base) >= 0) {
			reg = dw_reg(mm->base);
			val = ea - (uint64_t)mm->disp;
		}
	}
	Dwarf_Addr cubias;
	Dwarf_Die *cu = reg >= 0 ? sym_mod_addrdie(m, pc, &cubias) : NULL;
	Dwarf_Die *scopes = NULL;
	int nscopes = cu ? dwarf_getscopes(cu, pc - cubias, &scopes) : 0;
	/* the frame: the innermost subprogram (inlined code lives in it) */
	int sub = -1;
	for (int i = 0; i < nscopes && sub < 0; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			sub = i;
	const char *ret = NULL;
	Dwarf_Attribute a;
	Dwarf_Op *fbx;
	size_t fblen;
	uint64_t fb = 0, cfa;
	int fbreg;
	int64_t fboff;
	if (sub < 0 || !dwarf_attr_integrate(&scopes[sub], DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, pc - cubias, &fbx, &fblen, 1) != 1)
		goto out;
	if (fblen == 1 && fbx[0].atom == DW_OP_call_frame_cfa) {
		if (cfa_at(m, pc, reg, val, &cfa) < 0)
			goto out;
		fb = cfa;
	} else if (breg(fbx, fblen, &fbreg, &fboff) == 0 && fbreg == reg) {
		fb = val + (uint64_t)fboff;
	} else if (fblen == 1 && fbx[0].atom >= DW_OP_reg0 && fbx[0].atom <= DW_OP_reg31 &&
		   (int)(fbx[0].atom - DW_OP_reg0) == reg) {
		fb = val; /* the register itself (clang: DW_OP_reg6, rbp) */
	} else {
		goto out;
	}
	for (int i = 0; i <= sub && !ret; i++) {
		Dwarf_Die c;
		if (dwarf_child(&scopes[i], &c) != 0)
			continue;
		do {
			struct frame_var v;
			if (var_place(&c, pc - cubias, fb, &v) < 0 || addr - v.lo >= (v.size ? v.size : 1))
				continue;
			const char *vname = dwarf_diename(&v.die);
			const char *fname = dwarf_diename(&scopes[sub]);
			if (!vname)
				continue;
			struct sym_strbuf b = { buf, len, 0 };
			sym_strbuf_add(&b, "%s's stack: %s", fname ? fname : "a function", vname);
			sym_type_describe(&v.type, addr - v.lo, &b);
			ret = buf;
			break;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
out:
	free(scopes);
	return ret;
}
