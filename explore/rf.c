/*
 * Reads-from pairs of a run, as keys (rf.h).
 */
#include <stdlib.h>

#include "rf.h"
#include "rec.h"
#include "trace/log.h"

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* An abstract event: never 0 (0 is the initial value). */
uint64_t xp_rf_event(uint32_t thread, uint64_t site)
{
	return mix(site * 0x9e3779b97f4a7c15ull + thread + 1) | 1;
}

uint64_t xp_rf_key(uint64_t obj, uint64_t reader, uint64_t writer)
{
	return mix(mix(reader ^ obj) + writer);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

size_t xp_rf_sort(uint64_t *a, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0; /* a may be NULL: qsort must not see it */
	qsort(a, n, sizeof *a, cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || a[k - 1] != a[i])
			a[k++] = a[i];
	return k;
}

/* obj -> last writer, open addressing (objects of one run). */
struct lastw {
	uint64_t *obj, *w;
	size_t cap, n;
};

static uint64_t *lastw_slot(struct lastw *t, uint64_t obj)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 256;
		uint64_t *no = calloc(ncap, sizeof *no), *nw = calloc(ncap, sizeof *nw);
		if (!no || !nw) {
			free(no);
			free(nw);
			return NULL;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->obj[i])
				continue;
			size_t h = mix(t->obj[i]) & (ncap - 1);
			while (no[h])
				h = (h + 1) & (ncap - 1);
			no[h] = t->obj[i];
			nw[h] = t->w[i];
		}
		free(t->obj);
		free(t->w);
		t->obj = no;
		t->w = nw;
		t->cap = ncap;
	}
	size_t h = mix(obj) & (t->cap - 1);
	while (t->obj[h] && t->obj[h] != obj)
		h = (h + 1) & (t->cap - 1);
	if (!t->obj[h]) {
		t->obj[h] = obj;
		t->w[h] = 0;
		t->n++;
	}
	return &t->w[h];
}

int xp_rf_keys(const struct avt_event *ev, size_t n, uint64_t **keys, size_t *nkeys)
{
	struct lastw t = { 0 };
	size_t k = 0;

	*nkeys = 0;
	*keys = malloc((n ? n : 1) * sizeof **keys);
	if (!*keys)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		uint64_t obj = xp_event_obj(ev[i].kind, ev[i].obj);
		if (!obj)
			continue;
		uint64_t *w = lastw_slot(&t, obj);
		if (!w)
			goto oom;
		uint64_t me = xp_rf_event(ev[i].thread, xp_site(&ev[i]));
		if (xp_kind_reads(ev[i].kind))
			(*keys)[k++] = xp_rf_key(obj, me, *w);
		if (xp_kind_writes(ev[i].kind))
			*w = me;
	}
	free(t.obj);
	free(t.w);
	*nkeys = xp_rf_sort(*keys, k);
	return 0;
oom:
	free(t.obj);
	free(t.w);
	free(*keys);
	*keys = NULL;
	avt_error("explore: out of memory");
	return -1;
}
