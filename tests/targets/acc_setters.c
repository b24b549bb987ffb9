/*
 * acc_setters (access breakpoints, shapes 2 and 6): N setter threads each
 * store two plain globals, `a = 1; b = -1;`, and one checker reads both
 * and requires them consistent: (a, b) is (0, 0) or (1, -1).  Unannotated.
 *
 *   setters (T1..TN):  a = 1 (SET A LINE); b = -1 (SET B LINE)
 *   checker (TN+1):    x = a (CHECK A LINE); y = b (CHECK B LINE);
 *                      x == 1 && y != -1: "inconsistent", exit 1
 *
 * Every setter after the first stores values already there: silent
 * stores, which must be recorded as writes (decoded from the instruction,
 * not guessed from the value), or the replay of a schedule that runs the
 * checker first diverges.  The natural run (setters, then the checker)
 * exits 0.  The checker reading a between a setter's two stores fails.
 *
 * Usage: acc_setters [N=4]   (1..64)
 * Built -O0 -g (bin/acc_setters) and -O2 -g (bin/acc_setters_O2).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int a, b;

__attribute__((noinline)) static void *setter(void *arg)
{
	(void)arg;
	a = 1; /* SET A LINE */
	b = -1; /* SET B LINE */
	return NULL;
}

__attribute__((noinline)) static void *checker(void *arg)
{
	(void)arg;
	int x = a; /* CHECK A LINE */
	int y = b; /* CHECK B LINE */
	if (x == 1 && y != -1) {
		fprintf(stderr, "inconsistent: a=%d b=%d\n", x, y);
		exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[65];
	if (n < 1 || n > 64)
		n = 4;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, setter, NULL);
	pthread_create(&t[n], NULL, checker, NULL);
	for (int i = 0; i <= n; i++)
		pthread_join(t[i], NULL);
	printf("a=%d b=%d\n", a, b);
	return 0;
}
