/*
 * Results of static decoding shared by the processes of one exploration
 * (tracer.h: tracer_share_decoding).
 *
 * Every explored run is its own process, forked from explore's parent,
 * and plants the same hooks into the same libc: without this, each run
 * decodes the same functions again (bpt_insert_entry: about 2 ms of a
 * 10 ms run).  The parent maps a table shared with every process it forks
 * afterwards; a run that decodes something publishes the result under a
 * key that is a hash of everything the result depends on (the bytes
 * decoded, their address, their length), and the next runs look it up.
 *
 * The table is open addressing over 64-bit keys (0: empty) with a 32-bit
 * value each.  A writer claims an empty slot (compare-and-swap to BUSY),
 * writes the value, then publishes the key (release), so a reader that
 * sees the key sees its value; a reader passes a BUSY slot by.  Two runs
 * that decode the same thing at once may both publish it, in two slots,
 * with the same value.  A full table just stops caching.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cache.h"
#include "tracer.h"

#define CACHE_SLOTS 8192u /* a power of two */
#define CACHE_PROBES 32u
#define CACHE_BUSY UINT64_MAX /* a slot being filled */

struct cache_slot {
	_Atomic uint64_t key;
	_Atomic uint32_t val;
	uint32_t pad;
};

/* Blobs (a module's decoded access sites): a shared arena filled from
 * its start; a blob's slot value is its offset / 16.  Pages are touched
 * only when used. */
#define ARENA_SIZE (256ull << 20)

struct arena {
	_Atomic uint64_t used;     /* bytes handed out, from 64 */
};

static struct cache_slot *table;
static struct arena *arena;

int tracer_share_decoding(void)
{
	if (table)
		return 0;
	void *p = mmap(NULL, CACHE_SLOTS * sizeof *table, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	void *a = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a != MAP_FAILED) {
		arena = a;
		atomic_store(&arena->used, 64);
	}
	table = p;
	return 0;
}

const void *cache_get_blob(uint64_t key, size_t *len)
{
	uint32_t v;
	if (!arena || !cache_get(key, &v))
		return NULL;
	const uint64_t *hdr = (const uint64_t *)(const void *)((const char *)arena + (uint64_t)v * 16);
	*len = (size_t)hdr[0];
	return hdr + 2;
}

void cache_put_blob(uint64_t key, const void *data, size_t len)
{
	if (!arena)
		return;
	uint64_t need = (16 + (uint64_t)len + 15) & ~15ull;
	uint64_t off = atomic_fetch_add(&arena->used, need);
	if (off + need > ARENA_SIZE || off / 16 > UINT32_MAX)
		return; /* full: the space is lost, nothing else */
	uint64_t *hdr = (uint64_t *)(void *)((char *)arena + off);
	hdr[0] = len;
	memcpy(hdr + 2, data, len);
	cache_put(key, (uint32_t)(off / 16)); /* release: the blob before its key */
}

uint64_t cache_key(uint64_t seed, const void *data, size_t len)
{
	/* FNV-1a over the bytes, then a final mix; never 0 */
	uint64_t h = 0xcbf29ce484222325ull ^ seed;
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h && h != CACHE_BUSY ? h : 1;
}

uint64_t cache_file_key(uint64_t seed, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return 0;
	uint64_t id[5] = { st.st_dev, st.st_ino, (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
			   (uint64_t)st.st_mtim.tv_nsec };
	return cache_key(cache_key(seed, path, strlen(path)), id, sizeof id);
}

bool cache_get(uint64_t key, uint32_t *val)
{
	if (!table)
		return false;
	for (uint32_t i = 0; i < CACHE_PROBES; i++) {
		struct cache_slot *s = &table[(key + i) & (CACHE_SLOTS - 1)];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (!k)
			return false;
		if (k == key) {
			*val = atomic_load_explicit(&s->val, memory_order_relaxed);
			return true;
		}
	}
	return false;
}

void cache_put(uint64_t key, uint32_t val)
{
	if (!table)
		return;
	for (uint32_t i = 0; i < CACHE_PROBES; i++) {
		struct cache_slot *s = &table[(key + i) & (CACHE_SLOTS - 1)];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == key)
			return;
		if (k)
			continue;
		/* an empty slot: claim it (BUSY), then its value, then its key */
		uint64_t empty = 0;
		if (!atomic_compare_exchange_strong_explicit(&s->key, &empty, CACHE_BUSY,
							    memory_order_acquire, memory_order_acquire))
			continue;
		atomic_store_explicit(&s->val, val, memory_order_relaxed);
		atomic_store_explicit(&s->key, key, memory_order_release);
		return;
	}
}
