/*
 * A small open-addressing hash table from a pair of 64-bit keys to a
 * pointer, for the symbolizer's memo caches.  It stores the pointers but
 * does not own what they point to: sym_hash_release() and sym_hash_clear()
 * hand each value to the free function given (which may be NULL).
 */
#ifndef AVT_SYMBOLIZER_SYM_HASH_H
#define AVT_SYMBOLIZER_SYM_HASH_H

#include <stddef.h>
#include <stdint.h>

struct sym_hash_slot {
	uint64_t k1, k2;
	void *val;
	int used;
};

struct sym_hash {
	struct sym_hash_slot *slot;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

void sym_hash_init(struct sym_hash *h);
void sym_hash_release(struct sym_hash *h, void (*free_val)(void *));
void sym_hash_clear(struct sym_hash *h, void (*free_val)(void *));
/* The slot holding (k1, k2), or NULL if absent. */
struct sym_hash_slot *sym_hash_find(const struct sym_hash *h, uint64_t k1, uint64_t k2);
/* Adds (k1, k2) -> val; the key must be absent.  Returns -1 when out of memory. */
int sym_hash_put(struct sym_hash *h, uint64_t k1, uint64_t k2, void *val);

#endif
