/*
 * acc_deque_ok (access breakpoints, correct counterpart of shape 4): the
 * acc_deque work queue with the owner claiming items by compare-and-swap
 * too: every item is taken once under any schedule; no report.
 * Built -O0 -g (bin/acc_deque_ok) and -O2 -g (bin/acc_deque_ok_O2).
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
		long h = q->head;
		if (h < q->tail && __atomic_compare_exchange_n(&q->head, &h, h + 1, 0, __ATOMIC_SEQ_CST,
							      __ATOMIC_SEQ_CST))
			take(q, q->buf[h]);
	}
	return NULL;
}

__attribute__((noinline)) static void *thief(void *arg)
{
	struct queue *q = arg;
	for (int i = 0; i < ITEMS / 2; i++) {
		long h = q->head;
		if (h < q->tail && __atomic_compare_exchange_n(&q->head, &h, h + 1, 0, __ATOMIC_SEQ_CST,
							      __ATOMIC_SEQ_CST))
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
