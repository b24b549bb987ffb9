/*
 * c11threads: the same hooks through <threads.h>.
 *
 *   main:    thrd_create(waiter), thrd_create(bumper), thrd_join x2
 *   waiter:  mtx_lock(&c11_lock); thrd_create(signaller);
 *            while (!handed_off) cnd_wait(&c11_cond, &c11_lock);
 *            mtx_unlock; thrd_join(signaller); 3 locked increments
 *   signaller: mtx_lock (blocks until the waiter is inside cnd_wait, the
 *            only place it gives the lock up); handed_off = 1;
 *            cnd_signal(&c11_cond); mtx_unlock; 3 locked increments
 *   bumper:  2 locked increments
 * So the waiter waits exactly once under any schedule.
 *
 * Usage: c11threads
 * Exits 0 iff c11_counter == 8 and the hand-off happened.
 *
 * A recording must contain, under any schedule:
 *   acquire  obj_name c11_lock   11  (10 mtx_lock + 1 wake from cnd_wait)
 *   release  obj_name c11_lock   10
 *   wait     obj_name c11_cond    1  (func waiter)
 *   signal   obj_name c11_cond    1  (func signaller)
 *   create 3 (2 by T0, 1 by the waiter), join 3; 4 threads
 */
#include <stdio.h>
#include <threads.h>

mtx_t c11_lock;
cnd_t c11_cond;
int handed_off;
long c11_counter;

__attribute__((noinline)) static void increment(void)
{
	mtx_lock(&c11_lock);
	c11_counter++;
	mtx_unlock(&c11_lock);
}

__attribute__((noinline)) static int signaller(void *arg)
{
	(void)arg;
	mtx_lock(&c11_lock);
	handed_off = 1;
	cnd_signal(&c11_cond); /* SIGNAL LINE */
	mtx_unlock(&c11_lock);
	for (int i = 0; i < 3; i++)
		increment();
	return 0;
}

__attribute__((noinline)) static int waiter(void *arg)
{
	thrd_t sig;
	(void)arg;
	mtx_lock(&c11_lock);
	if (thrd_create(&sig, signaller, NULL) != thrd_success)
		return 1;
	while (!handed_off)
		cnd_wait(&c11_cond, &c11_lock); /* WAIT LINE */
	mtx_unlock(&c11_lock);
	thrd_join(sig, NULL);
	for (int i = 0; i < 3; i++)
		increment();
	return 0;
}

__attribute__((noinline)) static int bumper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++)
		increment();
	return 0;
}

int main(void)
{
	thrd_t w, b;
	int wres = 1;
	if (mtx_init(&c11_lock, mtx_plain) != thrd_success ||
	    cnd_init(&c11_cond) != thrd_success)
		return 2;
	if (thrd_create(&w, waiter, NULL) != thrd_success ||
	    thrd_create(&b, bumper, NULL) != thrd_success)
		return 2;
	thrd_join(w, &wres);
	thrd_join(b, NULL);

	printf("c11_counter=%ld\n", c11_counter);
	return wres == 0 && handed_off && c11_counter == 8 ? 0 : 1;
}
