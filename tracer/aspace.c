/*
 * An address space: the breakpoints and their slots, the modules, the
 * hooked functions, the probes, the access breakpoints' state, the caches
 * (struct aspace, tracer_int.h).  Built at exec by the launch code and the
 * features; copied at fork, as the child's memory holds the parent's int3s
 * and slots.  Calls down only (bpt.c, elfmod.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tracer_int.h"

void aspace_init(struct aspace *as)
{
	memset(as, 0, sizeof *as);
}

int aspace_copy(struct aspace *dst, const struct aspace *src, pid_t pid, int memfd)
{
	aspace_init(dst);
	dst->next_mod_id = src->next_mod_id;
	dst->scratch = src->scratch;
	dst->tramp = src->tramp;
	memcpy(dst->hook_addr, src->hook_addr, sizeof dst->hook_addr);
	memcpy(dst->hook_size, src->hook_size, sizeof dst->hook_size);
	dst->heap_hooked = src->heap_hooked;
	if (bpt_copy(&dst->bpts, &src->bpts, pid, memfd) < 0)
		goto fail;
	if (modmap_copy(&dst->mods, &src->mods) < 0)
		goto fail;
	if (src->nprobes) {
		dst->probes = malloc(src->nprobes * sizeof *dst->probes);
		if (!dst->probes)
			goto fail;
		memcpy(dst->probes, src->probes, src->nprobes * sizeof *dst->probes);
		dst->nprobes = src->nprobes;
	}
	return 0;
fail:
	aspace_release(dst);
	return -1;
}

void aspace_release(struct aspace *as)
{
	bpt_release(&as->bpts);
	modmap_release(&as->mods);
	free(as->probes);
	as->probes = NULL;
	as->nprobes = 0;
}
