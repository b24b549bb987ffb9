/*
 * sem: semaphore ping-pong.  Thread `pinger` and thread `ponger` hand a
 * ball back and forth K times through the unnamed semaphores `ping_sem`
 * and `pong_sem` (both start at 0): pinger increments `ball`, posts
 * ping_sem, waits on pong_sem; ponger waits on ping_sem, checks and
 * increments `ball`, posts pong_sem.
 *
 * Usage: sem [K=10]
 * Exits 0 iff ball == 2*K and every check held.
 *
 * A recording must contain, under any schedule (K = 10 by default):
 *   sem_post  obj_name ping_sem   K   (func pinger)
 *   sem_wait  obj_name ping_sem   K   (func ponger)
 *   sem_post  obj_name pong_sem   K   (func ponger)
 *   sem_wait  obj_name pong_sem   K   (func pinger)
 *   create 2, join 2
 * The order is forced: for each round, ping_sem post < ping_sem wait <
 * pong_sem post < pong_sem wait.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

sem_t ping_sem, pong_sem;
long ball;

static long rounds;

__attribute__((noinline)) static void *pinger(void *arg)
{
	long bad = 0;
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		ball++;
		sem_post(&ping_sem); /* PING POST LINE */
		sem_wait(&pong_sem); /* PONG WAIT LINE */
		if (ball != 2 * i + 2)
			bad++;
	}
	return (void *)(intptr_t)bad;
}

__attribute__((noinline)) static void *ponger(void *arg)
{
	long bad = 0;
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		sem_wait(&ping_sem); /* PING WAIT LINE */
		if (ball != 2 * i + 1)
			bad++;
		ball++;
		sem_post(&pong_sem); /* PONG POST LINE */
	}
	return (void *)(intptr_t)bad;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
	if (rounds < 0) {
		fprintf(stderr, "usage: sem [ROUNDS=10]\n");
		return 2;
	}
	sem_init(&ping_sem, 0, 0);
	sem_init(&pong_sem, 0, 0);

	pthread_t a, b;
	void *bad_a, *bad_b;
	if (pthread_create(&a, NULL, pinger, NULL) != 0 ||
	    pthread_create(&b, NULL, ponger, NULL) != 0)
		return 2;
	pthread_join(a, &bad_a);
	pthread_join(b, &bad_b);

	printf("ball=%ld\n", ball);
	return ball == 2 * rounds && !bad_a && !bad_b ? 0 : 1;
}
