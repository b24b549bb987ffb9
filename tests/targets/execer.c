/*
 * execer: does 2 locked increments of `exec_counter` under `exec_lock`,
 * then execv()s mutex_counter from its own directory (dirname of argv[0])
 * with the arguments "2 5".
 *
 * Usage: execer
 * Exits with mutex_counter's status (0); 127 if the exec failed.
 *
 * A recording (one trace across the exec) must contain:
 *   acquire  obj_name exec_lock      2,   release obj_name exec_lock     2
 *            (the first image, T0, func increment in execer.c)
 *   acquire  obj_name counter_lock  10,   release obj_name counter_lock 10
 *            (the second image, mutex_counter.c)
 *   create 2, join 2 (both in the second image)
 */
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
long exec_counter;

__attribute__((noinline)) static void increment(void)
{
	pthread_mutex_lock(&exec_lock);
	exec_counter++;
	pthread_mutex_unlock(&exec_lock);
}

int main(int argc, char **argv)
{
	(void)argc;
	increment();
	increment();

	char *self = strdup(argv[0]);
	char path[4096];
	snprintf(path, sizeof(path), "%s/mutex_counter", dirname(self));
	char *args[] = { path, "2", "5", NULL };
	fflush(stdout);
	execv(path, args);
	perror(path);
	return 127;
}
