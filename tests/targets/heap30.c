/*
 * heap30: 2 threads x N (default 200) rounds of malloc, calloc, realloc
 * and free, handing each round's block to the other thread through a
 * locked box: the other thread reads the block (a shared heap object,
 * named heap#N by its allocation) and frees it.  tests/e2e/test_heap30.sh
 * compares the heap's records made through the in-process agent with
 * those of the ptrace path.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	long v;
	long pad[2];
};

static pthread_mutex_t box_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *box;
static long *total;
static long rounds = 200;

__attribute__((noinline)) static void *worker(void *arg)
{
	long base = (long)arg;
	for (long i = 0; i < rounds; i++) {
		struct node *p = malloc(sizeof *p);
		p->v = base + i;
		char *s = calloc(4, 8);
		s[31] = 1; /* the program's own accesses: events that name the block with its size */
		char *g = realloc(s, 128); /* grows: moved or not, the same records either way */
		if (g)
			s = g;
		memset(s, 1, 128);
		s[127] = 2;
		pthread_mutex_lock(&box_lock);
		struct node *old = box;
		box = p;
		if (old)
			*total += old->v;
		pthread_mutex_unlock(&box_lock);
		free(old);
		free(s);
		free(NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	if (argc > 1)
		rounds = atol(argv[1]);
	total = calloc(1, sizeof *total);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i * 1000000));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (box)
		*total += box->v;
	free(box);
	printf("total=%ld\n", *total);
	long want = 0;
	for (long i = 0; i < rounds; i++)
		want += i + (1000000 + i);
	int ok = *total == want;
	free(total);
	return ok ? 0 : 1;
}
