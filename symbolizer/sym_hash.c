#include "sym_hash.h"

#include <stdlib.h>

void sym_hash_init(struct sym_hash *h)
{
	h->slot = NULL;
	h->cap = 0;
	h->n = 0;
}

static void free_values(struct sym_hash *h, void (*free_val)(void *))
{
	if (!free_val)
		return;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slot[i].used)
			free_val(h->slot[i].val);
}

void sym_hash_release(struct sym_hash *h, void (*free_val)(void *))
{
	free_values(h, free_val);
	free(h->slot);
	sym_hash_init(h);
}

void sym_hash_clear(struct sym_hash *h, void (*free_val)(void *))
{
	free_values(h, free_val);
	for (size_t i = 0; i < h->cap; i++)
		h->slot[i].used = 0;
	h->n = 0;
}

/* Sites are small offsets that differ in their low bits and addresses are
 * aligned: mix all bits so neither clusters in a power-of-two table. */
static uint64_t mix(uint64_t k1, uint64_t k2)
{
	uint64_t x = k1 * 0x9e3779b97f4a7c15ull ^ k2;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

struct sym_hash_slot *sym_hash_find(const struct sym_hash *h, uint64_t k1, uint64_t k2)
{
	if (!h->cap)
		return NULL;
	size_t mask = h->cap - 1;
	for (size_t i = mix(k1, k2) & mask;; i = (i + 1) & mask) {
		struct sym_hash_slot *sl = &h->slot[i];
		if (!sl->used)
			return NULL;
		if (sl->k1 == k1 && sl->k2 == k2)
			return sl;
	}
}

static void insert(struct sym_hash_slot *slot, size_t cap, uint64_t k1, uint64_t k2,
		   void *val)
{
	size_t mask = cap - 1;
	size_t i = mix(k1, k2) & mask;
	while (slot[i].used)
		i = (i + 1) & mask;
	slot[i] = (struct sym_hash_slot){ k1, k2, val, 1 };
}

static int grow(struct sym_hash *h)
{
	size_t cap = h->cap ? h->cap * 2 : 64;
	struct sym_hash_slot *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slot[i].used)
			insert(slot, cap, h->slot[i].k1, h->slot[i].k2, h->slot[i].val);
	free(h->slot);
	h->slot = slot;
	h->cap = cap;
	return 0;
}

int sym_hash_put(struct sym_hash *h, uint64_t k1, uint64_t k2, void *val)
{
	/* Keep the load under one half so probe runs stay short. */
	if ((h->n + 1) * 2 > h->cap && grow(h) < 0)
		return -1;
	insert(h->slot, h->cap, k1, k2, val);
	h->n++;
	return 0;
}
