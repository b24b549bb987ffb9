#include "bpt.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "ptrace_util.h"

void bpt_init(struct bpt_table *bt, pid_t pid, int memfd, uint64_t scratch)
{
	memset(bt, 0, sizeof *bt);
	bt->pid = pid;
	bt->memfd = memfd;
	bt->scratch = scratch;
	/* byte 0..15 of the scratch page are reserved for trampolines */
	bt->scratch_used = 16;
}

void bpt_release(struct bpt_table *bt)
{
	free(bt->slots);
	bt->slots = NULL;
	bt->cap = bt->n = 0;
	free(bt->traps);
	bt->traps = NULL;
	bt->tcap = bt->tn = 0;
	free(bt->retired);
	bt->retired = NULL;
	bt->nretired = bt->retcap = 0;
}

static size_t hash_addr(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

static struct bpt *lookup(struct bpt_table *bt, uint64_t addr, bool for_insert)
{
	if (!bt->cap)
		return NULL;
	size_t mask = bt->cap - 1;
	for (size_t i = hash_addr(addr) & mask;; i = (i + 1) & mask) {
		struct bpt *b = &bt->slots[i];
		if (!b->used && !b->addr)
			return for_insert ? b : NULL;
		if (b->used && b->addr == addr)
			return b;
		if (!b->used && for_insert)
			return b;
	}
}

struct bpt *bpt_find(struct bpt_table *bt, uint64_t addr)
{
	return lookup(bt, addr, false);
}

/* ---- the jump form's traps: slot -> addr (open addressing, no removal:
 * a removed breakpoint leaves no int3 behind, so its entry is never hit) */

static struct bpt_trap *trap_slot(struct bpt_table *bt, uint64_t trap)
{
	size_t mask = bt->tcap - 1;
	for (size_t i = hash_addr(trap) & mask;; i = (i + 1) & mask)
		if (!bt->traps[i].trap || bt->traps[i].trap == trap)
			return &bt->traps[i];
}

static int trap_add(struct bpt_table *bt, uint64_t trap, uint64_t addr)
{
	if ((bt->tn + 1) * 2 > bt->tcap) {
		size_t ncap = bt->tcap ? bt->tcap * 2 : 64;
		struct bpt_trap *old = bt->traps;
		size_t ocap = bt->tcap;
		bt->traps = calloc(ncap, sizeof *bt->traps);
		if (!bt->traps) {
			bt->traps = old;
			return -1;
		}
		bt->tcap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].trap)
				*trap_slot(bt, old[i].trap) = old[i];
		free(old);
	}
	struct bpt_trap *t = trap_slot(bt, trap);
	if (!t->trap)
		bt->tn++;
	*t = (struct bpt_trap){ trap, addr };
	return 0;
}

struct bpt *bpt_at_trap(struct bpt_table *bt, uint64_t trap)
{
	struct bpt *b = bpt_find(bt, trap);
	if (b && !b->jump)
		return b;
	if (!bt->tcap)
		return NULL;
	struct bpt_trap *t = trap_slot(bt, trap);
	if (!t->trap)
		return NULL;
	b = bpt_find(bt, t->addr);
	return b && b->jump && b->slot == trap ? b : NULL;
}

static int grow(struct bpt_table *bt)
{
	if ((bt->n + 1) * 2 <= bt->cap)
		return 0;
	size_t ncap = bt->cap ? bt->cap * 2 : 64;
	struct bpt *old = bt->slots;
	size_t ocap = bt->cap;
	bt->slots = calloc(ncap, sizeof *bt->slots);
	if (!bt->slots) {
		bt->slots = old;
		return -1;
	}
	bt->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			*lookup(bt, old[i].addr, true) = old[i];
	free(old);
	return 0;
}

static struct bpt *add(struct bpt_table *bt, uint64_t addr, int kind, int data)
{
	if (bpt_find(bt, addr) || grow(bt) < 0)
		return NULL;
	struct bpt *b = lookup(bt, addr, true);
	memset(b, 0, sizeof *b);
	b->addr = addr;
	b->kind = kind;
	b->data = data;
	b->used = true;
	if (ptu_read(bt->pid, addr, b->orig, sizeof b->orig) < 0) {
		b->used = false;
		b->addr = 0;
		return NULL;
	}
	bt->n++;
	return b;
}

static int plant(struct bpt_table *bt, struct bpt *b)
{
	static const uint8_t int3 = 0xcc;
	return ptu_write(bt->memfd, b->addr, &int3, 1);
}

/* A jmp rel32 (e9) or jcc rel32 (0f 8x): the same branch from the slot,
 * its displacement re-aimed at the same target (free() begins `test
 * %rdi,%rdi; je ...`: covered together, its entry gets the jump form and
 * a caller gate, hooks.c).  Returns its length, 0 when code is no such
 * branch, -1 when the target is out of the slot's reach. */
static int relocate_rel32(const uint8_t *code, size_t len, uint64_t from, uint64_t slot_addr,
			  uint8_t *out, size_t *outlen)
{
	size_t op = len >= 5 && code[0] == 0xe9 ? 1 : len >= 6 && code[0] == 0x0f && (code[1] & 0xf0) == 0x80 ? 2 : 0;
	if (!op)
		return 0;
	int ilen = (int)op + 4;
	int32_t d;
	memcpy(&d, code + op, 4);
	int64_t target = (int64_t)(from + (uint64_t)ilen) + d;
	int64_t nd = target - (int64_t)(slot_addr + (uint64_t)ilen);
	if (nd != (int32_t)nd)
		return -1;
	int32_t n32 = (int32_t)nd;
	memcpy(out, code, op);
	memcpy(out + op, &n32, 4);
	/* jmp *0(%rip); .quad from+len: not taken, on after it */
	static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	uint64_t back = from + (uint64_t)ilen;
	memcpy(out + ilen, jmp, sizeof jmp);
	memcpy(out + ilen + sizeof jmp, &back, sizeof back);
	*outlen = (size_t)ilen + sizeof jmp + sizeof back;
	return ilen;
}

static int relocate(const uint8_t *code, size_t len, uint64_t from, uint64_t slot_addr,
		 uint8_t *out, size_t *outlen, char *why, size_t whylen)
{
	csh cs;
	cs_insn *insn;
	/* EVEX (AVX-512: 0x62 after the legacy prefixes, in 64-bit mode):
	 * capstone 4 decodes some of them to the wrong length, and a copy cut
	 * short is an illegal instruction (glibc's *_evex string functions) */
	size_t p = 0;
	while (p < len && (code[p] == 0x66 || code[p] == 0x67 || code[p] == 0xf0 || code[p] == 0xf2 ||
			   code[p] == 0xf3 || code[p] == 0x2e || code[p] == 0x36 || code[p] == 0x3e ||
			   code[p] == 0x26 || code[p] == 0x64 || code[p] == 0x65))
		p++;
	if (p < len && code[p] == 0x62) {
		snprintf(why, whylen, "an AVX-512 (EVEX) instruction is not relocated");
		return -1;
	}
	int rel = relocate_rel32(code, len, from, slot_addr, out, outlen);
	if (rel)
		return rel;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(why, whylen, "cannot start the disassembler");
		return -1;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	size_t n = cs_disasm(cs, code, len, from, 1, &insn);
	int ilen = -1;
	if (n != 1) {
		snprintf(why, whylen, "undecodable instruction");
		goto out;
	}
	cs_detail *d = insn->detail;
	for (int g = 0; g < d->groups_count; g++) {
		uint8_t gr = d->groups[g];
		if (gr == CS_GRP_JUMP || gr == CS_GRP_CALL || gr == CS_GRP_RET ||
		    gr == CS_GRP_INT || gr == CS_GRP_IRET || gr == CS_GRP_BRANCH_RELATIVE) {
			snprintf(why, whylen, "first instruction '%s %s' is a branch",
				 insn->mnemonic, insn->op_str);
			goto out;
		}
	}
	ilen = insn->size;
	memcpy(out, code, (size_t)ilen);
	cs_x86 *x = &d->x86;
	bool riprel = false;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			riprel = true;
	if (riprel) {
		/* Re-aim the displacement so it names the same absolute address
		 * from the slot. */
		int64_t target = (int64_t)(from + (uint64_t)ilen) + x->disp;
		int64_t ndisp = target - (int64_t)(slot_addr + (uint64_t)ilen);
		if (ndisp != (int32_t)ndisp || !x->encoding.disp_offset || x->encoding.disp_size != 4) {
			snprintf(why, whylen, "rip-relative '%s %s' cannot be relocated",
				 insn->mnemonic, insn->op_str);
			ilen = -1;
			goto out;
		}
		int32_t d32 = (int32_t)ndisp;
		memcpy(out + x->encoding.disp_offset, &d32, 4);
	}
	/* jmp *0(%rip); .quad from+len */
	static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	uint64_t back = from + (uint64_t)ilen;
	memcpy(out + ilen, jmp, sizeof jmp);
	memcpy(out + ilen + sizeof jmp, &back, sizeof back);
	*outlen = (size_t)ilen + sizeof jmp + sizeof back;
out:
	if (n)
		cs_free(insn, n);
	cs_close(&cs);
	return ilen;
}

/* A relocation as the shared cache keeps it (cache.c: an exploration's
 * runs plant the same breakpoints at the same places). */
struct reloc_blob {
	int32_t ilen;
	uint32_t outlen;
	uint8_t out[];
};

int bpt_relocate(const uint8_t *code, size_t len, uint64_t from, uint64_t slot_addr,
		 uint8_t *out, size_t *outlen, char *why, size_t whylen)
{
	size_t n = len < 16 ? len : 16; /* an instruction is at most 15 bytes */
	uint64_t key = cache_key(from * 0x9e3779b97f4a7c15ull ^ slot_addr ^ 0x7e1, code, n);
	size_t blen;
	const struct reloc_blob *b = cache_get_blob(key, &blen);
	if (b && blen >= sizeof *b && blen == sizeof *b + b->outlen) {
		memcpy(out, b->out, b->outlen);
		*outlen = b->outlen;
		return b->ilen;
	}
	int ilen = relocate(code, n, from, slot_addr, out, outlen, why, whylen);
	uint8_t buf[sizeof(struct reloc_blob) + 64];
	if (ilen > 0 && *outlen <= 64) {
		struct reloc_blob hdr = { ilen, (uint32_t)*outlen };
		memcpy(buf, &hdr, sizeof hdr);
		memcpy(buf + sizeof hdr, out, *outlen);
		cache_put_blob(key, buf, sizeof hdr + *outlen);
	}
	return ilen;
}

uint64_t bpt_scratch_alloc(struct bpt_table *bt, size_t size)
{
	size_t n = (size + BPT_SLOT_SIZE - 1) / BPT_SLOT_SIZE * BPT_SLOT_SIZE;
	if (!bt->scratch || bt->scratch_used + n > BPT_SCRATCH_SIZE)
		return 0;
	uint64_t at = bt->scratch + bt->scratch_used;
	bt->scratch_used += n;
	return at;
}

int bpt_insert(struct bpt_table *bt, uint64_t addr, int kind, int data,
	       char *why, size_t whylen)
{
	if (bt->scratch_used + BPT_SLOT_SIZE > BPT_SCRATCH_SIZE || !bt->scratch) {
		snprintf(why, whylen, "no room for an out-of-line slot");
		return -1;
	}
	if (bpt_insert_at(bt, addr, kind, data, bt->scratch + bt->scratch_used, why, whylen) < 0)
		return -1;
	bt->scratch_used += BPT_SLOT_SIZE;
	return 0;
}

int bpt_insert_jump(struct bpt_table *bt, uint64_t addr, int kind, int data,
		    char *why, size_t whylen)
{
	if (bt->scratch_used + BPT_SLOT_SIZE > BPT_SCRATCH_SIZE || !bt->scratch) {
		snprintf(why, whylen, "no room for an out-of-line slot");
		return -1;
	}
	if (bpt_insert_jump_at(bt, addr, kind, data, bt->scratch + bt->scratch_used, why, whylen) < 0)
		return -1;
	bt->scratch_used += BPT_SLOT_SIZE;
	return 0;
}

int bpt_insert_at(struct bpt_table *bt, uint64_t addr, int kind, int data, uint64_t saddr,
		  char *why, size_t whylen)
{
	struct bpt *b = add(bt, addr, kind, data);
	if (!b) {
		if (bpt_find(bt, addr))
			snprintf(why, whylen, "a breakpoint is there already (a sync hook) at 0x%llx",
				 (unsigned long long)addr);
		else
			snprintf(why, whylen, "cannot read code at 0x%llx", (unsigned long long)addr);
		return -1;
	}
	uint8_t slot[BPT_SLOT_SIZE];
	size_t slen;
	int ilen = bpt_relocate(b->orig, sizeof b->orig, addr, saddr, slot, &slen, why, whylen);
	if (ilen < 0 || ptu_write(bt->memfd, saddr, slot, slen) < 0 || plant(bt, b) < 0) {
		if (ilen >= 0)
			snprintf(why, whylen, "cannot write to the target");
		b->used = false;
		bt->n--;
		return -1;
	}
	b->len = (uint8_t)ilen;
	b->slot = saddr;
	b->trap = addr;
	return 0;
}

/* Leading prefixes of an instruction include lock (0xf0)?  Code may jump
 * past a lock prefix (`je 1f; lock; 1: cmpxchg`), into what the jump form
 * overwrites. */
static bool has_lock_prefix(const uint8_t *c, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (c[i]) {
		case 0xf0:
			return true;
		case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e: case 0x26:
		case 0x64: case 0x65: case 0x66: case 0x67:
			continue;
		default:
			return false;
		}
	}
	return false;
}

int bpt_insert_jump_at(struct bpt_table *bt, uint64_t addr, int kind, int data, uint64_t saddr,
		       char *why, size_t whylen)
{
	int64_t rel = (int64_t)saddr - (int64_t)(addr + BPT_JMP_LEN);
	uint8_t code[16];
	if (rel != (int32_t)rel || ptu_read(bt->pid, addr, code, sizeof code) < 0 ||
	    has_lock_prefix(code, sizeof code) || bpt_find(bt, addr))
		return bpt_insert_at(bt, addr, kind, data, saddr, why, whylen);
	/* slot: int3; the copy (relocated to run at slot + 1); jmp back */
	uint8_t slot[BPT_SLOT_SIZE];
	size_t slen;
	slot[0] = 0xcc;
	int ilen = bpt_relocate(code, sizeof code, addr, saddr + 1, slot + 1, &slen, why, whylen);
	if (ilen < BPT_JMP_LEN)
		return bpt_insert_at(bt, addr, kind, data, saddr, why, whylen);
	struct bpt *b = add(bt, addr, kind, data);
	if (!b || trap_add(bt, saddr, addr) < 0) {
		if (b) {
			b->used = false;
			bt->n--;
		}
		snprintf(why, whylen, "cannot read code at 0x%llx", (unsigned long long)addr);
		return -1;
	}
	uint8_t jmp[BPT_JMP_LEN] = { 0xe9 };
	int32_t r32 = (int32_t)rel;
	memcpy(jmp + 1, &r32, 4);
	if (ptu_write(bt->memfd, saddr, slot, slen + 1) < 0 ||
	    ptu_write(bt->memfd, addr, jmp, sizeof jmp) < 0) {
		snprintf(why, whylen, "cannot write to the target");
		b->used = false;
		bt->n--;
		return -1;
	}
	b->len = (uint8_t)ilen;
	b->slot = saddr;
	b->trap = saddr;
	b->jump = true;
	return 0;
}

/* The jump form over the first instructions of a function whose first one
 * is shorter than the jmp (push %r15, mov 0x10(%rdi),%eax): they are
 * copied together, which is right only if nothing jumps to the second or
 * third.  So the whole function [addr, addr + fsize) is decoded first, and
 * the copy is refused when any byte does not decode, when a direct branch
 * or call targets inside the covered bytes, or when the function has an
 * indirect jump (a jump table may target anything).  Returns the covered
 * length, or 0. */
#define ENTRY_MAX_FUNC 16384
/* instructions covered at most: malloc() begins push %r12; push %rbp;
 * push %rbx; mov %rdi,%rbx (7 bytes in 4) */
#define ENTRY_MAX_COVERED 4

static bool rel32_branch(const cs_insn *in)
{
	return (in->size == 5 && in->bytes[0] == 0xe9) ||
	       (in->size == 6 && in->bytes[0] == 0x0f && (in->bytes[1] & 0xf0) == 0x80);
}

static size_t entry_cover(const uint8_t *code, size_t fsize, uint64_t addr)
{
	csh cs;
	cs_insn *in;
	size_t cover = 0, ncover = 0, at = 0;
	bool ok = true;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = fsize;
	uint64_t pc = addr;
	while (ok && in && left > 0) {
		if (!cs_disasm_iter(cs, &p, &left, &pc, in)) {
			ok = false;
			break;
		}
		const cs_detail *d = in->detail;
		bool branch = false;
		for (int g = 0; g < d->groups_count; g++)
			branch |= d->groups[g] == CS_GRP_JUMP || d->groups[g] == CS_GRP_CALL ||
				  d->groups[g] == CS_GRP_RET || d->groups[g] == CS_GRP_INT ||
				  d->groups[g] == CS_GRP_IRET || d->groups[g] == CS_GRP_BRANCH_RELATIVE;
		if (cover < BPT_JMP_LEN) {
			/* a rel32 branch only as the last one covered (it is
			 * re-aimed, relocate_rel32) */
			if ((branch && !(rel32_branch(in) && cover + in->size >= BPT_JMP_LEN)) ||
			    ncover == ENTRY_MAX_COVERED) {
				ok = false;
				break;
			}
			cover += in->size;
			ncover++;
		}
		if (branch) { /* after the covered instructions: cover is final */
			const cs_x86 *x = &d->x86;
			if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
				uint64_t t = (uint64_t)x->operands[0].imm;
				if (t > addr && t < addr + cover)
					ok = false; /* into the covered bytes */
			} else if (in->id == X86_INS_JMP) {
				ok = false; /* indirect: a jump table may target anything */
			}
		}
		at += in->size;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&cs);
	return ok && at == fsize && cover >= BPT_JMP_LEN ? cover : 0;
}

/* The jump form over the instructions in [addr, addr + cover), whose bytes
 * are code[0..cover): slot = int3; each instruction relocated in turn
 * (each one's jmp back overwritten by the next); the last one's jmp back.
 * Whether anything jumps into the covered bytes is the caller's check. */
static int plant_cover(struct bpt_table *bt, uint64_t addr, const uint8_t *code, size_t cover,
		       int kind, int data, uint64_t saddr, char *why, size_t whylen)
{
	uint8_t slot[BPT_SLOT_SIZE * 2];
	size_t off = 1, slen = 0;
	slot[0] = 0xcc;
	for (size_t done = 0; done < cover;) {
		int n = bpt_relocate(code + done, cover - done, addr + done, saddr + off,
				     slot + off, &slen, why, whylen);
		if (n <= 0)
			return -1;
		done += (size_t)n;
		off += (size_t)n;
	}
	if (off != cover + 1) {
		snprintf(why, whylen, "instructions at 0x%llx do not end at %zu bytes",
			 (unsigned long long)addr, cover);
		return -1;
	}
	size_t end = off + 14; /* the last relocation's jmp back is at off */
	struct bpt *b = add(bt, addr, kind, data);
	if (!b || trap_add(bt, saddr, addr) < 0) {
		if (b) {
			b->used = false;
			bt->n--;
		}
		snprintf(why, whylen, "cannot read code at 0x%llx", (unsigned long long)addr);
		return -1;
	}
	int64_t rel = (int64_t)saddr - (int64_t)(addr + BPT_JMP_LEN);
	uint8_t jmp[BPT_JMP_LEN] = { 0xe9 };
	int32_t r32 = (int32_t)rel;
	memcpy(jmp + 1, &r32, 4);
	if (ptu_write(bt->memfd, saddr, slot, end) < 0 || ptu_write(bt->memfd, addr, jmp, sizeof jmp) < 0) {
		snprintf(why, whylen, "cannot write to the target");
		b->used = false;
		bt->n--;
		return -1;
	}
	b->len = (uint8_t)cover;
	b->slot = saddr;
	b->trap = saddr;
	b->jump = true;
	return 0;
}

int bpt_insert_entry(struct bpt_table *bt, uint64_t addr, uint64_t fsize, int kind, int data,
		     char *why, size_t whylen)
{
	uint8_t first[16];
	uint8_t *code = NULL;
	size_t cover = 0;
	if (bt->scratch_used + BPT_SLOT_SIZE > BPT_SCRATCH_SIZE || !bt->scratch) {
		snprintf(why, whylen, "no room for an out-of-line slot");
		return -1;
	}
	uint64_t saddr = bt->scratch + bt->scratch_used;
	int64_t rel = (int64_t)saddr - (int64_t)(addr + BPT_JMP_LEN);
	if (rel == (int32_t)rel && fsize > BPT_JMP_LEN && fsize <= ENTRY_MAX_FUNC &&
	    ptu_read(bt->pid, addr, first, sizeof first) == 0 && !has_lock_prefix(first, sizeof first) &&
	    !bpt_find(bt, addr) && (code = malloc(fsize)) && ptu_read(bt->pid, addr, code, fsize) == 0) {
		/* the decoding depends on the bytes and where they are: an
		 * exploration's runs share it (cache.c) */
		uint64_t key = cache_key(addr * 0x9e3779b97f4a7c15ull ^ fsize ^ 0xe0, code, fsize);
		uint32_t c;
		if (cache_get(key, &c)) {
			cover = c;
		} else {
			cover = entry_cover(code, fsize, addr);
			cache_put(key, (uint32_t)cover);
		}
	}
	free(code);
	if (cover < BPT_JMP_LEN || cover > sizeof first ||
	    plant_cover(bt, addr, first, cover, kind, data, saddr, why, whylen) < 0)
		return bpt_insert_jump(bt, addr, kind, data, why, whylen);
	bt->scratch_used += BPT_SLOT_SIZE;
	return 0;
}

int bpt_insert_cover_at(struct bpt_table *bt, uint64_t addr, size_t cover, int kind, int data,
			uint64_t saddr, char *why, size_t whylen)
{
	uint8_t code[BPT_COVER_MAX];
	int64_t rel = (int64_t)saddr - (int64_t)(addr + BPT_JMP_LEN);
	if (cover < BPT_JMP_LEN || cover > BPT_COVER_MAX || rel != (int32_t)rel ||
	    ptu_read(bt->pid, addr, code, cover) < 0 || has_lock_prefix(code, cover)) {
		snprintf(why, whylen, "cannot displace %zu bytes at 0x%llx", cover, (unsigned long long)addr);
		return -1;
	}
	for (size_t k = 0; k < cover; k++)
		if (bpt_find(bt, addr + k)) {
			snprintf(why, whylen, "a breakpoint is there already at 0x%llx",
				 (unsigned long long)(addr + k));
			return -1;
		}
	return plant_cover(bt, addr, code, cover, kind, data, saddr, why, whylen);
}

int bpt_insert_nop(struct bpt_table *bt, uint64_t addr, int kind, int data)
{
	struct bpt *b = add(bt, addr, kind, data);
	if (!b || b->orig[0] != 0x90 || plant(bt, b) < 0) {
		if (b) {
			b->used = false;
			bt->n--;
		}
		return -1;
	}
	b->len = 1;
	b->trap = addr;
	return 0;
}

int bpt_insert_raw(struct bpt_table *bt, uint64_t addr, int kind, int data)
{
	struct bpt *b = add(bt, addr, kind, data);
	if (!b || plant(bt, b) < 0)
		return -1;
	b->len = 1;
	b->trap = addr;
	return 0;
}

int bpt_remove(struct bpt_table *bt, uint64_t addr)
{
	struct bpt *b = bpt_find(bt, addr);
	if (!b)
		return -1;
	int rc = ptu_write(bt->memfd, addr, b->orig, b->jump ? BPT_JMP_LEN : 1);
	if (b->jump) {
		/* a thread may stand before the slot's int3 (interrupted right
		 * after the jmp): let it run the copy with no stop */
		static const uint8_t nop = 0x90;
		if (ptu_write(bt->memfd, b->slot, &nop, 1) < 0)
			rc = -1;
	}
	b->used = false; /* the addr stays as a tombstone for probing */
	bt->n--;
	if (bt->nretired == bt->retcap) {
		size_t ncap = bt->retcap ? 2 * bt->retcap : 16;
		struct bpt_retired *nr = realloc(bt->retired, ncap * sizeof *nr);
		if (!nr)
			return -1;
		bt->retired = nr;
		bt->retcap = ncap;
	}
	bt->retired[bt->nretired++] = b->jump ? (struct bpt_retired){ b->slot, b->slot + 1 }
					      : (struct bpt_retired){ addr, addr };
	return rc;
}

int bpt_jump_to(struct bpt_table *bt, uint64_t addr, uint64_t target)
{
	struct bpt *b = bpt_find(bt, addr);
	int64_t rel = (int64_t)target - (int64_t)(addr + BPT_JMP_LEN);
	if (!b || !b->jump || rel != (int32_t)rel)
		return -1;
	uint8_t jmp[BPT_JMP_LEN] = { 0xe9 };
	int32_t r32 = (int32_t)rel;
	memcpy(jmp + 1, &r32, 4);
	return ptu_write(bt->memfd, addr, jmp, sizeof jmp);
}

bool bpt_retired(const struct bpt_table *bt, uint64_t trap, uint64_t *resume)
{
	for (size_t i = bt->nretired; i-- > 0;)
		if (bt->retired[i].trap == trap) {
			*resume = bt->retired[i].resume;
			return true;
		}
	return false;
}

int bpt_read_orig(struct bpt_table *bt, uint64_t addr, void *buf, size_t len)
{
	if (ptu_read(bt->pid, addr, buf, len) < 0)
		return -1;
	for (size_t i = 0; i < bt->cap; i++) {
		struct bpt *b = &bt->slots[i];
		if (!b->used)
			continue;
		size_t n = b->jump ? BPT_JMP_LEN : 1;
		for (size_t k = 0; k < n; k++)
			if (b->addr + k >= addr && b->addr + k < addr + len)
				((uint8_t *)buf)[b->addr + k - addr] = b->orig[k];
	}
	return 0;
}

int bpt_restore_all(struct bpt_table *bt, int child_memfd)
{
	int rc = 0;
	for (size_t i = 0; i < bt->cap; i++) {
		struct bpt *b = &bt->slots[i];
		if (b->used && ptu_write(child_memfd, b->addr, b->orig, b->jump ? BPT_JMP_LEN : 1) < 0)
			rc = -1;
	}
	return rc;
}

static void *dup_array(const void *src, size_t n, size_t size, bool *failed)
{
	if (!src || !n)
		return NULL;
	void *p = malloc(n * size);
	if (!p) {
		*failed = true;
		return NULL;
	}
	memcpy(p, src, n * size);
	return p;
}

int bpt_copy(struct bpt_table *dst, const struct bpt_table *src, pid_t pid, int memfd)
{
	bool failed = false;
	*dst = *src;
	dst->pid = pid;
	dst->memfd = memfd;
	dst->slots = dup_array(src->slots, src->cap, sizeof *src->slots, &failed);
	dst->traps = dup_array(src->traps, src->tcap, sizeof *src->traps, &failed);
	dst->retired = dup_array(src->retired, src->retcap, sizeof *src->retired, &failed);
	if (!dst->slots)
		dst->cap = dst->n = 0;
	if (!dst->traps)
		dst->tcap = dst->tn = 0;
	if (!dst->retired)
		dst->retcap = dst->nretired = 0;
	if (failed) {
		bpt_release(dst);
		return -1;
	}
	return 0;
}
