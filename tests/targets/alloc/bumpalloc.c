/*
 * libbumpalloc.so: an allocator of its own, as jemalloc, tcmalloc or
 * mimalloc are to the programs linked with them: malloc, calloc, realloc,
 * free and malloc_usable_size, from a static arena, each block behind a
 * header with a magic number.  malloc_usable_size of a block it did not
 * hand out aborts, as jemalloc's crashes (redis-server's zmalloc calls
 * malloc, then malloc_usable_size: a block glibc's malloc made is a
 * SIGSEGV there).  Blocks are carved by one atomic add and never
 * reused.  The target: tests/targets/own_malloc.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC 0x62756d70616c6c6full /* "bumpallo" */
#define ARENA (64u << 20)

struct hdr {
	uint64_t magic;
	size_t size;
};

static unsigned char arena[ARENA] __attribute__((aligned(16)));
static size_t used;

void *malloc(size_t n)
{
	size_t need = (sizeof(struct hdr) + n + 15) & ~(size_t)15;
	size_t at = __atomic_fetch_add(&used, need, __ATOMIC_RELAXED);
	if (need > ARENA || at > ARENA - need)
		return NULL;
	struct hdr *h = (struct hdr *)(arena + at);
	h->magic = MAGIC;
	h->size = n;
	return h + 1;
}

size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	struct hdr *h = (struct hdr *)p - 1;
	if ((unsigned char *)p < arena || (unsigned char *)p >= arena + ARENA || h->magic != MAGIC)
		abort(); /* not one of ours */
	return h->size;
}

void free(void *p)
{
	if (p)
		(void)malloc_usable_size(p); /* checks it is ours */
}

void *calloc(size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m)
		return NULL;
	void *p = malloc(n * m);
	if (p)
		memset(p, 0, n * m);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	if (q && p) {
		size_t old = malloc_usable_size(p);
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}
