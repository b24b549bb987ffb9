/*
 * The in-process agent's shared-memory protocol (docs/agent.md).
 *
 * The supervisor (avtrace, under ptrace) creates a memfd, lays out this
 * region in it and passes the descriptor to the target, where the agent
 * library (agent/avtrace_agent.c, LD_PRELOAD) maps it.  The region is:
 *
 *   struct avt_agent_hdr   magic, version, sizes, the switches the
 *                          supervisor sets (enabled, the unhooked entry
 *                          points, the run token: run_tid and budget), the
 *                          one-runner word (busy), the ring's head
 *                          (producers) and tail (the supervisor)
 *   struct avt_agent_slot  x nslots: a commit word and one struct avt_event
 *
 * A producer claims ticket h (head: compare-and-swap, so producers never
 * share a slot), fills slot h % nslots and then stores commit = h + 1 with
 * release order.  The consumer takes slot tail % nslots only when its
 * commit word equals tail + 1, then advances tail, which frees the slot.
 * Whatever was committed stays readable in the memfd when the target dies
 * (SIGKILL included): nothing committed is lost.  A claimed slot that was
 * never committed (the producer died between claim and commit) stops the
 * ordinary drain; the final drain, after the target is gone, skips it.
 *
 * The event in a slot has the trace's layout (struct avt_event) with the
 * producer's view of it: seq 0 (the supervisor numbers events), thread =
 * the kernel tid, site_mod = AVT_MOD_NONE and site_off = the absolute
 * return address, kind/obj/flags as the ptrace hooks would see them.
 * kind AVT_EV_NONE marks a claimed slot whose operation did not happen
 * (skipped).
 *
 * Everything here is header-only and libc-free so the agent (which links
 * nothing of avtrace) and the supervisor share one definition.
 */
#ifndef AVT_TRACE_AGENT_PROTO_H
#define AVT_TRACE_AGENT_PROTO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define AVT_AGENT_MAGIC "AVTAGNT"
#define AVT_AGENT_VERSION 8u
/* budget: no limit (record's run-until-block) */
#define AVT_AGENT_UNLIMITED UINT64_MAX
/* Environment of the target: the memfd's descriptor number. */
#define AVT_AGENT_ENV_FD "AVTRACE_AGENT_FD"
/* The name the memfd is created with (the agent checks /proc/self/fd/N). */
#define AVT_AGENT_MEMFD_NAME "avtrace-agent"
/* Where the agent maps the region (MAP_FIXED_NOREPLACE; elsewhere if
 * taken): far below the mmap area, so the target's own mappings (thread
 * stacks, arenas) land where they land without the agent. */
#define AVT_AGENT_MAP_ADDR 0x6f0000000000ull
#define AVT_AGENT_DEFAULT_SLOTS 65536u
/* Access sites the table after the ring holds (its pages are touched only
 * when used) */
#define AVT_AGENT_DEFAULT_SITES 65536u
/* avt_agent_site.left: no limit (a site with a shared hit) */
#define AVT_AGENT_SITE_NOLIMIT INT32_MAX
/* Expected events a budget may carry (after the site table) */
#define AVT_AGENT_MAX_EXPECT 256u

/* Unhooked entry points the supervisor publishes (hdr.raw[]): the
 * out-of-line copy of each hooked function, callable without a ptrace
 * stop.  0: not available, take the ptrace path. */
enum avt_agent_raw {
	AVT_RAW_MUTEX_TRYLOCK,
	AVT_RAW_MUTEX_UNLOCK,
	AVT_RAW_RW_TRYRDLOCK,
	AVT_RAW_RW_TRYWRLOCK,
	AVT_RAW_RW_UNLOCK,
	AVT_RAW_SPIN_TRYLOCK,
	AVT_RAW_SPIN_UNLOCK,
	AVT_RAW_COND_SIGNAL,
	AVT_RAW_COND_BROADCAST,
	AVT_RAW_MALLOC,            /* the heap's: published when the heap's */
	AVT_RAW_CALLOC,            /* hooks are planted (a process with the */
	AVT_RAW_REALLOC,           /* user's code); their records are not */
	AVT_RAW_FREE,              /* events (avt_agent_commit_alloc) */
	AVT_RAW_CREATE,            /* pthread_create: a call's record (its site) */
	AVT_RAW_JOIN,              /* pthread_join: published = joins are taken
	                              in-process (pthread_tryjoin_np, no copy) */
	AVT_RAW_GMUTEX_TRYLOCK,    /* GLib's GMutex, known by its sync spec: */
	AVT_RAW_GMUTEX_UNLOCK,     /* g_mutex_trylock, g_mutex_unlock; their
	                              records are tindex AVT_AGENT_T_SPEC */
	AVT_RAW_COUNT = 24,
};

struct avt_agent_hdr {
	char magic[8];             /* AVT_AGENT_MAGIC */
	uint32_t version;          /* AVT_AGENT_VERSION */
	uint32_t hdr_size;         /* sizeof(struct avt_agent_hdr) */
	uint32_t nslots;           /* a power of two */
	uint32_t slot_size;        /* sizeof(struct avt_agent_slot) */
	_Atomic uint32_t enabled;  /* supervisor: 1 from the entry stop of an
	                              image whose raw[] are published */
	_Atomic int32_t pid;       /* agent: the process that attached */
	_Atomic uint32_t busy;     /* agent: tid of the thread inside a hook's
	                              fast path (claim .. commit), else 0 */
	_Atomic uint32_t run_tid;  /* supervisor: the thread that holds the run
	                              token (the one it resumed); only it may
	                              take a fast path */
	_Atomic uint64_t raw[AVT_RAW_COUNT]; /* supervisor: unhooked entries */
	_Atomic uint64_t attached; /* agent: processes that mapped the region */
	_Atomic uint64_t full;     /* agent: fast paths refused, ring full */
	_Atomic uint64_t nested;   /* agent: calls made inside a hook (signal
	                              handlers): sent down the ptrace path */
	_Atomic uint64_t head;     /* producers: next ticket */
	_Atomic uint64_t budget;   /* supervisor sets, the token's holder spends:
	                              events run_tid may still commit in-process
	                              before it must stop at a ptrace hook (the
	                              scheduler's next decision);
	                              AVT_AGENT_UNLIMITED: no limit */
	_Atomic uint64_t self;     /* agent: where it mapped the region */
	_Atomic uint64_t access_entry; /* agent: its entry for access stubs
	                              (decode/stub.h), 0 if none */
	uint32_t nsites;           /* the access-site table's capacity */
	_Atomic uint32_t expect_n; /* supervisor: the budget's events must be
	                              expect[0 .. expect_n) in order (0: no
	                              check) */
	_Atomic uint32_t expect_pos; /* the token's holder: the next to match */
	_Atomic int32_t want_pid;  /* supervisor: the one process that may
	                              attach (0: any); a process of the tree
	                              that inherited the memfd stays out */
	/* agent: the loads of avt_value_load (agent/access.c), [value_lo,
	 * value_hi): a fault there is the agent's probe of a read's value at
	 * an address the program's instruction will fault on next; the
	 * supervisor resumes it at value_hi (no value) without the signal */
	_Atomic uint64_t value_lo, value_hi;
	_Atomic uint64_t tail;     /* consumer: next ticket to drain */
	uint8_t pad3[56];
	_Atomic uint32_t script;   /* supervisor: nonzero while the expected
	                              events name several threads (a hand-over
	                              script): run_tid passes between them
	                              in-process, the others wait in the agent
	                              (a futex on run_tid) */
	_Atomic uint32_t gen;      /* supervisor: one more at every grant */
	_Atomic uint64_t handovers; /* agent: run tokens passed in-process */
	_Atomic uint64_t extras;   /* agent: accesses the budget did not list,
	                              made in-process (avt_agent_extra) */
	_Atomic uint64_t park_entry[2]; /* agent: its pthread_mutex_lock and
	                              pthread_mutex_unlock, where the supervisor
	                              sends a thread stopped at libc's to wait
	                              for its turn in a script */
	_Atomic uint64_t yield_obj; /* supervisor, at a grant: the holder may
	                              take sched_yield in-process while it
	                              holds this lock (others wait for it);
	                              AVT_AGENT_YIELD_ANY: whatever it holds;
	                              0: never (tracer/agent.c, yield_lock) */
	_Atomic uint64_t yields;   /* agent: sched_yield calls taken in-process */
	_Atomic uint32_t yield_held; /* the holder: it holds yield_obj still
	                              (its in-process acquires and releases of
	                              it say so; the supervisor sets 1 with
	                              yield_obj) */
	uint8_t pad5[4];
};

struct avt_agent_slot {
	_Atomic uint64_t commit;   /* ticket + 1 once the event is complete */
	uint64_t pad;
	struct avt_event ev;
};

/* One access site taken in-process (tracer/access.c writes it, the stub
 * passes its index): the event it makes, and how many hits it may still
 * commit in-process before one must stop at ptrace, where the supervisor
 * decides (the private-hit budget, a recorded disarm).  left is written by
 * the supervisor while every thread is stopped and spent by the thread
 * that holds the run token. */
struct avt_agent_site {
	uint64_t pc;               /* the instruction (the event's site) */
	_Atomic int32_t left;      /* AVT_AGENT_SITE_NOLIMIT: no limit */
	uint16_t size;             /* bytes accessed */
	uint16_t flags;            /* AVT_F_* of its events */
	uint16_t kind;             /* AVT_EV_READ, WRITE or RMW; 0: unused */
	uint8_t store;             /* a store of a 64-bit register: a hit that
	                              stores an address into the thread's own
	                              stack elsewhere takes the ptrace path (the
	                              supervisor lets the stack escape there) */
	uint8_t pad[5];
	uint64_t rec_lids;         /* replay: the threads (logical ids < 64,
	                              a bit each) the recording saw access here;
	                              ~0: unknown */
};

/* How far above its stack pointer an address still counts as a thread's
 * own stack (frames of its callers); thread stacks are megabytes apart */
#define AVT_OWN_STACK_SPAN (256u * 1024)

/* Is ea on the stack of a thread whose stack pointer is rsp (its red zone
 * below rsp included)?  The supervisor's test and the agent's. */
static inline int avt_own_stack(uint64_t ea, uint64_t rsp)
{
	return ea + 128 >= rsp && ea < rsp + AVT_OWN_STACK_SPAN;
}

/* Does a store of value at ea, by a thread whose stack pointer is rsp,
 * let the thread's stack escape: an address into its own stack put where
 * another thread may read it (a global, the heap, another's stack)? */
static inline int avt_stack_escapes(uint64_t value, uint64_t ea, uint64_t rsp)
{
	return avt_own_stack(value, rsp) && !avt_own_stack(ea, rsp);
}

/* An event a budget expects (explore: the recording's next events of the
 * thread, which its policy would let it make with no decision only if
 * they are those): an event that is not the next one expected takes the
 * ptrace path, where the policy sees what really happened. */
struct avt_agent_expect {
	uint64_t obj;
	uint64_t site;             /* absolute: the return address, or the pc */
	uint16_t kind;             /* AVT_EV_NONE: any event of tid */
	uint16_t flags;            /* AVT_EXPECT_* */
	uint32_t tid;              /* the thread that makes it (0: the holder) */
	uint16_t lid;              /* its logical id */
	uint16_t reads;            /* reads its thread may make after it before
	                              the picker could take it for a spinner */
	uint8_t pad[4];
};
/* Accesses the recording does not have may come before this event, in
 * process (avt_agent_extra): a pick there would give its thread the
 * access, with no draw. */
#define AVT_EXPECT_EXTRAS 0x1

_Static_assert(sizeof(struct avt_agent_slot) == 64, "one slot, one cache line");
_Static_assert(sizeof(struct avt_agent_site) == 32, "two sites a cache line");
_Static_assert(sizeof(struct avt_agent_expect) == 32, "expected events: 32 bytes");
_Static_assert(offsetof(struct avt_agent_hdr, head) % 64 == 0, "head on its own line");
_Static_assert(offsetof(struct avt_agent_hdr, tail) % 64 == 0, "tail on its own line");
_Static_assert(sizeof(struct avt_agent_hdr) % 64 == 0, "slots cache-line aligned");

static inline size_t avt_agent_region_size(uint32_t nslots, uint32_t nsites)
{
	return sizeof(struct avt_agent_hdr) + (size_t)nslots * sizeof(struct avt_agent_slot) +
	       (size_t)nsites * sizeof(struct avt_agent_site) +
	       AVT_AGENT_MAX_EXPECT * sizeof(struct avt_agent_expect);
}

static inline struct avt_agent_slot *avt_agent_slots(struct avt_agent_hdr *h)
{
	return (struct avt_agent_slot *)(void *)((char *)h + sizeof *h);
}

static inline struct avt_agent_site *avt_agent_sites(struct avt_agent_hdr *h)
{
	return (struct avt_agent_site *)(void *)((char *)h + sizeof *h +
						 (size_t)h->nslots * sizeof(struct avt_agent_slot));
}

static inline struct avt_agent_expect *avt_agent_expects(struct avt_agent_hdr *h)
{
	return (struct avt_agent_expect *)(void *)(avt_agent_sites(h) + h->nsites);
}

static inline int avt_agent_is(const struct avt_agent_expect *e, uint16_t kind, uint64_t obj,
				uint64_t site)
{
	return !e->kind || (e->kind == kind && e->obj == obj && e->site == site);
}

/* Producer tid, holding the token: may its next in-process event be this
 * one?  (No expectations: any.) */
static inline int avt_agent_expected(struct avt_agent_hdr *h, uint32_t tid, uint16_t kind,
				     uint64_t obj, uint64_t site)
{
	uint32_t n = atomic_load_explicit(&h->expect_n, memory_order_relaxed);
	if (!n)
		return 1;
	uint32_t pos = atomic_load_explicit(&h->expect_pos, memory_order_relaxed);
	if (pos >= n)
		return 0;
	const struct avt_agent_expect *e = &avt_agent_expects(h)[pos];
	return (!e->tid || e->tid == tid) && avt_agent_is(e, kind, obj, site);
}

/* In a hand-over script, thread tid is about to make (kind, obj, site).
 * 1: it holds the token and the script's next event is its own (the
 * caller checks it is this one); 0: the ptrace path (no script, not in
 * it, not this event, budget spent); 2: its turn comes later, after the
 * script's next events by others (*who: the thread they start with,
 * which tid hands the token to if it holds it). */
static inline int avt_agent_turn(struct avt_agent_hdr *h, uint32_t tid, uint16_t kind, uint64_t obj,
				 uint64_t site, uint32_t *who)
{
	uint32_t holder = atomic_load_explicit(&h->run_tid, memory_order_acquire);
	uint32_t n = atomic_load_explicit(&h->expect_n, memory_order_acquire);
	if (holder == tid && !atomic_load_explicit(&h->budget, memory_order_relaxed))
		return 0;
	if (holder == tid && !n)
		return 1;
	if (holder != tid && !atomic_load_explicit(&h->script, memory_order_acquire))
		return 0;
	uint32_t pos = atomic_load_explicit(&h->expect_pos, memory_order_acquire);
	if (pos >= n)
		return 0;
	const struct avt_agent_expect *e = avt_agent_expects(h);
	if (holder == tid && (!e[pos].tid || e[pos].tid == tid))
		return 1;
	uint32_t j = pos;
	while (j < n && e[j].tid != tid)
		j++;
	if (j == n || !avt_agent_is(&e[j], kind, obj, site))
		return 0;
	*who = holder == tid ? e[pos].tid : holder;
	return 2;
}

/* Producer tid, holding the token, at an access (kind at site s) that is
 * not the event expected next: may it make it in-process all the same?
 * Only when a pick there would give it to tid with no decision and leave
 * the policy's view of the recording as it is: the next expected event
 * is tid's, marked AVT_EXPECT_EXTRAS (not one the walk decides), the
 * recording saw tid make no access at this site (so the access cannot be
 * taken for a recorded one), and a read leaves tid short of a spin's
 * count.  *reads: the reads tid may still make (the caller's count since
 * its last expected event, from that event's reads), spent by a read. */
static inline int avt_agent_extra(struct avt_agent_hdr *h, uint32_t tid, uint16_t kind,
				  const struct avt_agent_site *s, uint32_t *reads)
{
	uint32_t n = atomic_load_explicit(&h->expect_n, memory_order_relaxed);
	uint32_t pos = atomic_load_explicit(&h->expect_pos, memory_order_relaxed);
	if (pos >= n)
		return 0;
	const struct avt_agent_expect *e = &avt_agent_expects(h)[pos];
	if (e->tid != tid || !(e->flags & AVT_EXPECT_EXTRAS) || e->lid >= 64 ||
	    (s->rec_lids >> e->lid) & 1)
		return 0;
	if (kind == AVT_EV_READ) {
		if (*reads < 2)
			return 0; /* (one must be left: the count stays below) */
		--*reads;
	}
	return 1;
}

/* Lays out a fresh region of avt_agent_region_size(nslots, nsites) zeroed
 * bytes.  nslots must be a power of two. */
static inline void avt_agent_init(struct avt_agent_hdr *h, uint32_t nslots, uint32_t nsites)
{
	for (int i = 0; i < 8; i++)
		h->magic[i] = AVT_AGENT_MAGIC[i];
	h->version = AVT_AGENT_VERSION;
	h->hdr_size = (uint32_t)sizeof *h;
	h->nslots = nslots;
	h->slot_size = (uint32_t)sizeof(struct avt_agent_slot);
	h->nsites = nsites;
}

/* Is this a region this code can use (magic, version, sizes)? */
static inline int avt_agent_valid(const struct avt_agent_hdr *h, size_t maplen)
{
	for (int i = 0; i < 8; i++)
		if (h->magic[i] != AVT_AGENT_MAGIC[i])
			return 0;
	return h->version == AVT_AGENT_VERSION && h->hdr_size == sizeof *h &&
	       h->slot_size == sizeof(struct avt_agent_slot) && h->nslots &&
	       !(h->nslots & (h->nslots - 1)) && avt_agent_region_size(h->nslots, h->nsites) <= maplen;
}

/* Slots a lock may not take, kept for the unlocks of locks already held:
 * a lock refused for want of room takes the ptrace path (whose stop
 * drains the ring), but an unlock sent there would be released in the
 * model before glibc releases it (docs/agent.md). */
#define AVT_AGENT_UNLOCK_RESERVE 1024u

/* Supervisor: hands the run token to tid with that many in-process events
 * (0: every call of tid takes the ptrace path).  Called while every
 * thread of the target is stopped. */
static inline void avt_agent_grant(struct avt_agent_hdr *h, uint32_t tid, uint64_t budget)
{
	atomic_store_explicit(&h->budget, budget, memory_order_relaxed);
	atomic_store_explicit(&h->run_tid, tid, memory_order_release);
}

/* Producer: may the thread tid commit one more event in-process? */
static inline int avt_agent_may_run(struct avt_agent_hdr *h, uint32_t tid)
{
	return atomic_load_explicit(&h->run_tid, memory_order_acquire) == tid &&
	       atomic_load_explicit(&h->budget, memory_order_relaxed) != 0;
}

/* yield_obj: no lock of the holder's matters (no address is 1) */
#define AVT_AGENT_YIELD_ANY 1ull

/* Producer tid, holding the token, at sched_yield: the supervisor's pick
 * there would give tid its turn again (every other thread waits for
 * yield_obj, which tid still holds), so it may go on with no stop.  A
 * yield is no event: nothing is committed or spent. */
static inline int avt_agent_yield_ok(struct avt_agent_hdr *h, uint32_t tid)
{
	return avt_agent_may_run(h, tid) && atomic_load_explicit(&h->yield_obj, memory_order_relaxed) &&
	       atomic_load_explicit(&h->yield_held, memory_order_relaxed) &&
	       !atomic_load_explicit(&h->expect_n, memory_order_relaxed) &&
	       !atomic_load_explicit(&h->script, memory_order_relaxed);
}

/* Producer, the token's holder: an acquire or release (kind) of obj it
 * committed in-process; one of yield_obj says whether it still holds it. */
static inline void avt_agent_yield_note(struct avt_agent_hdr *h, uint16_t kind, uint64_t obj)
{
	if (obj == atomic_load_explicit(&h->yield_obj, memory_order_relaxed) &&
	    (kind == AVT_EV_ACQUIRE || kind == AVT_EV_RELEASE))
		atomic_store_explicit(&h->yield_held, kind == AVT_EV_ACQUIRE, memory_order_relaxed);
}

/* Producer: one event committed in-process is spent from the budget. */
static inline void avt_agent_spend(struct avt_agent_hdr *h)
{
	uint64_t b = atomic_load_explicit(&h->budget, memory_order_relaxed);
	if (b != AVT_AGENT_UNLIMITED && b != 0)
		atomic_store_explicit(&h->budget, b - 1, memory_order_relaxed);
	if (atomic_load_explicit(&h->expect_n, memory_order_relaxed))
		atomic_fetch_add_explicit(&h->expect_pos, 1, memory_order_relaxed);
}

/* Producer: claims the next slot, leaving reserve slots free.  Returns its
 * ticket, or -1 when the ring is that full (the caller then takes the
 * ptrace path, whose stop drains it). */
static inline int64_t avt_agent_claim(struct avt_agent_hdr *h, uint32_t reserve)
{
	uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
	uint64_t room = reserve < h->nslots ? h->nslots - reserve : 0;
	for (;;) {
		uint64_t tail = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (head - tail >= room)
			return -1;
		if (atomic_compare_exchange_weak_explicit(&h->head, &head, head + 1,
							  memory_order_acq_rel,
							  memory_order_relaxed))
			return (int64_t)head;
	}
}

/* Producer: fills the claimed slot and commits it (release: the consumer
 * that sees the commit word sees the event). */
static inline void avt_agent_commit_t(struct avt_agent_hdr *h, uint64_t ticket, uint16_t kind,
				      uint64_t obj, uint64_t obj2, uint64_t site, uint32_t tid,
				      uint32_t tindex)
{
	struct avt_agent_slot *s = &avt_agent_slots(h)[ticket & (h->nslots - 1)];
	s->ev.seq = 0;
	s->ev.obj = obj;
	s->ev.obj2 = obj2;
	s->ev.site_off = site;
	s->ev.thread = tid;
	s->ev.tindex = tindex;
	s->ev.kind = kind;
	s->ev.flags = 0;
	s->ev.site_mod = AVT_MOD_NONE;
	s->ev.size = 0;
	atomic_store_explicit(&s->commit, ticket + 1, memory_order_release);
}

/* A lock event's tindex: 0 for libc's functions; AVT_AGENT_T_SPEC for a
 * sync spec's (GMutex): the supervisor filters it as the spec's ptrace
 * hook does (a call nested in another spec call is no event; a call from
 * libc is one). */
#define AVT_AGENT_T_SPEC 1u

static inline void avt_agent_commit2(struct avt_agent_hdr *h, uint64_t ticket, uint16_t kind,
				     uint64_t obj, uint64_t obj2, uint64_t site, uint32_t tid)
{
	avt_agent_commit_t(h, ticket, kind, obj, obj2, site, tid, 0);
}

/* (obj2: a join's, the caller's frame pointer, as the ptrace hook reads
 * it at the call's entry for a sanitizer's interceptor) */
static inline void avt_agent_commit(struct avt_agent_hdr *h, uint64_t ticket, uint16_t kind,
				    uint64_t obj, uint64_t site, uint32_t tid)
{
	avt_agent_commit2(h, ticket, kind, obj, 0, site, tid);
}

/* Producer: the same for an access through a stub (site i of the table):
 * obj = the address, obj2 = the thread's rsp at the instruction, tindex =
 * the site's index. */
static inline void avt_agent_commit_access(struct avt_agent_hdr *h, uint64_t ticket,
					   const struct avt_agent_site *s, uint32_t i,
					   uint64_t addr, uint64_t rsp, uint32_t tid,
					   uint64_t value, uint16_t vflag)
{
	struct avt_agent_slot *sl = &avt_agent_slots(h)[ticket & (h->nslots - 1)];
	sl->ev.seq = value; /* with vflag AVT_F_VALUE: a read's value, else 0 */
	sl->ev.obj = addr;
	sl->ev.obj2 = rsp;
	sl->ev.site_off = s->pc;
	sl->ev.thread = tid;
	sl->ev.tindex = i;
	sl->ev.kind = s->kind;
	sl->ev.flags = (uint16_t)(s->flags | vflag);
	sl->ev.site_mod = AVT_MOD_NONE;
	sl->ev.size = s->size;
	atomic_store_explicit(&sl->commit, ticket + 1, memory_order_release);
}

/* A slot that holds a call's record, not an event (a flag no event has):
 * tindex = the call (AVT_RAW_MALLOC .. AVT_RAW_FREE; free: obj is the
 * block freed), obj = the block returned (0: none), obj2 = the block
 * realloc was given, seq = the size asked for, site_off = the absolute
 * return address.  pthread_create's (tindex AVT_RAW_CREATE, before the
 * call): site_off = its return address, obj2 = the caller's frame
 * pointer, obj = the start routine's argument, seq = the caller's stack
 * pointer (a pointer into its own stack lets its stack escape); the supervisor keeps the site for the create event it emits
 * at the clone's stop, as the ptrace hook's entry keeps it.  The supervisor makes of it what the ptrace hook's
 * return (or, for free, its entry) makes: no event, only avt_alloc_recs
 * (after_seq: the events drained before it). */
#define AVT_AGENT_F_ALLOC 0x8000u

/* Producer: fills the claimed slot with a heap record and commits it. */
static inline void avt_agent_commit_alloc(struct avt_agent_hdr *h, uint64_t ticket, uint32_t op,
					  uint64_t addr, uint64_t old, uint64_t size,
					  uint64_t site, uint32_t tid)
{
	struct avt_agent_slot *s = &avt_agent_slots(h)[ticket & (h->nslots - 1)];
	s->ev.seq = size;
	s->ev.obj = addr;
	s->ev.obj2 = old;
	s->ev.site_off = site;
	s->ev.thread = tid;
	s->ev.tindex = op;
	s->ev.kind = AVT_EV_NONE + 1; /* not skipped; AVT_AGENT_F_ALLOC says what it is */
	s->ev.flags = AVT_AGENT_F_ALLOC;
	s->ev.site_mod = AVT_MOD_NONE;
	s->ev.size = 0;
	atomic_store_explicit(&s->commit, ticket + 1, memory_order_release);
}

/* Consumer: the next committed event in ticket order, copied to *ev;
 * 1 if one was taken, 0 if the next slot is not committed (or the ring is
 * empty).  With final set (the producers are all dead), claimed slots that
 * were never committed are skipped instead of waited for. */
static inline int avt_agent_take(struct avt_agent_hdr *h, struct avt_event *ev, int final)
{
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	for (;;) {
		uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
		if (tail == head)
			return 0;
		struct avt_agent_slot *s = &avt_agent_slots(h)[tail & (h->nslots - 1)];
		if (atomic_load_explicit(&s->commit, memory_order_acquire) == tail + 1) {
			*ev = s->ev;
			atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
			return 1;
		}
		if (!final)
			return 0;
		atomic_store_explicit(&h->tail, ++tail, memory_order_release);
	}
}

/* Consumer: the next committed event copied to *ev but left in the ring
 * (avt_agent_pop takes it); 0 if the next slot is not committed or the
 * ring is empty.  For a consumer that may leave a record for later. */
static inline int avt_agent_peek(struct avt_agent_hdr *h, struct avt_event *ev)
{
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	if (tail == atomic_load_explicit(&h->head, memory_order_acquire))
		return 0;
	struct avt_agent_slot *s = &avt_agent_slots(h)[tail & (h->nslots - 1)];
	if (atomic_load_explicit(&s->commit, memory_order_acquire) != tail + 1)
		return 0;
	*ev = s->ev;
	return 1;
}

/* Consumer: takes the record avt_agent_peek copied (its slot may be
 * reused from here). */
static inline void avt_agent_pop(struct avt_agent_hdr *h)
{
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	atomic_store_explicit(&h->tail, tail + 1, memory_order_release);
}

/* The last argument (val3, which FUTEX_WAIT and FUTEX_WAKE ignore) of the
 * agent's own futex calls on run_tid: avtrace's futex filter (--futex,
 * tracer/futex.c) lets a FUTEX_WAIT or FUTEX_WAKE carrying it run without
 * a stop, so the token's waits and wakes cost no ptrace stop each. */
#define AVT_AGENT_FUTEX_MARK 0x41565446u /* "AVTF" */

#endif
