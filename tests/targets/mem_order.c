/*
 * mem_order: an order violation.  main creates a worker and only then
 * publishes the configuration it uses (`config = &cfg`); the worker loads
 * `config` and dereferences it.
 *
 * The worker first does long busy work (DELAY), and main publishes right
 * after pthread_create and then blocks in pthread_join, so in every
 * natural run, native or serialized by the recorder (which runs main
 * until it blocks), the publish comes first and the worker reads
 * cfg.verbose == 1: exit 0.  The order
 *   worker loads config (NULL), main publishes
 * dereferences NULL at the line marked DEREF LINE: SIGSEGV in T1, in
 * `worker`.
 *
 * Built twice (tests/targets/mem/mem.h): bin/mem_order annotated,
 * bin/mem_order_plain without annotations (watch config).  Each annotation
 * shares its line with the access it announces.
 *
 * Usage: mem_order [DELAY=150000000]   (loop iterations)
 * Prints "verbose=1"; exits 0, or SIGSEGV.
 *
 * Annotated recording: T0 write config (PUBLISH LINE) after create T1;
 *   T1 begin (ATOMIC BEGIN), read config (READ CONFIG), end (ATOMIC END).
 * Watched recording (--watch config): T0 write config at PUBLISH LINE,
 *   T1 read config at READ CONFIG.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem/mem.h"

struct config {
	int verbose;
	int level;
};

struct config cfg = { 1, 3 };
struct config *config;
static long delay;

__attribute__((noinline)) static void *worker(void *arg)
{
	struct config *c;
	int verbose;
	mem_busy(delay); /* main publishes meanwhile, in a natural run */
	AVT_ATOMIC_BEGIN(); /* ATOMIC BEGIN */
	AVT_READ(&config); c = config; /* READ CONFIG */
	verbose = c->verbose; /* DEREF LINE */
	AVT_ATOMIC_END(); /* ATOMIC END */
	return (void *)(intptr_t)verbose;
}

int main(int argc, char **argv)
{
	pthread_t tid;
	void *verbose;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;
	if (pthread_create(&tid, NULL, worker, NULL) != 0)
		return 2;
	AVT_WRITE(&config); config = &cfg; /* PUBLISH LINE */
	pthread_join(tid, &verbose);
	printf("verbose=%d\n", (int)(intptr_t)verbose);
	return 0;
}
