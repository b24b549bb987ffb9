/*
 * A traced process (struct process, tracer_int.h): its memory, its address
 * space, its lock model and its threads.  The session (struct tracer) holds
 * its processes; every thread belongs to one (tracer_priv_thread.proc), so
 * a feature handling a thread's stop works on that thread's process.
 * Calls down only (aspace.c, model.c, the caches).
 */
#include <stdlib.h>
#include <unistd.h>

#include "cfi.h"
#include "symbolizer/sym.h"
#include "tracer_int.h"

struct process *process_new(pid_t pid)
{
	struct process *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->pid = pid;
	p->memfd = -1;
	aspace_init(&p->as);
	model_init(&p->model);
	return p;
}

static void free_threads(struct process *p)
{
	for (size_t i = 0; i < p->nthr; i++) {
		if (p->thr[i])
			free(p->thr[i]->priv);
		free(p->thr[i]);
	}
	free(p->thr);
	p->thr = NULL;
	p->nthr = p->capthr = 0;
	free(p->live);
	p->live = NULL;
	p->nlive = p->caplive = 0;
	free(p->fsmap);
	p->fsmap = NULL;
	p->fscap = p->fsused = 0;
}

void process_free(struct process *p)
{
	if (!p)
		return;
	free_threads(p);
	sym_free(p->as.sym);
	cfi_cache_free(p->as.cfi);
	aspace_release(&p->as);
	model_release(&p->model);
	if (p->memfd >= 0)
		close(p->memfd);
	free(p);
}
