/*
 * The access feature's planting decisions (access_scan.h): which
 * instructions become access sites (a memory operand that is not
 * thread-local, not the function's own frame unless an address of it
 * escapes, not read-only data; no branch, no gather), and where the short
 * form may stand.  Calls down only (decode/).
 */
#include <stdlib.h>
#include <string.h>

#include "access_scan.h"
#include "bpt.h"

/* A rip-relative load of read-only data (a constant, a GOT entry) can
 * never race. */
static bool read_only(const struct scan *sc, const struct dec_mem *m)
{
	if (m->base != DEC_RIP)
		return false;
	for (size_t i = 0; i < sc->nro; i++)
		if (m->rip_target >= sc->ro[i].lo && m->rip_target < sc->ro[i].hi)
			return true;
	return false;
}

static bool frame_base(const struct dec_mem *m, bool fp)
{
	return m->base == DEC_RSP || (fp && m->base == DEC_RBP);
}

/* An EVEX-encoded (AVX-512) instruction at code: 0x62 after the legacy
 * prefixes.  capstone 4 gets the length of some wrong. */
static bool evex(const uint8_t *code, size_t len)
{
	size_t p = 0;
	while (p < len && (code[p] == 0x66 || code[p] == 0x67 || code[p] == 0xf0 || code[p] == 0xf2 ||
			   code[p] == 0xf3 || code[p] == 0x2e || code[p] == 0x36 || code[p] == 0x3e ||
			   code[p] == 0x26 || code[p] == 0x64 || code[p] == 0x65))
		p++;
	return p < len && code[p] == 0x62;
}

bool scan_push(void **a, size_t *n, size_t *cap, size_t size, const void *v)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		void *na = realloc(*a, ncap * size);
		if (!na)
			return false;
		*a = na;
		*cap = ncap;
	}
	memcpy((char *)*a + *n * size, v, size);
	(*n)++;
	return true;
}

/* Groups mode: a direct jmp or jcc of the piece being scanned (a call
 * enters a function at its start: it joins nothing).  False: out of
 * memory. */
static bool note_edge(struct scan *sc, const struct dec_insn *in)
{
	if (!sc->groups || !in->target || in->flags & DEC_F_STACKOP)
		return true;
	struct scan_edge e = { in->addr, in->target };
	return scan_push((void **)&sc->edges, &sc->nedges, &sc->capedges, sizeof e, &e);
}

/* Groups mode: the piece just scanned (out of memory: it is not kept,
 * and its candidates lose their covers in scan_check_covers). */
static void note_piece(struct scan *sc, uint64_t rt, size_t len, bool bad)
{
	struct scan_piece p = { rt, rt + len, bad };
	if (sc->groups)
		scan_push((void **)&sc->pieces, &sc->npieces, &sc->cappieces, sizeof p, &p);
}

/* One function (or a run of code with no symbol): its candidate sites.
 * A function whose decoding is not sure - bytes that decode to nothing
 * (data in the text, or an instruction the decoder does not know) or an
 * AVX-512 instruction - is left alone: decoding on past such a byte may
 * land inside an instruction, and an int3 planted there corrupts it. */
void scan_func(struct dec *dec, struct scan *sc, const uint8_t *code, size_t len, uint64_t rt,
	       const char *name)
{
	struct dec_insn *ins = malloc((len + 1) * sizeof *ins);
	size_t n = 0;
	bool fp = false, escapes = false, unsure = false;
	if (!ins)
		return;
	for (size_t off = 0; off < len;) {
		int l = dec_insn(dec, code + off, len - off, rt + off, &ins[n]);
		if (l <= 0 || evex(code + off, len - off)) {
			/* padding, or code we cannot follow */
			bool pad = l <= 0 && (code[off] == 0x00 || code[off] == 0xcc);
			sc->undecodable += !pad;
			unsure |= !pad;
			off += l > 0 ? (size_t)l : 1;
			continue;
		}
		if (ins[n].flags & DEC_F_FPSETUP && n < 4)
			fp = true;
		off += (size_t)l;
		n++;
	}
	if (unsure) {
		/* its branches are unknown: no cover in its function (foo.cold
		 * jumps into foo), or, code with no symbol, in the module; in
		 * groups mode none in its group, and the branches that did
		 * decode still count */
		for (size_t i = 0; sc->groups && i < n; i++)
			if (!note_edge(sc, &ins[i]) ||
			    (ins[i].target && !scan_push((void **)&sc->targets, &sc->ntargets, &sc->captargets,
							 sizeof *sc->targets, &ins[i].target)))
				sc->no_covers = true;
		note_piece(sc, rt, len, true);
		if (!name || !scan_push((void **)&sc->indirect, &sc->nindirect, &sc->capindirect,
				   sizeof *sc->indirect, &name))
			sc->no_covers = true;
		sc->untrusted++;
		free(ins);
		return;
	}
	bool indirect = false;
	for (size_t i = 0; i < n; i++) {
		if (ins[i].flags & DEC_F_FRAMEADDR &&
		    (ins[i].frame_src == DEC_RSP || (fp && ins[i].frame_src == DEC_RBP)))
			escapes = true;
		if (ins[i].target && !scan_push((void **)&sc->targets, &sc->ntargets, &sc->captargets,
					   sizeof *sc->targets, &ins[i].target))
			name = NULL; /* out of memory: no cover here */
		if (!note_edge(sc, &ins[i]))
			sc->no_covers = true;
		indirect |= !!(ins[i].flags & DEC_F_INDIRECT);
	}
	note_piece(sc, rt, len, indirect);
	if (indirect && name &&
	    !scan_push((void **)&sc->indirect, &sc->nindirect, &sc->capindirect, sizeof *sc->indirect, &name))
		name = NULL;
	bool *site = calloc(n + 1, sizeof *site);
	if (!site)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		struct dec_insn *in = &ins[i];
		if (!in->nmem || in->flags & (DEC_F_BRANCH | DEC_F_VSIB))
			continue;
		bool want = false;
		for (unsigned k = 0; k < in->nmem; k++) {
			const struct dec_mem *m = &in->mem[k];
			if (m->seg != DEC_SEG_NONE)
				continue; /* thread-local */
			if (!escapes && frame_base(m, fp))
				continue; /* frame-local */
			if (read_only(sc, m))
				continue;
			want = true;
		}
		site[i] = want;
	}
	for (size_t i = 0; i < n; i++) {
		if (!site[i])
			continue;
		/* short: displaced with what follows, if only this function can
		 * jump into it (a symbol's or an FDE's function; scan_file
		 * checks the module's branches once all are known) */
		size_t cover = name && ins[i].len < BPT_JMP_LEN ?
			dec_cover(ins, n, i, site, BPT_JMP_LEN, BPT_COVER_MAX) : 0;
		struct cand c = { ins[i].addr, ins[i], (uint8_t)cover, name };
		if (!scan_push((void **)&sc->c, &sc->n, &sc->cap, sizeof *sc->c, &c))
			break;
	}
	free(site);
	free(ins);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct scan_piece *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The piece (sorted, disjoint) that holds address a, or n. */
static size_t piece_of(const struct scan_piece *p, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < p[mid].lo)
			hi = mid;
		else if (a >= p[mid].hi)
			lo = mid + 1;
		else
			return mid;
	}
	return n;
}

static size_t uf_find(size_t *up, size_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/* Groups mode: pieces joined by direct jumps, either way, are one group
 * (a function and its .cold part, whose relation no name tells); a bad
 * piece's indirect jmp (a jump table) may land anywhere in its group:
 * none of the group's covers stand.  A candidate in no kept piece keeps
 * none either. */
static void check_groups(struct scan *sc)
{
	size_t n = sc->npieces;
	size_t *up = malloc((n + 1) * sizeof *up);
	bool *bad = calloc(n + 1, sizeof *bad);
	if (!up || !bad) {
		sc->no_covers = true;
		goto out;
	}
	if (n)
		qsort(sc->pieces, n, sizeof *sc->pieces, cmp_piece);
	for (size_t i = 0; i < n; i++)
		up[i] = i;
	for (size_t e = 0; e < sc->nedges; e++) {
		size_t a = piece_of(sc->pieces, n, sc->edges[e].from);
		size_t b = piece_of(sc->pieces, n, sc->edges[e].to);
		if (a < n && b < n)
			up[uf_find(up, a)] = uf_find(up, b);
	}
	for (size_t i = 0; i < n; i++)
		bad[uf_find(up, i)] |= sc->pieces[i].bad;
	for (size_t i = 0; i < sc->n; i++) {
		size_t k = piece_of(sc->pieces, n, sc->c[i].addr);
		if (k == n || bad[uf_find(up, k)])
			sc->c[i].cover = 0;
	}
out:
	free(up);
	free(bad);
}

/* A cover stands only where nothing can jump into its displaced bytes:
 * no direct branch of the module targets them, and neither the function
 * nor a part of it (foo.cold) jumps indirectly or was left undecoded.  (Other modules enter
 * only at exported functions; C++ landing pads are checked by the
 * caller.) */
void scan_check_covers(struct scan *sc, bool landing_pads)
{
	if (sc->ntargets)
		qsort(sc->targets, sc->ntargets, sizeof *sc->targets, cmp_u64);
	if (sc->groups)
		check_groups(sc);
	for (size_t i = 0; i < sc->n; i++) {
		struct cand *c = &sc->c[i];
		if (!c->cover)
			continue;
		bool ok = !landing_pads && !sc->no_covers && c->func;
		for (size_t k = 0; ok && k < sc->nindirect; k++)
			ok = !dec_same_function(c->func, sc->indirect[k]);
		if (!ok || dec_lands_inside(sc->targets, sc->ntargets, c->in.addr, c->cover))
			c->cover = 0;
	}
	for (size_t i = 0; i < sc->n; i++)
		sc->c[i].func = NULL; /* the names go with the ELF */
}

