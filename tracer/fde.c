/*
 * .eh_frame FDE ranges (fde.h).  libdw's dwarf_next_cfi() walks the
 * section's entries, CIEs and FDEs, 32- or 64-bit; it leaves an FDE's
 * function start and length as the bytes its CIE's augmentation encodes
 * them in ('R', DW_EH_PE_*; absptr without one), and read_ptr() reads
 * every encoding a linked file holds them in: absolute or pc-relative,
 * 2, 4 or 8 bytes or LEB128.  (libdw decodes them only inside its
 * per-address look-up, dwarf_cfi_addrframe(), which walks nothing.)
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "fde.h"
#include "symbolizer/sym_elf.h"

/* The .eh_frame being walked: its bytes as libdw reads them (it never
 * writes them), where it is loaded (pc-relative pointers are from
 * there), the size of an absptr and the file's ident (its byte order). */
struct ehf {
	Elf_Data d;
	uint64_t addr;
	unsigned ptr_size;
	const unsigned char *ident;
	Dwarf_Off cie; /* the last CIE read (FDEs share a few) */
	int cie_enc;   /* and its FDEs' encoding (fde_encoding) */
};

/* A LEB128 number at *p (before end), signed or not; *p moves past it.
 * False if it runs past end or beyond 64 bits. */
static bool read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (sign && shift + 7 < 64 && (b & 0x40))
				r |= ~(uint64_t)0 << (shift + 7);
			*v = r;
			return true;
		}
	}
	return false;
}

/* A fixed-size number of n bytes at p, little-endian (x86-64's order),
 * sign-extended if sign. */
static uint64_t read_fixed(const uint8_t *p, unsigned n, bool sign)
{
	uint64_t r = 0;
	for (unsigned i = 0; i < n; i++)
		r |= (uint64_t)p[i] << (8 * i);
	if (sign && n < 8 && (r >> (8 * n - 1) & 1))
		r |= ~(uint64_t)0 << (8 * n);
	return r;
}

/* The pointer at *p (before end) in encoding enc: its value, made
 * absolute if pc-relative; *p moves past it.  False for what a linked
 * file's FDE cannot hold or we cannot place (omit, indirect, text-,
 * data- or function-relative, aligned) and past end. */
static bool read_ptr(const struct ehf *eh, uint8_t enc, const uint8_t **p, const uint8_t *end,
		     uint64_t *v)
{
	static const unsigned size[16] = { [DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4,
					   [DW_EH_PE_udata8] = 8, [DW_EH_PE_sdata2] = 2,
					   [DW_EH_PE_sdata4] = 4, [DW_EH_PE_sdata8] = 8 };
	uint64_t at = eh->addr + (uint64_t)(*p - (const uint8_t *)eh->d.d_buf);
	uint8_t fmt = enc & 0x0f, app = enc & 0x70;
	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) ||
	    (app != DW_EH_PE_absptr && app != DW_EH_PE_pcrel))
		return false;
	if (fmt == DW_EH_PE_uleb128 || fmt == DW_EH_PE_sleb128) {
		if (!read_leb(p, end, fmt == DW_EH_PE_sleb128, v))
			return false;
	} else {
		unsigned n = fmt == DW_EH_PE_absptr || fmt == DW_EH_PE_signed ? eh->ptr_size : size[fmt];
		if (!n || (size_t)(end - *p) < n)
			return false;
		*v = read_fixed(*p, n, fmt & DW_EH_PE_signed);
		*p += n;
	}
	if (app == DW_EH_PE_pcrel)
		*v += at;
	return true;
}

/* The encoding of the FDE pointers of the CIE at offset off, or -1 if it
 * cannot be known: an augmentation neither empty nor 'z'-sized (its data
 * could be anything), or one that does not read. */
static int fde_encoding(struct ehf *eh, Dwarf_Off off)
{
	Dwarf_CFI_Entry c;
	Dwarf_Off next;
	if (dwarf_next_cfi(eh->ident, &eh->d, true, off, &next, &c) != 0 ||
	    !dwarf_cfi_cie_p(&c))
		return -1;
	const char *a = c.cie.augmentation;
	if (!*a)
		return DW_EH_PE_absptr;
	if (*a != 'z')
		return -1;
	const uint8_t *p = c.cie.augmentation_data, *end = p + c.cie.augmentation_data_size;
	for (a++; *a; a++) {
		uint64_t skip;
		if (*a == 'R')
			return p < end ? *p : -1;
		if (*a == 'L' && p < end) {
			p++; /* the LSDA's encoding */
		} else if (*a == 'P' && p < end) {
			uint8_t penc = *p++; /* the personality's encoding, then it: its size */
			if (!read_ptr(eh, penc & 0x0f, &p, end, &skip))
				return -1;
		} else if (*a != 'S' && *a != 'B') {
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

/* The function range [lo, hi) of the FDE e: false if its CIE's encoding
 * cannot be read, or the function is empty. */
static bool fde_range(struct ehf *eh, const Dwarf_FDE *e, struct fde_range *r)
{
	if (e->CIE_pointer != eh->cie) {
		eh->cie = e->CIE_pointer;
		eh->cie_enc = fde_encoding(eh, eh->cie);
	}
	int enc = eh->cie_enc;
	const uint8_t *p = e->start;
	uint64_t lo, len;
	/* the length: the start's format, no pc-relative offset */
	if (enc < 0 || !read_ptr(eh, (uint8_t)enc, &p, e->end, &lo) ||
	    !read_ptr(eh, (uint8_t)enc & 0x0f, &p, e->end, &len) || !len || lo + len < lo)
		return false;
	*r = (struct fde_range){ lo, lo + len, "" };
	snprintf(r->name, sizeof r->name, "fde@%llx", (unsigned long long)lo);
	return true;
}

static int cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Every FDE's range in .eh_frame's order; their number, or 0 (*out
 * NULL) if there are none or memory runs out. */
static size_t walk(struct ehf *eh, struct fde_range **out)
{
	size_t n = 0, cap = 0;
	struct fde_range *r = NULL;
	Dwarf_CFI_Entry e;
	for (Dwarf_Off off = 0, next;; off = next) {
		next = (Dwarf_Off)-1; /* not every error sets it */
		int rc = dwarf_next_cfi(eh->ident, &eh->d, true, off, &next, &e);
		if (rc == 1 || next == (Dwarf_Off)-1)
			break; /* the end, or an error it cannot skip */
		if (rc != 0 || dwarf_cfi_cie_p(&e))
			continue;
		if (n == cap) {
			struct fde_range *nr = realloc(r, (cap = cap ? 2 * cap : 256) * sizeof *nr);
			if (!nr) {
				free(r);
				return 0;
			}
			r = nr;
		}
		n += fde_range(eh, &e.fde, &r[n]);
	}
	if (!n) {
		free(r);
		r = NULL;
	}
	*out = r;
	return n;
}

size_t fde_ranges(Elf *e, struct fde_range **out)
{
	struct sym_elf_sec s;
	*out = NULL;
	const unsigned char *ident = (const unsigned char *)elf_getident(e, NULL);
	if (!ident || !sym_elf_section(e, ".eh_frame", 0, 0, &s))
		return 0;
	struct ehf eh = { .addr = s.addr,
			  .ptr_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8,
			  .ident = ident,
			  .cie = (Dwarf_Off)-1 };
	eh.d.d_buf = (void *)s.bytes; /* libdw's Elf_Data is not const */
	eh.d.d_size = s.size;
	struct fde_range *r;
	size_t k = walk(&eh, &r);
	if (!k)
		return 0;
	qsort(r, k, sizeof *r, cmp_range);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && r[i].lo < r[m - 1].hi)
			r[i].lo = r[m - 1].hi; /* overlapping: never seen; kept disjoint */
		if (r[i].lo < r[i].hi)
			r[m++] = r[i];
	}
	*out = r;
	return m;
}
