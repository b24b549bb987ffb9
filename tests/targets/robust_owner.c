/*
 * robust_owner: the owner of a robust mutex exits holding it.  The owner
 * thread locks `ro_lock` (PTHREAD_MUTEX_ROBUST), posts `ro_held` and
 * returns without unlocking; the locker waits for `ro_held`, locks
 * `ro_lock` (blocking until the owner is gone), gets EOWNERDEAD, calls
 * pthread_mutex_consistent, counts and unlocks.  main joins both and
 * locks it once more (0 now).
 *
 * Usage: robust_owner
 * Prints "locker got EOWNERDEAD, main got 0, ro_count 3"; exit 0.  A
 * correct program: no deadlock, no report.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

pthread_mutex_t ro_lock;
sem_t ro_held;
int ro_count;
static int locker_rc = -1;

__attribute__((noinline)) static void *owner(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ro_lock);
	ro_count++;
	sem_post(&ro_held);
	return NULL; /* ro_lock still held */
}

__attribute__((noinline)) static void *locker(void *arg)
{
	(void)arg;
	sem_wait(&ro_held);
	locker_rc = pthread_mutex_lock(&ro_lock);
	if (locker_rc == EOWNERDEAD)
		pthread_mutex_consistent(&ro_lock);
	ro_count++;
	pthread_mutex_unlock(&ro_lock);
	return NULL;
}

static const char *rc_name(int rc)
{
	return rc == 0 ? "0" : rc == EOWNERDEAD ? "EOWNERDEAD" : rc == ENOTRECOVERABLE ? "ENOTRECOVERABLE" : "?";
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&ro_lock, &a);
	sem_init(&ro_held, 0, 0);
	pthread_t o, l;
	pthread_create(&o, NULL, owner, NULL);
	pthread_create(&l, NULL, locker, NULL);
	pthread_join(o, NULL);
	pthread_join(l, NULL);
	int rc = pthread_mutex_lock(&ro_lock);
	ro_count++;
	pthread_mutex_unlock(&ro_lock);
	printf("locker got %s, main got %s, ro_count %d\n", rc_name(locker_rc), rc_name(rc), ro_count);
	return locker_rc == EOWNERDEAD && rc == 0 ? 0 : 1;
}
