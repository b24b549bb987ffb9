/*
 * The access stubs' entry (decode/stub.h, docs/memory-access.md): an
 * access breakpoint taken in-process.  The stub has saved the flags and
 * every caller-saved general register; this file is compiled with
 * -mgeneral-regs-only, so the program's vector registers are untouched.
 *
 * The supervisor filled the site's table entry when it planted the stub
 * (the event's kind, size, flags; how many hits may be taken here before
 * one must stop at ptrace, where the private-hit budget and a recorded
 * disarm are decided).  The rest is the lock hooks' path: the run token,
 * a ring slot, the commit, one unit of budget spent.
 */
#include "agent_int.h"

int avt_access_entry(uint32_t index, uint64_t addr, uint64_t rsp)
{
	if (!avt_enter())
		return 1;
	struct avt_agent_hdr *h = avt_ring;
	struct avt_agent_site *s = index < h->nsites ? &avt_agent_sites(h)[index] : 0;
	int32_t left = s ? atomic_load_explicit(&s->left, memory_order_relaxed) : 0;
	if (left > 0 && !avt_agent_expected(h, s->kind, addr, s->pc))
		left = 0; /* not the event the budget expects: ptrace decides */
	int64_t ticket = left > 0 && s->kind ? avt_agent_claim(h, AVT_AGENT_UNLOCK_RESERVE) : -1;
	if (ticket < 0) {
		if (left > 0 && s->kind)
			atomic_fetch_add_explicit(&h->full, 1, memory_order_relaxed);
		avt_leave();
		return 1;
	}
	avt_agent_commit_access(h, (uint64_t)ticket, s, index, addr, rsp, avt_my_tid);
	if (left != AVT_AGENT_SITE_NOLIMIT)
		atomic_store_explicit(&s->left, left - 1, memory_order_relaxed);
	avt_agent_spend(h);
	avt_leave();
	return 0;
}
