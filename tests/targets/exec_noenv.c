/*
 * exec_noenv: touches a shared global from two threads, then execs
 * acc_events (from its own directory) with "500" and an EMPTY
 * environment: the new image has no LD_PRELOAD, so no in-process agent.
 * The access breakpoints of the new image must then stop at ptrace, as
 * without the agent (its stubs would call an agent that is not there).
 *
 * Usage: exec_noenv [null]   (null: envp is NULL, which Linux takes for
 * an empty environment)
 * Exits with acc_events' status (0); 127 if the exec failed.
 */
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile long before_exec;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		before_exec = before_exec + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	before_exec = 0;
	pthread_join(t, NULL);
	char self[4096], path[4200];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(path, sizeof path, "%s/acc_events", dirname(self));
	char *const args[] = { path, "500", NULL };
	char *const env[] = { NULL };
	execve(path, args, argc > 1 && !strcmp(argv[1], "null") ? NULL : env);
	perror("execve");
	return 127;
}
