/*
 * acc_treiber_ok (access breakpoints, correct counterpart of shape 5): a
 * Treiber stack in C11 atomics whose push and pop both retry a
 * compare-and-swap.  No node is ever owned twice: `avtrace test` must
 * report nothing.
 * Built -O0 -g (bin/acc_treiber_ok) and -O2 -g (bin/acc_treiber_ok_O2).
 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NODES 4

struct node {
	struct node *next;
	int id;
	int owned;
};

static struct node nodes[NODES];
static _Atomic(struct node *) top;

__attribute__((noinline)) static struct node *pop(void)
{
	struct node *t = atomic_load(&top), *nx;
	do {
		if (!t)
			return NULL;
		nx = t->next;
	} while (!atomic_compare_exchange_weak(&top, &t, nx));
	if (t->owned++) {
		fprintf(stderr, "node %d popped twice\n", t->id);
		exit(1);
	}
	return t;
}

__attribute__((noinline)) static void push(struct node *n)
{
	struct node *t = atomic_load(&top);
	do
		n->next = t;
	while (!atomic_compare_exchange_weak(&top, &t, n));
}

static void *popper(void *arg)
{
	(void)arg;
	pop();
	return NULL;
}

static void *pusher(void *arg)
{
	push(arg);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	for (int i = NODES - 2; i >= 0; i--) { /* stack 0, 1, 2; node 3 is pushed */
		nodes[i].id = i;
		nodes[i].next = atomic_load(&top);
		atomic_store(&top, &nodes[i]);
	}
	nodes[NODES - 1].id = NODES - 1;
	pthread_create(&t1, NULL, popper, NULL);
	pthread_create(&t2, NULL, pusher, &nodes[NODES - 1]);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	int n = 0;
	while (pop())
		n++;
	printf("popped %d more\n", n);
	return 0;
}
