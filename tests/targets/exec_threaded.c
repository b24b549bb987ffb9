/*
 * exec_threaded: a threaded program that execs after its thread ran.
 * main starts a worker that does one locked increment of `et_counter`
 * under `et_lock`, joins it, then execv()s mutex_counter from its own
 * directory (dirname of argv[0]) with the arguments "2 5".
 *
 * Usage: exec_threaded
 * Prints "et_counter=1" then mutex_counter's "counter=10"; exit 0.
 *
 * The new image hands its threads the pthread_t (TLS) addresses the old
 * one used (ASLR off): a recording must contain, after the exec note,
 * create T2, create T3, then join T2 and join T3 by T0 (never a join of
 * T1, the first image's worker).
 */
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pthread_mutex_t et_lock = PTHREAD_MUTEX_INITIALIZER;
long et_counter;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&et_lock);
	et_counter++;
	pthread_mutex_unlock(&et_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	(void)argc;
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	printf("et_counter=%ld\n", et_counter);
	fflush(stdout);

	char *self = strdup(argv[0]);
	char path[4096];
	snprintf(path, sizeof(path), "%s/mutex_counter", dirname(self));
	char *args[] = { path, "2", "5", NULL };
	execv(path, args);
	perror(path);
	return 127;
}
