/*
 * bench/agent's -O0 access events: two threads each add 1 to one of eight
 * shared longs through a pointer, N times (default 100,000).  Built -O0:
 * the load and the store are 4-byte instructions (`mov (%rax,%rdx,8)`),
 * shorter than a jmp, so their access breakpoints are covered with the
 * instructions after them (docs/memory-access.md).  Racy on purpose: it
 * is only timed.
 */
#include <pthread.h>
#include <stdlib.h>
struct s { long v[8]; };
static struct s shared;
static long n;
static void *work(void *arg)
{
	struct s *p = arg;
	for (long i = 0; i < n; i++)
		p->v[i & 7] += 1;
	return NULL;
}
int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 100000;
	pthread_t a, b;
	pthread_create(&a, NULL, work, &shared);
	pthread_create(&b, NULL, work, &shared);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
