/*
 * own_malloc: a program linked with an allocator of its own
 * (tests/targets/alloc/bumpalloc.c, libbumpalloc.so, as redis-server is
 * with jemalloc).  Natively every malloc is the allocator's, and so must
 * it be under avtrace: the agent's malloc (preloaded) must not take the
 * calls to glibc's, or the allocator's malloc_usable_size meets a block
 * it never made and aborts.  Two threads fill blocks under a mutex;
 * exits 0 when every block is the allocator's, with its size.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static char *blocks[64];
static int n;

__attribute__((noinline)) static void *worker(void *arg)
{
	for (int i = 0; i < 16; i++) {
		size_t size = 16 + (size_t)(i * 8);
		char *p = malloc(size);
		if (!p || malloc_usable_size(p) != size) /* USABLE LINE */
			abort();
		memset(p, 'a' + i, size);
		pthread_mutex_lock(&m);
		blocks[n++] = p;
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(void)
{
	pthread_t t[2];
	char *s = strdup("libc's own calls allocate too");
	if (!s || malloc_usable_size(s) != strlen(s) + 1)
		abort();
	free(s);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++)
		free(blocks[i]);
	printf("%d blocks, all the allocator's\n", n);
	return 0;
}
