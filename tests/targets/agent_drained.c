/*
 * agent_drained: the supervisor takes the agent's records while the thread
 * that made them runs on (docs/agent.md, "Drained while the program
 * runs"), not only at its next ptrace stop.  The thread makes N lock and
 * unlock pairs in-process, then makes no event and no ptrace stop: it
 * waits, reading the shared region, until avtrace has taken every record
 * (tail == head).  Recorded with a slice long enough that nothing else
 * stops it (--slice 60000), it ends only if records are taken while it
 * runs; drained at stops alone, it waits for the slice.
 *
 * Usage: agent_drained [N=1000]
 * Prints "drained N" (or "no agent" when AVTRACE_AGENT_FD is not set);
 * exits 0.  Lock `m`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/mman.h>

#include "trace/agent_proto.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	const char *fd = getenv(AVT_AGENT_ENV_FD);
	if (!fd) {
		printf("no agent\n");
		return 0;
	}
	/* the region's header, mapped before the events: mapping it makes none */
	struct avt_agent_hdr *h = mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, atoi(fd), 0);
	if (h == MAP_FAILED) {
		perror("agent_drained: mmap");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	while (atomic_load(&h->tail) != atomic_load(&h->head))
		;
	printf("drained %ld\n", n);
	return 0;
}
