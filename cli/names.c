#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolizer/sym.h"
#include "trace/log.h"

static void index_heap(struct names *n);
static void index_frames(struct names *n);

static void add_mod(struct sym *s, const struct avt_module *m)
{
	sym_add_module(s, m->rec.id, m->path, m->rec.base, m->rec.lo, m->rec.hi, m->rec.build_id,
		       m->rec.build_id_len);
}

int names_open(struct names *n, const struct trace *t)
{
	memset(n, 0, sizeof *n);
	n->t = t;
	n->sym = sym_new();
	size_t nexec = 0;
	for (size_t i = 0; i < t->nnotes; i++)
		nexec += !strncmp(t->notes[i].text, "exec ", 5);
	n->ngen = nexec + 1;
	n->gen = calloc(n->ngen, sizeof *n->gen);
	n->gen_start = calloc(n->ngen, sizeof *n->gen_start);
	if (!n->sym || !n->gen || !n->gen_start) {
		names_close(n);
		return -1;
	}
	for (size_t i = 0, g = 1; i < t->nnotes; i++)
		if (!strncmp(t->notes[i].text, "exec ", 5))
			n->gen_start[g++] = t->notes[i].after_seq;
	for (size_t g = 0; g < n->ngen; g++)
		n->gen[g] = n->ngen > 1 ? sym_new() : n->sym;
	for (size_t i = 0; i < t->nmod; i++) {
		const struct avt_module *m = &t->mod[i];
		size_t g = 0;
		while (g + 1 < n->ngen && m->after_seq >= n->gen_start[g + 1])
			g++;
		add_mod(n->sym, m);
		if (n->ngen > 1 && n->gen[g])
			add_mod(n->gen[g], m);
	}
	n->seq = UINT64_MAX - 1;
	index_heap(n);
	index_frames(n);
	return 0;
}

static const struct trace *sort_trace;

static int by_addr(const void *a, const void *b)
{
	const struct avt_alloc_rec *x = &sort_trace->allocs[*(const size_t *)a];
	const struct avt_alloc_rec *y = &sort_trace->allocs[*(const size_t *)b];
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->after_seq < y->after_seq ? -1 : x->after_seq > y->after_seq;
}

/* Allocation intervals: each block from its allocation to its free. */
static void index_heap(struct names *n)
{
	const struct trace *t = n->t;
	n->heap = calloc(t->nallocs ? t->nallocs : 1, sizeof *n->heap);
	n->heap_end = calloc(t->nallocs ? t->nallocs : 1, sizeof *n->heap_end);
	if (!n->heap || !n->heap_end)
		return;
	for (size_t i = 0; i < t->nallocs; i++)
		if (t->allocs[i].kind != AVT_ALLOC_FREE)
			n->heap[n->nheap++] = i;
	sort_trace = t;
	qsort(n->heap, n->nheap, sizeof *n->heap, by_addr);
	for (size_t i = 0; i < t->nallocs; i++)
		n->heap_end[i] = UINT64_MAX;
	/* a free ends the newest earlier allocation of that address */
	for (size_t i = 0; i < t->nallocs; i++) {
		const struct avt_alloc_rec *f = &t->allocs[i];
		if (f->kind != AVT_ALLOC_FREE)
			continue;
		size_t best = SIZE_MAX;
		for (size_t k = 0; k < n->nheap; k++) {
			const struct avt_alloc_rec *a = &t->allocs[n->heap[k]];
			if (a->addr == f->addr && n->heap[k] < i && n->heap_end[n->heap[k]] == UINT64_MAX)
				best = n->heap[k];
			if (a->addr > f->addr)
				break;
		}
		if (best != SIZE_MAX)
			n->heap_end[best] = f->after_seq;
	}
}

/* "heap#12 (48 bytes, malloc at server.c:17 in server_init) +8" */
static const char *heap_name(struct names *n, uint64_t addr, char *buf, size_t len)
{
	static const char *const kinds[] = { "", "malloc", "calloc", "realloc" };
	const struct trace *t = n->t;
	size_t lo = 0, hi = n->nheap;
	while (lo < hi) { /* first allocation above addr */
		size_t mid = (lo + hi) / 2;
		if (t->allocs[n->heap[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k-- > 0 && lo - k <= 256;) {
		size_t i = n->heap[k];
		const struct avt_alloc_rec *a = &t->allocs[i];
		if (addr - a->addr >= (a->size ? a->size : 1) || a->after_seq > n->seq ||
		    n->seq >= n->heap_end[i])
			continue;
		char site[256], off[32] = "";
		const char *func = NULL;
		names_frame(n, a->site_mod, a->site_off, 1, site, sizeof site, &func);
		if (addr != a->addr)
			snprintf(off, sizeof off, " +%llu", (unsigned long long)(addr - a->addr));
		snprintf(buf, len, "heap#%zu (%llu bytes, %s at %s%s%s)%s", i + 1,
			 (unsigned long long)a->size, kinds[a->kind < 4 ? a->kind : 0], site,
			 func ? " in " : "", func ? func : "", off);
		return buf;
	}
	return NULL;
}

static int by_frame(const void *a, const void *b)
{
	const struct names_frame *x = a, *y = b;
	if (x->ea != y->ea)
		return x->ea < y->ea ? -1 : 1;
	if (x->site_mod != y->site_mod)
		return x->site_mod < y->site_mod ? -1 : 1;
	if (x->site_off != y->site_off)
		return x->site_off < y->site_off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Accesses a thread made to its own stack at an exact site, one per
 * (address, site) and the first of them: the frames that name stack
 * objects. */
static void index_frames(struct names *n)
{
	const struct trace *t = n->t;
	const uint16_t want = AVT_F_OWN_STACK | AVT_F_ACCESS_BPT | AVT_F_SITE_EXACT;
	size_t k = 0;
	for (size_t i = 0; i < t->nev; i++)
		k += (t->ev[i].flags & want) == want;
	if (!k || !(n->frames = calloc(k, sizeof *n->frames)))
		return;
	for (size_t i = 0; i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if ((e->flags & want) == want)
			n->frames[n->nframes++] = (struct names_frame){ e->obj, e->site_off, e->seq,
									e->site_mod };
	}
	qsort(n->frames, n->nframes, sizeof *n->frames, by_frame);
	size_t u = 0;
	for (size_t i = 0; i < n->nframes; i++)
		if (!u || n->frames[u - 1].ea != n->frames[i].ea ||
		    n->frames[u - 1].site_mod != n->frames[i].site_mod ||
		    n->frames[u - 1].site_off != n->frames[i].site_off)
			n->frames[u++] = n->frames[i];
	n->nframes = u;
}

/* How far from an access to its frame a variable of that frame may lie. */
#define FRAME_REACH (64u * 1024)
#define FRAME_TRIES 32

/* "main's stack: e.pendingIo": by the frame of the access nearest in
 * time (at or before the current event first) whose function has a
 * variable at addr. */
static const char *stack_name(struct names *n, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi = n->nframes;
	while (lo < hi) { /* first access at or above addr - reach */
		size_t mid = (lo + hi) / 2;
		if (n->frames[mid].ea + FRAME_REACH < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t cand[FRAME_TRIES], nc = 0;
	for (size_t i = lo; i < n->nframes && n->frames[i].ea <= addr + FRAME_REACH; i++) {
		/* keep the FRAME_TRIES nearest in time to the current event */
		const struct names_frame *f = &n->frames[i];
		uint64_t d = f->seq <= n->seq ? n->seq - f->seq : (f->seq - n->seq) + (UINT64_MAX >> 1);
		size_t at = nc < FRAME_TRIES ? nc++ : FRAME_TRIES;
		while (at > 0) {
			const struct names_frame *g = &n->frames[cand[at - 1]];
			uint64_t dg = g->seq <= n->seq ? n->seq - g->seq : (g->seq - n->seq) + (UINT64_MAX >> 1);
			if (dg <= d)
				break;
			if (at < FRAME_TRIES)
				cand[at] = cand[at - 1];
			at--;
		}
		if (at < FRAME_TRIES)
			cand[at] = i;
	}
	for (size_t c = 0; c < nc; c++) {
		const struct names_frame *f = &n->frames[cand[c]];
		if (sym_stack_name(n->sym, f->site_mod, f->site_off, f->ea, addr, buf, len))
			return buf;
	}
	return NULL;
}

void names_at(struct names *n, uint64_t seq)
{
	n->seq = seq;
	while (n->cur + 1 < n->ngen && seq >= n->gen_start[n->cur + 1])
		n->cur++;
	while (n->cur > 0 && seq < n->gen_start[n->cur])
		n->cur--;
}

void names_close(struct names *n)
{
	for (size_t g = 0; n->gen && g < n->ngen; g++)
		if (n->gen[g] != n->sym)
			sym_free(n->gen[g]);
	free(n->gen);
	free(n->gen_start);
	free(n->heap);
	free(n->heap_end);
	free(n->frames);
	sym_free(n->sym);
	memset(n, 0, sizeof *n);
}

const char *names_frame(struct names *n, unsigned mod, uint64_t off, int is_return,
			char *buf, size_t len, const char **func)
{
	struct sym_loc loc;
	*func = NULL;
	if (sym_site(n->sym, mod, off, is_return, &loc) == 0)
		*func = loc.func;
	return sym_site_str(n->sym, mod, off, is_return, buf, len);
}

const char *names_site(struct names *n, const struct avt_event *ev, char *buf, size_t len,
		       const char **func)
{
	*func = NULL;
	if (ev->site_mod == AVT_MOD_NONE && ev->site_off == 0) {
		buf[0] = 0;
		return NULL;
	}
	return names_frame(n, ev->site_mod, ev->site_off, !(ev->flags & AVT_F_SITE_EXACT), buf,
			   len, func);
}

const char *names_obj(struct names *n, uint64_t addr, char *buf, size_t len)
{
	struct sym *s = n->gen && n->gen[n->cur] ? n->gen[n->cur] : n->sym;
	const char *name = sym_var_name(s, addr, buf, len);
	if (!name && n->nheap)
		name = heap_name(n, addr, buf, len);
	if (!name && n->nframes)
		name = stack_name(n, addr, buf, len);
	return name;
}

const char *names_obj_or_addr(struct names *n, uint64_t addr, char *buf, size_t len)
{
	if (!names_obj(n, addr, buf, len))
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}

struct trace *load_trace(const char *dir)
{
	char path[4096], err[512];
	struct stat st;
	/* a directory holds trace.avt; a file is a trace itself (replays/NNNN.avt) */
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode))
		snprintf(path, sizeof path, "%s", dir);
	else
		snprintf(path, sizeof path, "%s/trace.avt", dir);
	struct trace *t = trace_read(path, err, sizeof err);
	if (!t)
		avt_error("%s", err);
	return t;
}
