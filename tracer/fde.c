/*
 * .eh_frame FDE ranges (fde.h).  .eh_frame_hdr holds a sorted table of
 * (function start, FDE address); each FDE holds its function's start
 * again and its length.  Only the usual encodings are read: the table's
 * entries datarel sdata4, the FDE's pc-relative sdata4 start (checked
 * against the table's, which is what tells its width) and 4-byte length.
 */
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fde.h"

#define PE_PCREL_SDATA4 0x1b
#define PE_UDATA4 0x03
#define PE_DATAREL_SDATA4 0x3b

struct sec {
	const uint8_t *p;
	uint64_t addr, size;
};

static bool find_sec(Elf *e, const char *want, struct sec *s)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(nm = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(nm, want))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return false;
		*s = (struct sec){ d->d_buf, sh.sh_addr, sh.sh_size };
		return true;
	}
	return false;
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* The length of the function whose FDE is at fde (an ELF address) and
 * which starts at lo, or 0 if the FDE does not read as expected. */
static uint64_t fde_len(const struct sec *eh, uint64_t fde, uint64_t lo)
{
	if (fde < eh->addr || fde - eh->addr > eh->size || eh->size - (fde - eh->addr) < 16)
		return 0;
	const uint8_t *p = eh->p + (fde - eh->addr);
	uint32_t len = u32(p);
	if (len < 12 || len == 0xffffffffu || !u32(p + 4)) /* 64-bit, or a CIE */
		return 0;
	if (fde + 8 + (uint64_t)(int64_t)s32(p + 8) != lo)
		return 0; /* not pcrel sdata4 */
	return u32(p + 12);
}

static int cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

size_t fde_ranges(Elf *e, struct fde_range **out)
{
	struct sec hdr, eh;
	*out = NULL;
	if (!find_sec(e, ".eh_frame_hdr", &hdr) || !find_sec(e, ".eh_frame", &eh) || hdr.size < 12 ||
	    hdr.p[0] != 1 || hdr.p[1] != PE_PCREL_SDATA4 || hdr.p[2] != PE_UDATA4 ||
	    hdr.p[3] != PE_DATAREL_SDATA4)
		return 0;
	uint64_t n = u32(hdr.p + 8);
	if (!n || n > (hdr.size - 12) / 8)
		return 0;
	struct fde_range *r = malloc(n * sizeof *r);
	if (!r)
		return 0;
	size_t k = 0;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *t = hdr.p + 12 + i * 8;
		uint64_t lo = hdr.addr + (uint64_t)(int64_t)s32(t);
		uint64_t len = fde_len(&eh, hdr.addr + (uint64_t)(int64_t)s32(t + 4), lo);
		if (!len)
			continue;
		r[k] = (struct fde_range){ lo, lo + len, "" };
		snprintf(r[k].name, sizeof r[k].name, "fde@%llx", (unsigned long long)lo);
		k++;
	}
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
