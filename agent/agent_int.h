/*
 * The agent's state shared by its two translation units: the sync hooks
 * (avtrace_agent.c) and the access entry (access.c, built with
 * -mgeneral-regs-only: it runs between any two instructions of the
 * program, whose vector registers are live).
 */
#ifndef AVT_AGENT_INT_H
#define AVT_AGENT_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/agent_proto.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define TLS __attribute__((tls_model("initial-exec")))

extern struct avt_agent_hdr *avt_ring HIDDEN; /* NULL: passive */
extern volatile int avt_detached HIDDEN;      /* a forked child: never touch the ring */
extern __thread int avt_depth HIDDEN TLS;     /* > 0: inside a fast path (signal nesting) */
extern __thread uint32_t avt_my_tid HIDDEN TLS;

/* The access stubs' entry (decode/stub.h): 0 when the access was
 * committed in-process, 1 when the stub must take the ptrace stop.
 * value: what a store site's register holds (else meaningless). */
HIDDEN int avt_access_entry(uint32_t index, uint64_t addr, uint64_t rsp, uint64_t value);
/* Publishes avt_value_load's range in the header (access.c). */
HIDDEN void avt_value_publish(struct avt_agent_hdr *h);

/* Is the ring usable from this thread (not a forked child, no hook of
 * this thread in progress)?  Reads the thread's tid once. */
static inline int avt_usable(struct avt_agent_hdr *r)
{
	if (!r || avt_detached || avt_depth ||
	    !atomic_load_explicit(&r->enabled, memory_order_acquire)) {
		if (r && avt_depth && !avt_detached)
			atomic_fetch_add_explicit(&r->nested, 1, memory_order_relaxed);
		return 0;
	}
	if (!avt_my_tid)
		avt_my_tid = (uint32_t)syscall(SYS_gettid);
	return 1;
}

static inline void avt_busy(struct avt_agent_hdr *r)
{
	avt_depth = 1;
	/* the supervisor does not take a thread as preempted inside here */
	atomic_store_explicit(&r->busy, avt_my_tid, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

/* Enters a fast path: the ring is usable and this thread holds the run
 * token with events left (the supervisor resumed it with events left
 * before the scheduler's next decision). */
static inline int avt_enter(void)
{
	struct avt_agent_hdr *r = avt_ring;
	if (!avt_usable(r) || !avt_agent_may_run(r, avt_my_tid))
		return 0;
	avt_busy(r);
	return 1;
}

/* avt_enter for a lock, unlock or signal (kind on obj from site), which
 * may also wait its turn in a hand-over script (access.c). */
int avt_enter_event(uint16_t kind, uint64_t obj, uint64_t site) HIDDEN;
/* Inside a fast path, before its expected event is spent: 0 when that
 * event (a read) must take the ptrace path after the accesses the
 * recording does not have that this thread made in-process (access.c). */
int avt_listed(uint16_t kind) HIDDEN;

static inline void avt_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&avt_ring->busy, 0, memory_order_relaxed);
	avt_depth = 0;
}

#endif
