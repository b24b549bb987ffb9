/* -O2 -fomit-frame-pointer: rbp holds data, not a frame chain.  Two
 * threads sum arrays through many pointers live across lock calls (in the
 * callee-saved registers, rbp among them); a debugger that writes at rbp+8
 * changes the sums.  Correct program: the output must match a native run. */
#include <pthread.h>
#include <stdio.h>

#define N 64
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

__attribute__((noinline)) static long mix(long *a, long *b, long *c, long *d, long *e, long *f)
{
	long s = 0;
	for (int i = 0; i < N; i++) {
		pthread_mutex_lock(&m);
		total += a[i] + b[i];
		pthread_mutex_unlock(&m);
		s += c[i] * d[i] - e[i] + f[i];
		a[i] += f[i];
	}
	return s;
}

static long arr[2][6][N];

static void *worker(void *arg)
{
	long (*v)[N] = arg;
	long s = 0;
	for (int r = 0; r < 4; r++)
		s += mix(v[0], v[1], v[2], v[3], v[4], v[5]);
	return (void *)s;
}

int main(void)
{
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 6; k++)
			for (int i = 0; i < N; i++)
				arr[t][k][i] = (t + 1) * (k + 3) * (i + 7) % 1009;
	pthread_t th[2];
	void *r[2];
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, worker, arr[t]);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], &r[t]);
	long check = 0;
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 6; k++)
			for (int i = 0; i < N; i++)
				check = check * 31 + arr[t][k][i];
	printf("sums %ld %ld total %ld check %ld\n", (long)r[0], (long)r[1], total, check);
	return 0;
}
