/*
 * affinity: appends the CPUs it may run on (its Cpus_allowed_list) to the
 * file argv[1], one line per run; two threads take a lock once each so that
 * it has events.  Correct program.
 *
 * Usage: affinity FILE
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *worker(void *arg)
{
	pthread_mutex_lock(&m);
	count++;
	pthread_mutex_unlock(&m);
	return arg;
}

int main(int argc, char **argv)
{
	char line[256];
	if (argc < 2)
		return 2;
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	worker(NULL);
	pthread_join(t, NULL);
	FILE *in = fopen("/proc/self/status", "r"), *out = fopen(argv[1], "a");
	if (!in || !out)
		return 2;
	while (fgets(line, sizeof line, in))
		if (!strncmp(line, "Cpus_allowed_list:", 18))
			fputs(line, out);
	fclose(in);
	fclose(out);
	return count == 2 ? 0 : 1;
}
