/*
 * Open-addressing multimap (hmap.h), linear probing, load factor <= 1/2.
 */
#include <stdlib.h>

#include "hmap.h"

void pr_hmap_init(struct pr_hmap *h)
{
	h->key = NULL;
	h->val = NULL;
	h->cap = h->n = 0;
}

void pr_hmap_release(struct pr_hmap *h)
{
	free(h->key);
	free(h->val);
	pr_hmap_init(h);
}

static void put(uint64_t *key, uint32_t *val, size_t cap, uint64_t k, uint32_t v)
{
	size_t i = pr_hash64(k) & (cap - 1);
	while (val[i])
		i = (i + 1) & (cap - 1);
	key[i] = k;
	val[i] = v;
}

static int grow(struct pr_hmap *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 64;
	uint64_t *nk = malloc(ncap * sizeof *nk);
	uint32_t *nv = calloc(ncap, sizeof *nv);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (size_t i = 0; i < h->cap; i++)
		if (h->val[i])
			put(nk, nv, ncap, h->key[i], h->val[i]);
	free(h->key);
	free(h->val);
	h->key = nk;
	h->val = nv;
	h->cap = ncap;
	return 0;
}

int pr_hmap_add(struct pr_hmap *h, uint64_t key, uint32_t val)
{
	if ((h->n + 1) * 2 > h->cap && grow(h) < 0)
		return -1;
	put(h->key, h->val, h->cap, key, val + 1);
	h->n++;
	return 0;
}

int pr_hmap_set(struct pr_hmap *h, uint64_t key, uint32_t val)
{
	for (size_t i = h->cap ? pr_hash64(key) & (h->cap - 1) : 0; h->cap && h->val[i];
	     i = (i + 1) & (h->cap - 1))
		if (h->key[i] == key) {
			h->val[i] = val + 1;
			return 0;
		}
	return pr_hmap_add(h, key, val);
}

bool pr_hmap_next(const struct pr_hmap *h, uint64_t key, size_t *pos, uint32_t *val)
{
	if (!h->cap)
		return false;
	/* *pos counts probes from the key's home slot */
	size_t home = pr_hash64(key) & (h->cap - 1);
	for (size_t i = (home + *pos) & (h->cap - 1); h->val[i]; i = (i + 1) & (h->cap - 1)) {
		++*pos;
		if (h->key[i] == key) {
			*val = h->val[i] - 1;
			return true;
		}
	}
	return false;
}

uint32_t pr_hmap_get(const struct pr_hmap *h, uint64_t key)
{
	size_t pos = 0;
	uint32_t v;
	return pr_hmap_next(h, key, &pos, &v) ? v : UINT32_MAX;
}
