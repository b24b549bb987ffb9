/*
 * cancel_wait: pthread_cancel of threads blocked in pthread_cond_wait and
 * in sleep(100).  The waiter takes `cw_lock`, says it waits (cw_waiting,
 * cw_ready), and waits for ever on `cw_never` with a cleanup handler that
 * unlocks `cw_lock`; the sleeper posts `cw_sleeping` and sleeps 100 s.
 * main cancels both once they are on their way, joins both and takes
 * `cw_lock` once more (the handler must have unlocked it).
 *
 * Usage: cancel_wait
 * Prints "waiter canceled, sleeper canceled"; exit 0.  Natively it ends
 * at once: a recording must too (a lost cancel sleeps 100 s).
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

pthread_mutex_t cw_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cw_never = PTHREAD_COND_INITIALIZER;
pthread_cond_t cw_ready = PTHREAD_COND_INITIALIZER;
int cw_waiting;
sem_t cw_sleeping;

static void unlock_it(void *m)
{
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cw_lock);
	pthread_cleanup_push(unlock_it, &cw_lock);
	cw_waiting = 1;
	pthread_cond_signal(&cw_ready);
	for (;;)
		pthread_cond_wait(&cw_never, &cw_lock);
	pthread_cleanup_pop(1);
	return NULL;
}

__attribute__((noinline)) static void *sleeper(void *arg)
{
	(void)arg;
	sem_post(&cw_sleeping);
	sleep(100);
	return NULL;
}

int main(void)
{
	pthread_t w, s;
	void *rw, *rs;
	sem_init(&cw_sleeping, 0, 0);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&s, NULL, sleeper, NULL);
	pthread_mutex_lock(&cw_lock);
	while (!cw_waiting) /* it released cw_lock: it is in its wait */
		pthread_cond_wait(&cw_ready, &cw_lock);
	pthread_mutex_unlock(&cw_lock);
	sem_wait(&cw_sleeping);
	pthread_cancel(w);
	pthread_cancel(s);
	pthread_join(w, &rw);
	pthread_join(s, &rs);
	pthread_mutex_lock(&cw_lock);
	pthread_mutex_unlock(&cw_lock);
	printf("waiter %s, sleeper %s\n", rw == PTHREAD_CANCELED ? "canceled" : "returned",
	       rs == PTHREAD_CANCELED ? "canceled" : "returned");
	return 0;
}
