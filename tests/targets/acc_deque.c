/*
 * acc_deque (access breakpoints, shape 4): a heap work queue reached
 * through pointers; the thief claims an item with `lock cmpxchg`, the
 * owner with a plain load and store.  Unannotated.
 *
 *   owner (T1):  h = q->head (OWNER READ LINE); if (h < q->tail) {
 *                q->head = h + 1 (OWNER WRITE LINE); take(q, q->buf[h]) }
 *   thief (T2):  h = q->head; if (h < q->tail &&
 *                CAS(&q->head, h, h + 1) (THIEF CAS LINE)) take(q, q->buf[h])
 *   take:        q->taken[item]++; taken twice: "item taken twice", exit 1
 *
 * The thief's compare-and-swap between the owner's load and store of
 * q->head (an RWW) hands one item to both.  Natural run: the owner
 * takes ITEMS/2, then the thief the rest: exit 0.
 * Built -O0 -g (bin/acc_deque) and -O2 -g (bin/acc_deque_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 4

struct queue {
	long head, tail;
	int buf[ITEMS];
	int taken[ITEMS];
};

__attribute__((noinline)) static void take(struct queue *q, int item)
{
	if (q->taken[item]++) {
		fprintf(stderr, "item %d taken twice\n", item);
		exit(1);
	}
}

__attribute__((noinline)) static void *owner(void *arg)
{
	struct queue *q = arg;
	for (int i = 0; i < ITEMS / 2; i++) {
		long h = q->head; /* OWNER READ LINE */
		if (h < q->tail) {
			q->head = h + 1; /* OWNER WRITE LINE */
			take(q, q->buf[h]);
		}
	}
	return NULL;
}

__attribute__((noinline)) static void *thief(void *arg)
{
	struct queue *q = arg;
	for (int i = 0; i < ITEMS / 2; i++) {
		long h = q->head;
		if (h < q->tail && __atomic_compare_exchange_n(&q->head, &h, h + 1, 0, __ATOMIC_SEQ_CST,
							      __ATOMIC_SEQ_CST)) /* THIEF CAS LINE */
			take(q, q->buf[h]);
	}
	return NULL;
}

int main(void)
{
	struct queue *q = calloc(1, sizeof *q);
	pthread_t t1, t2;
	if (!q)
		return 2;
	for (int i = 0; i < ITEMS; i++)
		q->buf[i] = i;
	q->tail = ITEMS;
	pthread_create(&t1, NULL, owner, q);
	pthread_create(&t2, NULL, thief, q);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("head=%ld\n", q->head);
	free(q);
	return 0;
}
