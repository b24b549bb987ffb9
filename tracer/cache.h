/*
 * Decoding results shared across an exploration's runs (cache.c; a no-op
 * unless tracer_share_decoding() was called before they were forked).
 */
#ifndef AVT_TRACER_CACHE_H
#define AVT_TRACER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key for a result: a hash of what it depends on (seed: the kind of
 * result and any scalar inputs), never 0. */
uint64_t cache_key(uint64_t seed, const void *data, size_t len);
/* A key for a result that depends on a file's contents: its path, device,
 * inode, size and modification time, and seed; 0 if it cannot be stat'ed
 * (then do not cache). */
uint64_t cache_file_key(uint64_t seed, const char *path);
bool cache_get(uint64_t key, uint32_t *val);
void cache_put(uint64_t key, uint32_t val);
/* The same for a blob of bytes: cache_get_blob's pointer is into shared
 * memory (do not write it), valid for the life of the process. */
const void *cache_get_blob(uint64_t key, size_t *len);
void cache_put_blob(uint64_t key, const void *data, size_t len);

#endif
