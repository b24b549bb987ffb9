/*
 * rwlock: R readers and W writers on the global pthread_rwlock_t
 * `table_lock`.  Each writer does I write-locked updates of `table` (two
 * fields kept equal); each reader does I read-locked checks that they are.
 *
 * Usage: rwlock [R=3] [W=2] [I=20]
 * Exits 0 iff no reader saw a torn table and table.a == W*I.
 *
 * A recording must contain, under any schedule:
 *   rd_acquire  obj_name table_lock   R*I   (60 by default), func read_table
 *   wr_acquire  obj_name table_lock   W*I   (40), func write_table
 *   release     obj_name table_lock   (R+W)*I   (100)
 *   create R+W (by T0), join R+W (by T0)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
struct {
	long a, b;
} table;

static long iterations;

__attribute__((noinline)) static int read_table(void)
{
	pthread_rwlock_rdlock(&table_lock); /* RDLOCK LINE */
	int ok = table.a == table.b;
	pthread_rwlock_unlock(&table_lock);
	return ok;
}

__attribute__((noinline)) static void write_table(void)
{
	pthread_rwlock_wrlock(&table_lock); /* WRLOCK LINE */
	table.a++;
	table.b++;
	pthread_rwlock_unlock(&table_lock);
}

__attribute__((noinline)) static void *reader(void *arg)
{
	long torn = 0;
	(void)arg;
	for (long i = 0; i < iterations; i++)
		if (!read_table())
			torn++;
	return (void *)(intptr_t)torn;
}

__attribute__((noinline)) static void *writer(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++)
		write_table();
	return NULL;
}

static long arg_or(int argc, char **argv, int i, long def)
{
	return argc > i ? strtol(argv[i], NULL, 10) : def;
}

int main(int argc, char **argv)
{
	long nread = arg_or(argc, argv, 1, 3);
	long nwrite = arg_or(argc, argv, 2, 2);
	iterations = arg_or(argc, argv, 3, 20);
	if (nread < 0 || nwrite < 0 || nread + nwrite > 256 || iterations < 0) {
		fprintf(stderr, "usage: rwlock [READERS=3] [WRITERS=2] [ITERATIONS=20]\n");
		return 2;
	}

	pthread_t tids[256];
	long n = 0;
	for (long i = 0; i < nread || i < nwrite; i++) {
		if (i < nwrite && pthread_create(&tids[n++], NULL, writer, NULL) != 0)
			return 2;
		if (i < nread && pthread_create(&tids[n++], NULL, reader, NULL) != 0)
			return 2;
	}
	long torn = 0;
	for (long i = 0; i < n; i++) {
		void *ret;
		pthread_join(tids[i], &ret);
		torn += (long)(intptr_t)ret;
	}

	printf("writes=%ld torn=%ld\n", table.a, torn);
	return torn == 0 && table.a == nwrite * iterations ? 0 : 1;
}
