/*
 * The event model: what every stage of avtrace agrees an event is.
 *
 * An event is one synchronization operation or memory access of one thread,
 * as it took effect.  Events flow from the tracer (record, replay) through
 * the trace file to predict, and back into replay as the expected events of
 * a schedule.  The layout of struct avt_event is the on-disk layout of an
 * event record (see docs/trace-format.md): change it and bump
 * AVT_TRACE_VERSION in trace/trace.h.
 */
#ifndef AVT_TRACE_EVENT_H
#define AVT_TRACE_EVENT_H

#include <stdbool.h>
#include <stdint.h>

enum avt_kind {
	AVT_EV_NONE = 0,
	AVT_EV_START,        /* thread starts; obj = parent logical id */
	AVT_EV_EXIT,         /* thread exits; obj = exit code or 0 */
	AVT_EV_CREATE,       /* obj = child logical id */
	AVT_EV_JOIN,         /* obj = joined child logical id */
	AVT_EV_ACQUIRE,      /* mutex/spin/C11 mtx; after a cond wait: obj2 = cond */
	AVT_EV_RELEASE,      /* mutex/spin/rwlock unlock */
	AVT_EV_TRYLOCK_FAIL, /* a try/timed lock that did not acquire */
	AVT_EV_RD_ACQUIRE,   /* rwlock read lock */
	AVT_EV_WR_ACQUIRE,   /* rwlock write lock */
	AVT_EV_WAIT,         /* cond wait begins: obj = cond, obj2 = mutex released */
	AVT_EV_SIGNAL,       /* obj = cond */
	AVT_EV_BROADCAST,    /* obj = cond */
	AVT_EV_BARRIER,      /* arrival at a barrier wait; obj = barrier */
	AVT_EV_SEM_WAIT,     /* sem wait succeeded; obj = sem */
	AVT_EV_SEM_POST,     /* obj = sem */
	AVT_EV_READ,         /* obj = address, size = bytes */
	AVT_EV_WRITE,        /* obj = address, size = bytes */
	AVT_EV_BEGIN,        /* atomic block begins */
	AVT_EV_END,          /* atomic block ends */
	AVT_EV_FATAL_SIGNAL, /* size = signal, obj = fault address, site = pc */
	AVT_EV_RMW,          /* read and write of obj in one instruction (lock add,
	                        xchg, a successful cmpxchg, xadd, add to memory);
	                        size = bytes; AVT_F_ATOMIC when locked */
	AVT_EV_FUTEX_WAIT,   /* a futex wait by the program's own code (not libc's
	                        inside a hooked call): obj = the futex word,
	                        obj2 = the value it waits on, size = the futex op */
	AVT_EV_FUTEX_WAKE,   /* a futex wake (or requeue, unlock_pi): obj = the
	                        word, obj2 = how many it may wake, size = the op */
	AVT_EV_KIND_COUNT
};

/* Event flags. */
#define AVT_F_COND_WAKE   0x0001 /* acquire that ends a condition wait */
#define AVT_F_TIMED_OUT   0x0002 /* timed wait/lock that timed out */
#define AVT_F_SITE_EXACT  0x0004 /* site is the pc itself, not a return address */
#define AVT_F_RECURSIVE   0x0008 /* acquire/release of a recursive mutex level > 1 */
#define AVT_F_WATCHED     0x0010 /* access seen by a hardware watchpoint */
#define AVT_F_ANNOTATED   0x0020 /* access/block from an avtrace.h probe */
#define AVT_F_ACCESS_BPT  0x0040 /* access seen by an access breakpoint (decoded) */
#define AVT_F_ATOMIC      0x0080 /* a locked instruction (lock prefix, xchg, cmpxchg) */
#define AVT_F_OWN_STACK   0x0100 /* access to the accessing thread's own stack
                                    (near its stack pointer): a spill or temporary */
#define AVT_F_VALUE       0x0200 /* read or rmw of 1, 2, 4 or 8 bytes seen by an
                                    access breakpoint: obj2 holds the value it
                                    loaded (zero-extended, little-endian) */

/* A site whose module is unknown keeps the absolute address in site_off. */
#define AVT_MOD_NONE 0xffffu

/*
 * One event; 48 bytes, naturally aligned, no padding, little-endian on disk.
 * site is the caller of the synchronization function (its return address),
 * or the pc of a probe / faulting instruction (AVT_F_SITE_EXACT).
 */
struct avt_event {
	uint64_t seq;      /* global order, from 0 */
	uint64_t obj;      /* lock/cond/sem/barrier/variable address, or thread id */
	uint64_t obj2;     /* secondary object (see kinds), else 0 */
	uint64_t site_off; /* offset of the site in module site_mod */
	uint32_t thread;   /* logical thread id: T0 main, Tk k-th created */
	uint32_t tindex;   /* index of this event among its thread's events */
	uint16_t kind;     /* enum avt_kind */
	uint16_t flags;    /* AVT_F_* */
	uint16_t site_mod; /* module id (trace module table) or AVT_MOD_NONE */
	uint16_t size;     /* access size in bytes; signal number for fatal_signal */
};

_Static_assert(sizeof(struct avt_event) == 48, "avt_event is an on-disk record");

/* "acquire", "wr_acquire", ...: the names dump --json uses; NULL if unknown. */
const char *avt_kind_name(unsigned kind);
/* Inverse of avt_kind_name; AVT_EV_NONE if unknown. */
enum avt_kind avt_kind_from_name(const char *name);

/* Kinds that take a lock (mutex, spin, rwlock read or write). */
/* These tests are inline: the detectors ask them once an event or more
 * in their inner loops (issue 30). */
static inline bool avt_kind_is_acquire(unsigned kind)
{
	return kind == AVT_EV_ACQUIRE || kind == AVT_EV_RD_ACQUIRE ||
	       kind == AVT_EV_WR_ACQUIRE;
}

static inline bool avt_kind_is_access(unsigned kind)
{
	return kind == AVT_EV_READ || kind == AVT_EV_WRITE || kind == AVT_EV_RMW;
}

/* Accesses that read (read, rmw) / that write (write, rmw). */
static inline bool avt_kind_reads(unsigned kind)
{
	return kind == AVT_EV_READ || kind == AVT_EV_RMW;
}

static inline bool avt_kind_writes(unsigned kind)
{
	return kind == AVT_EV_WRITE || kind == AVT_EV_RMW;
}

/* Kinds whose obj / obj2 are thread ids rather than addresses.  START
 * names its parent, CREATE and JOIN their child: all logical ids. */
static inline bool avt_kind_obj_is_thread(unsigned kind)
{
	return kind == AVT_EV_START || kind == AVT_EV_CREATE || kind == AVT_EV_JOIN;
}

#endif
