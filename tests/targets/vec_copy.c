/*
 * vec_copy: a bulk copy that reads the source's size under its lock, then
 * re-takes the lock for each element, while another thread clears the
 * source (an atomicity violation across critical sections of one lock).
 *
 *   copier (created first):  lock src.m; n = src.n; unlock;
 *                            for i < n: lock src.m; dst[i] = src.data[i]; unlock
 *   clearer (created second, after long busy work): lock src.m;
 *                            free(src.data); src.data = NULL; src.n = 0; unlock
 *
 * In the natural run the clearer comes after the whole copy and the program
 * exits 0.  If the clear falls between the size read and an element copy,
 * the copier loads through NULL at the line marked COPY LINE: SIGSEGV.
 *
 * Usage: vec_copy [DELAY=150000000]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4

struct vec {
	pthread_mutex_t m;
	long *data;
	long n;
};

struct vec src = { .m = PTHREAD_MUTEX_INITIALIZER };
long dst[N];
static long delay = 150000000;

__attribute__((noinline)) static long vec_size(struct vec *v)
{
	pthread_mutex_lock(&v->m); /* SIZE LOCK LINE */
	long n = v->n;
	pthread_mutex_unlock(&v->m);
	return n;
}

__attribute__((noinline)) static void vec_copy(struct vec *v, long *out)
{
	long n = vec_size(v);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&v->m); /* COPY LOCK LINE */
		out[i] = v->data[i]; /* COPY LINE */
		pthread_mutex_unlock(&v->m);
	}
}

__attribute__((noinline)) static void vec_clear(struct vec *v)
{
	pthread_mutex_lock(&v->m); /* CLEAR LOCK LINE */
	free(v->data);
	v->data = NULL;
	v->n = 0;
	pthread_mutex_unlock(&v->m);
}

static void *copier(void *arg)
{
	(void)arg;
	vec_copy(&src, dst);
	return NULL;
}

static void *clearer(void *arg)
{
	(void)arg;
	for (volatile long i = 0; i < delay; i++)
		;
	vec_clear(&src);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc > 1)
		delay = atol(argv[1]);
	src.data = calloc(N, sizeof *src.data);
	for (long i = 0; i < N; i++)
		src.data[i] = i + 1;
	src.n = N;
	pthread_create(&a, NULL, copier, NULL);
	pthread_create(&b, NULL, clearer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("copied %ld %ld %ld %ld\n", dst[0], dst[1], dst[2], dst[3]);
	return 0;
}
