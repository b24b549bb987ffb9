/*
 * explore_abastack: the ABA bug of a lock-free stack (a Treiber stack
 * with a compare-and-swap loop, C11 atomics, no tags), a target for
 * `avtrace explore` whose bug needs several preemptions inside the CAS
 * loop.  No annotations: its accesses become events only with access
 * breakpoints.
 *
 * main pushes the nodes C, B, A (top: A -> B -> C), then creates the
 * victim (T1) and the thief (T2).  The victim pops once and keeps its
 * node.  The thief pops twice (A, then B), keeps the second and pushes
 * the first back.  Every order of whole operations is fine; the failing
 * one preempts the victim inside pop(), between reading top (A) with its
 * next (B) and its compare-and-swap:
 *   T1 reads top = A, next = B;  T2 pops A, pops B, pushes A;
 *   T1's CAS(top: A -> B) succeeds: B, which T2 holds, is back on top
 * and main's check finds a node both on the stack and owned: SIGABRT in
 * T0 at CHECK LINE.  That needs the victim preempted at one access and
 * resumed only after the thief's three operations (their loads, stores
 * and CASes).  The thief starts with busy work (DELAY), so natively the
 * victim is done first; serialized by the recorder (main runs until it
 * blocks in pthread_join, then T1, then T2) too.
 *
 * Usage: explore_abastack [DELAY=1000000]   (loop iterations)
 * Prints "victim=N thief=N stack=N..."; exits 0, or SIGABRT.
 *
 * Recorded events, 27, before access breakpoints: the thread events and
 * the accesses of the globals record watches by itself (top, delay):
 *   T0 start, write delay, 3 x (read top, write top) (push), create T1,
 *      create T2, join T1, join T2, read top, exit
 *   T1: start, read top, write top (its CAS), exit
 *   T2: start, read delay, 3 x (read top, write top), exit
 * A watchpoint reports an access after it, and the window is between the
 * load of old->next (a node: not watched) and the CAS: no event falls in
 * it, so exploration cannot find the bug yet; with access breakpoints
 * (an event before the CAS instruction) it can.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NODES 3

struct node {
	struct node *next;
	int id;
};

static struct node nodes[NODES];
static _Atomic(struct node *) top;
static int owner[NODES]; /* 0 on the stack, else the thread that keeps it */
static long delay;

__attribute__((noinline)) static void busy(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

__attribute__((noinline)) static struct node *pop(void)
{
	struct node *old = atomic_load(&top), *next;
	do {
		if (!old)
			return NULL;
		next = old->next; /* the window: old may be popped and pushed back */
	} while (!atomic_compare_exchange_weak(&top, &old, next));
	return old;
}

__attribute__((noinline)) static void push(struct node *n)
{
	struct node *old = atomic_load(&top);
	do
		n->next = old;
	while (!atomic_compare_exchange_weak(&top, &old, n));
}

static void *victim(void *arg)
{
	struct node *n = pop();
	if (n)
		owner[n->id] = 1;
	return NULL;
}

static void *thief(void *arg)
{
	busy(delay); /* natively: the victim is done first */
	struct node *a = pop(), *b = pop();
	if (b)
		owner[b->id] = 2;
	if (a)
		push(a);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	for (int i = NODES - 1; i >= 0; i--) {
		nodes[i].id = i;
		push(&nodes[i]);
	}
	if (pthread_create(&t1, NULL, victim, NULL) != 0 ||
	    pthread_create(&t2, NULL, thief, NULL) != 0)
		return 2;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	int on_stack_and_owned = 0;
	printf("victim=%d thief=%d stack=", owner[0] == 1 ? 0 : owner[1] == 1 ? 1 : 2,
	       owner[0] == 2 ? 0 : owner[1] == 2 ? 1 : 2);
	for (struct node *n = atomic_load(&top); n; n = n->next) {
		printf("%d", n->id);
		on_stack_and_owned += owner[n->id] != 0;
	}
	printf("\n");
	assert(on_stack_and_owned == 0); /* CHECK LINE */
	return 0;
}
