/*
 * acc_treiber (access breakpoints, shape 5): a lock-free stack in C11
 * atomics, no pthread call on its paths.  Unannotated.
 *
 *   popper (T1): t = top; nx = t->next; CAS(&top, t, nx) (POP CAS LINE),
 *                retried until it succeeds; the node is marked owned
 *   pusher (T2): n->next = top (PUSH READ LINE); top = n (PUSH STORE LINE):
 *                a load and a store where a compare-and-swap is needed
 *
 * The popper's CAS between the pusher's load and store puts the popped
 * node back on the stack (an RWW on top): main then pops it again, "node
 * 0 popped twice", exit 1.  Natural run: popper, then pusher: exit 0.
 * Built -O0 -g (bin/acc_treiber) and -O2 -g (bin/acc_treiber_O2).
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
	} while (!atomic_compare_exchange_weak(&top, &t, nx)); /* POP CAS LINE */
	if (t->owned++) {
		fprintf(stderr, "node %d popped twice\n", t->id);
		exit(1);
	}
	return t;
}

__attribute__((noinline)) static void push(struct node *n)
{
	n->next = atomic_load(&top); /* PUSH READ LINE */
	atomic_store(&top, n); /* PUSH STORE LINE */
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
