/*
 * USDT probes of include/avtrace.h (provider "avtrace"): found in the
 * .note.stapsdt section of every module mapped at the entry stop, planted
 * as int3 on their nop (resumed at pc+1: nothing to run out of line), and
 * turned into read / write / begin / end requests.
 *
 * A probe's arguments are assembler operands chosen by the compiler
 * ("8@%rax", "-4@-20(%rbp)", "8@$8", "8@(%rax,%rdx,8)", "8@sym(%rip)"):
 * parsed once here, evaluated against the registers at each hit.  An
 * operand we cannot evaluate is reported with the probe's site when the
 * probe is planted, never dropped silently.
 */
#include <ctype.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrace_util.h"
#include "tracer_int.h"

enum { SA_NONE, SA_REG, SA_IMM, SA_MEM };

/* Byte offsets into struct user_regs_struct for the 16 general registers. */
static const struct {
	const char *q, *d, *w, *b;
	size_t off;
} gregs[] = {
	{ "rax", "eax", "ax", "al", offsetof(struct user_regs_struct, rax) },
	{ "rbx", "ebx", "bx", "bl", offsetof(struct user_regs_struct, rbx) },
	{ "rcx", "ecx", "cx", "cl", offsetof(struct user_regs_struct, rcx) },
	{ "rdx", "edx", "dx", "dl", offsetof(struct user_regs_struct, rdx) },
	{ "rsi", "esi", "si", "sil", offsetof(struct user_regs_struct, rsi) },
	{ "rdi", "edi", "di", "dil", offsetof(struct user_regs_struct, rdi) },
	{ "rbp", "ebp", "bp", "bpl", offsetof(struct user_regs_struct, rbp) },
	{ "rsp", "esp", "sp", "spl", offsetof(struct user_regs_struct, rsp) },
	{ "r8", "r8d", "r8w", "r8b", offsetof(struct user_regs_struct, r8) },
	{ "r9", "r9d", "r9w", "r9b", offsetof(struct user_regs_struct, r9) },
	{ "r10", "r10d", "r10w", "r10b", offsetof(struct user_regs_struct, r10) },
	{ "r11", "r11d", "r11w", "r11b", offsetof(struct user_regs_struct, r11) },
	{ "r12", "r12d", "r12w", "r12b", offsetof(struct user_regs_struct, r12) },
	{ "r13", "r13d", "r13w", "r13b", offsetof(struct user_regs_struct, r13) },
	{ "r14", "r14d", "r14w", "r14b", offsetof(struct user_regs_struct, r14) },
	{ "r15", "r15d", "r15w", "r15b", offsetof(struct user_regs_struct, r15) },
	{ "rip", "eip", NULL, NULL, offsetof(struct user_regs_struct, rip) },
};

/* Register name (without %) -> offset and width in bytes; -1 if unknown. */
static int reg_lookup(const char *name, size_t len, size_t *off, int *width)
{
	for (size_t i = 0; i < sizeof gregs / sizeof gregs[0]; i++) {
		const char *n[4] = { gregs[i].q, gregs[i].d, gregs[i].w, gregs[i].b };
		static const int w[4] = { 8, 4, 2, 1 };
		for (int k = 0; k < 4; k++)
			if (n[k] && strlen(n[k]) == len && !strncmp(n[k], name, len)) {
				*off = gregs[i].off;
				*width = w[k];
				return 0;
			}
	}
	return -1;
}

static int parse_reg(const char **p, size_t *off, int *width)
{
	if (**p != '%')
		return -1;
	const char *s = ++*p;
	while (isalnum((unsigned char)**p))
		(*p)++;
	return reg_lookup(s, (size_t)(*p - s), off, width);
}

/* One "SIZE@OPERAND".  sym(%rip) forms are resolved against the module's
 * symbol table by the caller (symval). */
static int parse_arg(const char *s, struct sdt_arg *a, const struct elfmod *m,
		     uint64_t (*symval)(const struct elfmod *, const char *, size_t))
{
	char *end;
	memset(a, 0, sizeof *a);
	long size = strtol(s, &end, 10);
	if (end == s || *end != '@')
		return -1;
	a->size = (int)size;
	const char *p = end + 1;
	if (*p == '$') {
		a->type = SA_IMM;
		a->disp = strtoll(p + 1, &end, 0);
		return *end ? -1 : 0;
	}
	if (*p == '%') {
		a->type = SA_REG;
		return parse_reg(&p, &a->base, &a->base_width) < 0 || *p ? -1 : 0;
	}
	a->type = SA_MEM;
	if (*p == '-' || isdigit((unsigned char)*p)) {
		a->disp = strtoll(p, &end, 0);
		p = end;
	} else if (*p != '(') {
		/* sym or sym+N before (%rip) */
		const char *sym = p;
		while (*p && *p != '(' && *p != '+' && *p != '-')
			p++;
		uint64_t v = symval(m, sym, (size_t)(p - sym));
		if (!v)
			return -1;
		a->disp = (int64_t)(m->bias + v);
		a->absolute = true;
		if (*p == '+' || *p == '-') {
			a->disp += strtoll(p, &end, 0);
			p = end;
		}
	}
	if (*p != '(')
		return -1;
	p++;
	if (*p == '%' && parse_reg(&p, &a->base, &a->base_width) < 0)
		return -1;
	a->has_base = true;
	if (a->absolute) { /* sym(%rip): the symbol's address is the address */
		a->has_base = false;
		if (strncmp(p - 3, "rip", 3))
			return -1;
	}
	if (*p == ',') {
		p++;
		if (parse_reg(&p, &a->index, &a->index_width) < 0)
			return -1;
		a->has_index = true;
		a->scale = 1;
		if (*p == ',') {
			a->scale = (int)strtol(p + 1, &end, 10);
			p = end;
		}
	}
	return *p == ')' && !p[1] ? 0 : -1;
}

static uint64_t reg_value(const struct user_regs_struct *r, size_t off, int width)
{
	uint64_t v;
	memcpy(&v, (const char *)r + off, sizeof v);
	return width == 8 ? v : v & ((1ull << (8 * width)) - 1);
}

int sdt_eval(struct tracer *tr, const struct sdt_arg *a, const struct user_regs_struct *r,
	     uint64_t *out)
{
	uint64_t v = 0;
	switch (a->type) {
	case SA_IMM:
		*out = (uint64_t)a->disp;
		return 0;
	case SA_REG:
		v = reg_value(r, a->base, a->base_width);
		break;
	case SA_MEM: {
		uint64_t addr = (uint64_t)a->disp;
		if (a->has_base)
			addr += reg_value(r, a->base, 8);
		if (a->has_index)
			addr += reg_value(r, a->index, 8) * (uint64_t)a->scale;
		int n = abs(a->size) ? abs(a->size) : 8;
		if (n > 8 || ptu_read(tr->proc->pid, addr, &v, (size_t)n) < 0)
			return -1;
		break;
	}
	default:
		return -1;
	}
	int n = abs(a->size);
	if (n > 0 && n < 8) {
		v &= (1ull << (8 * n)) - 1;
		if (a->size < 0 && (v >> (8 * n - 1)) & 1)
			v |= ~0ull << (8 * n);
	}
	*out = v;
	return 0;
}

/* Address of a data symbol in the module's ELF symbol tables (0 if none). */
static uint64_t elf_symval(const struct elfmod *m, const char *name, size_t len)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t val = 0;
	Elf_Scn *scn = NULL;
	while (e && !val && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;
			if (gelf_getsym(d, (int)i, &sym) && sym.st_value &&
			    (nm = elf_strptr(e, sh.sh_link, sym.st_name)) && strlen(nm) == len &&
			    !strncmp(nm, name, len)) {
				val = sym.st_value;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return val;
}

static int probe_kind(const char *name)
{
	if (!strcmp(name, "read"))
		return AVT_EV_READ;
	if (!strcmp(name, "write"))
		return AVT_EV_WRITE;
	if (!strcmp(name, "atomic_begin"))
		return AVT_EV_BEGIN;
	if (!strcmp(name, "atomic_end"))
		return AVT_EV_END;
	return AVT_EV_NONE;
}

static void add_probe(struct tracer *tr, const struct elfmod *m, uint64_t pc, const char *name,
		      const char *args)
{
	struct probe p;
	memset(&p, 0, sizeof p);
	p.kind = probe_kind(name);
	p.pc = pc;
	char site[64];
	snprintf(site, sizeof site, "%s+0x%llx", strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path,
		 (unsigned long long)(pc - m->bias));
	if (p.kind == AVT_EV_NONE) {
		avt_warn("unknown avtrace probe '%s' at %s: ignored", name, site);
		return;
	}
	char buf[256];
	snprintf(buf, sizeof buf, "%s", args);
	int n = 0;
	for (char *tok = strtok(buf, " "); tok && n < 2; tok = strtok(NULL, " "), n++)
		if (parse_arg(tok, &p.arg[n], m, elf_symval) < 0) {
			avt_warn("avtrace probe '%s' at %s: cannot evaluate argument '%s': its accesses are not recorded",
				 name, site, tok);
			return;
		}
	if ((p.kind == AVT_EV_READ || p.kind == AVT_EV_WRITE) && n < 2) {
		avt_warn("avtrace probe '%s' at %s has %d arguments (expected 2): ignored", name, site, n);
		return;
	}
	if (bpt_insert_nop(&tr->proc->as.bpts, pc, BK_PROBE, (int)tr->proc->as.nprobes) < 0) {
		avt_warn("avtrace probe '%s' at %s is not at a nop: ignored", name, site);
		return;
	}
	struct probe *np = realloc(tr->proc->as.probes, (tr->proc->as.nprobes + 1) * sizeof *np);
	if (!np)
		return;
	tr->proc->as.probes = np;
	tr->proc->as.probes[tr->proc->as.nprobes++] = p;
}

/* The notes of one module: owner "stapsdt", type 3; descriptor = pc, base,
 * semaphore (3 x u64), then provider, name, args (NUL-terminated). */
static void module_probes(struct tracer *tr, const struct elfmod *m)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	uint64_t sdt_base = 0;
	Elf_Scn *scn = NULL, *notes = NULL;
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || !(nm = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(nm, ".stapsdt.base"))
			sdt_base = sh.sh_addr;
		else if (!strcmp(nm, ".note.stapsdt"))
			notes = scn;
	}
	Elf_Data *d = notes ? elf_getdata(notes, NULL) : NULL;
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;
	while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		const char *desc = (const char *)d->d_buf + doff;
		if (nh.n_type != 3 || nh.n_namesz != 8 || memcmp((char *)d->d_buf + noff, "stapsdt", 8) ||
		    nh.n_descsz < 27)
			continue;
		uint64_t pc, base;
		memcpy(&pc, desc, 8);
		memcpy(&base, desc + 8, 8);
		const char *prov = desc + 24, *end = desc + nh.n_descsz;
		const char *name = prov + strnlen(prov, (size_t)(end - prov)) + 1;
		const char *args = name < end ? name + strnlen(name, (size_t)(end - name)) + 1 : end;
		if (args >= end || strcmp(prov, "avtrace"))
			continue;
		/* prelink may have moved the code: .stapsdt.base tells by how much */
		if (sdt_base)
			pc += sdt_base - base;
		add_probe(tr, m, m->bias + pc, name, args);
	}
out:
	if (e)
		elf_end(e);
	close(fd);
}

void probes_plant(struct tracer *tr)
{
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		module_probes(tr, &tr->proc->as.mods.m[i]);
}

void probes_plant_module(struct tracer *tr, const struct elfmod *m)
{
	module_probes(tr, m);
}

void probes_request(struct tracer *tr, struct tthread *t, const struct probe *p,
		    const struct user_regs_struct *r)
{
	struct treq *q = &t->req;
	memset(q, 0, sizeof *q);
	q->hook = HK_PROBE;
	q->kind = (enum avt_kind)p->kind;
	q->site = p->pc;
	if (p->kind == AVT_EV_READ || p->kind == AVT_EV_WRITE) {
		uint64_t size = 0;
		if (sdt_eval(tr, &p->arg[0], r, &q->obj) < 0 || sdt_eval(tr, &p->arg[1], r, &size) < 0)
			avt_warn("T%u: cannot evaluate the avtrace probe at 0x%llx", t->lid,
				 (unsigned long long)p->pc);
		q->size = (uint16_t)(size > 0xffff ? 0xffff : size);
	}
}
