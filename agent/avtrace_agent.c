/*
 * libavtrace-agent.so: avtrace's in-process fast path (docs/agent.md).
 *
 * Loaded into the target by LD_PRELOAD when avtrace records it (and when
 * it replays such a recording).  It interposes the lock, trylock and
 * unlock of mutexes, rwlocks (rdlock, wrlock and their try forms) and
 * spinlocks, condition variables' signal and broadcast, the heap's calls,
 * pthread_create and pthread_join, and GLib's g_mutex_lock, _trylock and
 * _unlock (a sync spec's, when GLib's is in force).  The supervisor still serializes the threads under ptrace
 * (one runs at a time) and says which thread may take a fast path and for
 * how many events (the run token: run_tid, budget); what the agent saves
 * is the ptrace stop per uncontended operation:
 *
 *   lock     claim a ring slot, try the lock through the unhooked copy of
 *            its try-function (pthread_mutex_trylock, tryrdlock, ...);
 *            taken: commit an acquire event, return 0; busy (held by a
 *            stopped thread, or relocked by its owner): cancel the slot
 *            and jump to the real (hooked) function with the caller's
 *            return address in place, so the ptrace hook sees the same
 *            call it always sees and its model decides
 *   trylock  the same, committing acquire or trylock_fail
 *   unlock   commit a release event, then unlock through the unhooked copy
 *   signal   commit a signal (broadcast) event, then call the unhooked copy
 *
 * Access breakpoints taken in-process have their entry in access.c.  A
 * budget that carries expected events (explore) lets through only the
 * event expected next (begin()).
 *
 * The supervisor drains the ring at every ptrace stop and turns each
 * record into the event the ptrace hook would have emitted (same model,
 * same sequence numbers, same sites, same filters).
 *
 * Rules of a hook here: no malloc, no stdio, no locks, no system call on
 * the fast path (a thread's tid is read once); the ring and the switches
 * are plain atomics in shared memory.  Whenever anything is not right
 * (no region, not enabled yet, ring full, a call nested inside a hook by a
 * signal handler, a forked child) the call goes down the ptrace path:
 * exactly what happens without the agent.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>


#include "agent_int.h"

struct avt_agent_hdr *avt_ring;      /* NULL: passive, every call goes to ptrace */
static size_t ring_len;
volatile int avt_detached;           /* a forked child: never touch the avt_ring */
__thread int avt_depth TLS;          /* > 0: inside a fast path (signal nesting) */
__thread uint32_t avt_my_tid TLS;

typedef int (*lock_fn)(void *);

/* The fast paths, called by the stubs below with the lock and the
 * caller's return address.  -1: take the ptrace path; else the function's
 * return value. */
#define FAST(name) HIDDEN int name(void *m, uint64_t site)
FAST(avt_mutex_lock);
FAST(avt_mutex_trylock);
FAST(avt_mutex_unlock);
FAST(avt_rw_rdlock);
FAST(avt_rw_tryrdlock);
FAST(avt_rw_wrlock);
FAST(avt_rw_trywrlock);
FAST(avt_rw_unlock);
FAST(avt_spin_lock);
FAST(avt_spin_trylock);
FAST(avt_spin_unlock);
FAST(avt_cond_signal);
FAST(avt_cond_broadcast);
FAST(avt_gmutex_lock);
FAST(avt_gmutex_unlock);
FAST(avt_gmutex_trylock);
FAST(avt_sched_yield);

/*
 * The exported entry points.  Each hands the fast path its argument and
 * its caller's return address (0(%rsp) at entry); on -1 it jumps, not
 * calls, to libc's function, so the return address on the stack is still
 * the caller's and the ptrace hook at that function's entry reports the
 * caller's site, as without the agent.
 *
 * libc's function is reached through a pointer (avt_real_ptr[idx]) taken
 * from libc itself by dlvsym on its handle, at the name's first version
 * (the same code as the default one; condition variables at 2.3.2: the
 * 2.2.5 ones are the old layout's), never by a symbol reference: a
 * reference to pthread_spin_lock@GLIBC_2.2.5 binds to this library's own
 * unversioned definition (a loop), and one to __pthread_mutex_lock binds
 * to whatever the executable defines first - clang's AddressSanitizer
 * links its runtime into the program, with an interceptor of that name
 * whose own pointer to libc is NULL (the call went to address 0).
 */
#define STUB(name, fast, idx) STUB_T(name, fast, avt_real_ptr, idx)
#define STUB_T(name, fast, table, idx)                          \
	__asm__(".text\n"                                       \
		".globl " #name "\n"                            \
		".type " #name ", @function\n"                  \
		".p2align 4\n" #name ":\n"                      \
		".globl avt_entry_" #name "\n"                  \
		".hidden avt_entry_" #name "\n"                 \
		"avt_entry_" #name ":\n"                        \
		"	mov (%rsp), %rsi\n"                     \
		"	push %rdi\n" /* keeps rsp 16-aligned */ \
		"	call " #fast "\n"                       \
		"	pop %rdi\n"                             \
		"	cmp $-1, %eax\n"                        \
		"	je 1f\n"                                \
		"	ret\n"                                  \
		"1:	jmp *" #table "+8*" #idx "(%rip)\n"   \
		".size " #name ", .-" #name "\n")

enum { N_REAL = 14 };
HIDDEN void *avt_real_ptr[N_REAL];
STUB(pthread_mutex_lock, avt_mutex_lock, 0);
STUB(pthread_mutex_trylock, avt_mutex_trylock, 1);
STUB(pthread_mutex_unlock, avt_mutex_unlock, 2);
STUB(pthread_rwlock_rdlock, avt_rw_rdlock, 3);
STUB(pthread_rwlock_tryrdlock, avt_rw_tryrdlock, 4);
STUB(pthread_rwlock_wrlock, avt_rw_wrlock, 5);
STUB(pthread_rwlock_trywrlock, avt_rw_trywrlock, 6);
STUB(pthread_rwlock_unlock, avt_rw_unlock, 7);
STUB(pthread_spin_lock, avt_spin_lock, 8);
STUB(pthread_spin_trylock, avt_spin_trylock, 9);
STUB(pthread_spin_unlock, avt_spin_unlock, 10);
STUB(pthread_cond_signal, avt_cond_signal, 11);
STUB(pthread_cond_broadcast, avt_cond_broadcast, 12);
STUB(sched_yield, avt_sched_yield, 13);

/* this library's own entries (not whatever pthread_mutex_lock binds to) */
extern char avt_entry_pthread_mutex_lock[] HIDDEN;
extern char avt_entry_pthread_mutex_unlock[] HIDDEN;

static inline lock_fn raw(enum avt_agent_raw which)
{
	return (lock_fn)(uintptr_t)atomic_load_explicit(&avt_ring->raw[which], memory_order_relaxed);
}

/* Begins a fast path for an event (kind on obj, from site): enters it,
 * finds the unhooked entry of which (*fn) and claims a ring slot with
 * reserve slots left free.  The ticket, or -1 (not entered, or left
 * again: take the ptrace path) when the fast path is off, the event is
 * not the one the budget expects next, the entry is not published or the
 * ring is that full. */
static int64_t begin(enum avt_agent_raw which, uint32_t reserve, lock_fn *fn, uint16_t kind,
		     void *obj, uint64_t site)
{
	if (!avt_enter_event(kind, (uint64_t)(uintptr_t)obj, site))
		return -1;
	if (!avt_agent_expected(avt_ring, avt_my_tid, kind, (uint64_t)(uintptr_t)obj, site) ||
	    !avt_listed(kind)) {
		avt_leave();
		return -1;
	}
	*fn = raw(which);
	int64_t ticket = *fn ? avt_agent_claim(avt_ring, reserve) : -1;
	if (ticket < 0) {
		if (*fn)
			atomic_fetch_add_explicit(&avt_ring->full, 1, memory_order_relaxed);
		avt_leave();
	}
	return ticket;
}

/* A lock that must not block in-process: tried through the unhooked
 * try-function; taken: the event is committed (kind); not taken: a
 * try-call commits trylock_fail, a blocking call cancels its slot and
 * goes down the ptrace path, whose hook and model decide (a lock held by
 * a stopped thread, a relock by its owner). */
static int lock_like(void *m, uint64_t site, enum avt_agent_raw try_fn, uint16_t kind_taken,
		     int is_try)
{
	lock_fn trylock;
	int64_t ticket = begin(try_fn, AVT_AGENT_UNLOCK_RESERVE, &trylock, kind_taken, m, site);
	if (ticket < 0)
		return -1;
	int rv = trylock(m);
	/* EOWNERDEAD: a robust mutex whose owner died, taken (the caller
	 * must make it consistent); anything else: not taken */
	int taken = rv == 0 || rv == EOWNERDEAD;
	/* not taken, by a blocking call, or by a try-call whose budget
	 * expected the acquire: the ptrace hook and its model decide */
	int decline = !taken && (!is_try || atomic_load_explicit(&avt_ring->expect_n,
								  memory_order_relaxed));
	uint16_t kind = taken ? kind_taken : decline ? AVT_EV_NONE : AVT_EV_TRYLOCK_FAIL;
	avt_agent_commit(avt_ring, (uint64_t)ticket, kind, (uint64_t)(uintptr_t)m, site, avt_my_tid);
	avt_agent_yield_note(avt_ring, kind, (uint64_t)(uintptr_t)m);
	if (kind != AVT_EV_NONE)
		avt_agent_spend(avt_ring);
	avt_leave();
	return decline ? -1 : rv;
}

/* The release is in the ring before the lock is free, as the ptrace hook
 * emits it at the entry of the call; whether it is an event at all (a
 * lock never locked, not held) the supervisor's model says. */
static int unlock_like(void *m, uint64_t site, enum avt_agent_raw unlock_fn)
{
	lock_fn unlock;
	int64_t ticket = begin(unlock_fn, 0, &unlock, AVT_EV_RELEASE, m, site);
	if (ticket < 0)
		return -1;
	avt_agent_commit(avt_ring, (uint64_t)ticket, AVT_EV_RELEASE, (uint64_t)(uintptr_t)m, site, avt_my_tid);
	avt_agent_yield_note(avt_ring, AVT_EV_RELEASE, (uint64_t)(uintptr_t)m);
	avt_agent_spend(avt_ring);
	int rv = unlock(m);
	avt_leave();
	return rv;
}

/* libc's functions for the stubs' slow path: found once (in the
 * constructor; here if some other library's constructor, or a sanitizer
 * runtime's start-up in the program, calls one before it ran). */
static void real_ptrs(void)
{
	static const struct { const char *name, *version; } fn[N_REAL] = {
		{ "pthread_mutex_lock", "GLIBC_2.2.5" },
		{ "pthread_mutex_trylock", "GLIBC_2.2.5" },
		{ "pthread_mutex_unlock", "GLIBC_2.2.5" },
		{ "pthread_rwlock_rdlock", "GLIBC_2.2.5" },
		{ "pthread_rwlock_tryrdlock", "GLIBC_2.2.5" },
		{ "pthread_rwlock_wrlock", "GLIBC_2.2.5" },
		{ "pthread_rwlock_trywrlock", "GLIBC_2.2.5" },
		{ "pthread_rwlock_unlock", "GLIBC_2.2.5" },
		{ "pthread_spin_lock", "GLIBC_2.2.5" },
		{ "pthread_spin_trylock", "GLIBC_2.2.5" },
		{ "pthread_spin_unlock", "GLIBC_2.2.5" },
		{ "pthread_cond_signal", "GLIBC_2.3.2" },
		{ "pthread_cond_broadcast", "GLIBC_2.3.2" },
		{ "sched_yield", "GLIBC_2.2.5" },
	};
	/* Re-entered: the dlopen below allocated, and a malloc of the
	 * program's own (jemalloc, preloaded before the agent: tracer/
	 * sanitizer.c) locks a mutex the first time, through these stubs.
	 * The next definitions then (libc's: such a library defines no
	 * pthread function), found with no allocation. */
	static __thread int resolving TLS;
	if (resolving) {
		for (int i = 0; i < N_REAL; i++)
			if (!__atomic_load_n(&avt_real_ptr[i], __ATOMIC_ACQUIRE))
				__atomic_store_n(&avt_real_ptr[i], dlvsym(RTLD_NEXT, fn[i].name, fn[i].version),
						 __ATOMIC_RELEASE);
		return;
	}
	resolving = 1;
	/* libc's own definitions (and ld.so's, its only dependency): no
	 * other object's names come between */
	void *libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
	for (int i = 0; i < N_REAL; i++)
		if (!__atomic_load_n(&avt_real_ptr[i], __ATOMIC_ACQUIRE))
			__atomic_store_n(&avt_real_ptr[i],
					 dlvsym(libc ? libc : RTLD_NEXT, fn[i].name, fn[i].version),
					 __ATOMIC_RELEASE);
	if (libc)
		dlclose(libc);
	resolving = 0;
}

/* The fast path's result; declining (-1) before the pointers are known
 * finds them first (the stub jumps through them). */
static inline int ptr_fast(int rv)
{
	if (rv == -1 && __builtin_expect(!__atomic_load_n(&avt_real_ptr[N_REAL - 1], __ATOMIC_ACQUIRE), 0))
		real_ptrs();
	return rv;
}

/* A condition variable signalled: the event is committed, and the thread
 * leaves the fast path, before libc's function runs: glibc's signal may
 * sleep in the kernel until waiters interrupted earlier leave their group,
 * and a thread asleep there must be free to be set aside, as on ptrace.
 * The model wakes the waiters when the record is drained, as the ptrace
 * hook does at the call's entry. */
static int signal_like(void *c, uint64_t site, enum avt_agent_raw fn, uint16_t kind)
{
	lock_fn call;
	int64_t ticket = begin(fn, AVT_AGENT_UNLOCK_RESERVE, &call, kind, c, site);
	if (ticket < 0)
		return -1;
	avt_agent_commit(avt_ring, (uint64_t)ticket, kind, (uint64_t)(uintptr_t)c, site, avt_my_tid);
	avt_agent_spend(avt_ring);
	avt_leave();
	return call(c);
}

FAST(avt_mutex_lock) { return ptr_fast(lock_like(m, site, AVT_RAW_MUTEX_TRYLOCK, AVT_EV_ACQUIRE, 0)); }
FAST(avt_mutex_trylock) { return ptr_fast(lock_like(m, site, AVT_RAW_MUTEX_TRYLOCK, AVT_EV_ACQUIRE, 1)); }
FAST(avt_mutex_unlock) { return ptr_fast(unlock_like(m, site, AVT_RAW_MUTEX_UNLOCK)); }
FAST(avt_rw_rdlock) { return ptr_fast(lock_like(m, site, AVT_RAW_RW_TRYRDLOCK, AVT_EV_RD_ACQUIRE, 0)); }
FAST(avt_rw_tryrdlock) { return ptr_fast(lock_like(m, site, AVT_RAW_RW_TRYRDLOCK, AVT_EV_RD_ACQUIRE, 1)); }
FAST(avt_rw_wrlock) { return ptr_fast(lock_like(m, site, AVT_RAW_RW_TRYWRLOCK, AVT_EV_WR_ACQUIRE, 0)); }
FAST(avt_rw_trywrlock) { return ptr_fast(lock_like(m, site, AVT_RAW_RW_TRYWRLOCK, AVT_EV_WR_ACQUIRE, 1)); }
FAST(avt_rw_unlock) { return ptr_fast(unlock_like(m, site, AVT_RAW_RW_UNLOCK)); }
FAST(avt_spin_lock) { return ptr_fast(lock_like(m, site, AVT_RAW_SPIN_TRYLOCK, AVT_EV_ACQUIRE, 0)); }
FAST(avt_spin_trylock) { return ptr_fast(lock_like(m, site, AVT_RAW_SPIN_TRYLOCK, AVT_EV_ACQUIRE, 1)); }
FAST(avt_spin_unlock) { return ptr_fast(unlock_like(m, site, AVT_RAW_SPIN_UNLOCK)); }
FAST(avt_cond_signal) { return ptr_fast(signal_like(m, site, AVT_RAW_COND_SIGNAL, AVT_EV_SIGNAL)); }
FAST(avt_cond_broadcast) { return ptr_fast(signal_like(m, site, AVT_RAW_COND_BROADCAST, AVT_EV_BROADCAST)); }

/* sched_yield (g_thread_yield's) by the token's holder while every other
 * thread waits for a lock it holds: the supervisor's pick at the yield's
 * ptrace stop would resume it at once (avt_agent_yield_ok), so the round
 * trip is skipped; the kernel's yield is still made, for other processes.
 * Anything else: libc's sched_yield, whose hook stops. */
FAST(avt_sched_yield)
{
	if (!avt_usable(avt_ring) || !avt_agent_yield_ok(avt_ring, avt_my_tid))
		return ptr_fast(-1);
	atomic_fetch_add_explicit(&avt_ring->yields, 1, memory_order_relaxed);
	return (int)syscall(SYS_sched_yield);
}

/*
 * GLib's GMutex (its built-in sync spec, docs/sync-spec.md), a futex word
 * in libglib: g_mutex_lock, _trylock and _unlock as pthread's mutex, through
 * the unhooked g_mutex_trylock (TRUE: taken) and g_mutex_unlock.  The
 * supervisor publishes those two only when the spec in force gives the
 * three functions GLib's meaning (tracer/agent.c, gmutex_spec); the
 * records say they are a spec's (AVT_AGENT_T_SPEC).  The slow path is
 * libglib's function, found by name (RTLD_NEXT, or libglib loaded
 * RTLD_LOCAL by a plugin): its ptrace hook decides, as without the agent.
 */
enum { N_GLIB = 3 };
HIDDEN void *avt_glib_ptr[N_GLIB];
STUB_T(g_mutex_lock, avt_gmutex_lock, avt_glib_ptr, 0);
STUB_T(g_mutex_unlock, avt_gmutex_unlock, avt_glib_ptr, 1);
STUB_T(g_mutex_trylock, avt_gmutex_trylock, avt_glib_ptr, 2);

static void glib_ptrs(void)
{
	static const char *const names[N_GLIB] = { "g_mutex_lock", "g_mutex_unlock",
						   "g_mutex_trylock" };
	void *glib = NULL;
	for (int i = 0; i < N_GLIB; i++) {
		if (__atomic_load_n(&avt_glib_ptr[i], __ATOMIC_ACQUIRE))
			continue;
		void *p = dlsym(RTLD_NEXT, names[i]);
		if (!p && !glib)
			glib = dlopen("libglib-2.0.so.0", RTLD_LAZY | RTLD_NOLOAD);
		if (!p && glib)
			p = dlsym(glib, names[i]);
		__atomic_store_n(&avt_glib_ptr[i], p, __ATOMIC_RELEASE);
	}
	if (glib)
		dlclose(glib);
}

/* -1 (take libglib's function) once its address is known */
static int glib_slow(void)
{
	for (int i = 0; i < N_GLIB; i++)
		if (__builtin_expect(!__atomic_load_n(&avt_glib_ptr[i], __ATOMIC_ACQUIRE), 0))
			glib_ptrs();
	return -1;
}

/* g_mutex_lock (is_try 0) and g_mutex_trylock, as lock_like: a free word
 * is taken in-process; a held one (by a stopped thread, or relocked by its
 * owner) sends the lock to the ptrace path, whose model decides, and gives
 * the trylock a trylock_fail, as the spec's hook emits at the call's
 * return (a budget that expected the acquire declines).  g_mutex_trylock
 * returns TRUE when taken; g_mutex_lock returns nothing. */
static int gmutex_lock_like(void *m, uint64_t site, int is_try)
{
	lock_fn trylock;
	int64_t ticket = begin(AVT_RAW_GMUTEX_TRYLOCK, AVT_AGENT_UNLOCK_RESERVE, &trylock,
			       AVT_EV_ACQUIRE, m, site);
	if (ticket < 0)
		return glib_slow();
	int taken = trylock(m) != 0;
	int decline = !taken && (!is_try || atomic_load_explicit(&avt_ring->expect_n,
								  memory_order_relaxed));
	uint16_t kind = taken ? AVT_EV_ACQUIRE : decline ? AVT_EV_NONE : AVT_EV_TRYLOCK_FAIL;
	avt_agent_commit_t(avt_ring, (uint64_t)ticket, kind, (uint64_t)(uintptr_t)m, 0, site,
			   avt_my_tid, AVT_AGENT_T_SPEC);
	avt_agent_yield_note(avt_ring, kind, (uint64_t)(uintptr_t)m);
	if (kind != AVT_EV_NONE)
		avt_agent_spend(avt_ring);
	avt_leave();
	return decline ? glib_slow() : is_try ? taken : 0;
}

FAST(avt_gmutex_lock) { return gmutex_lock_like(m, site, 0); }
FAST(avt_gmutex_trylock) { return gmutex_lock_like(m, site, 1); }

/* The release is in the ring before the word is free (unlock_like). */
FAST(avt_gmutex_unlock)
{
	lock_fn unlock;
	int64_t ticket = begin(AVT_RAW_GMUTEX_UNLOCK, 0, &unlock, AVT_EV_RELEASE, m, site);
	if (ticket < 0)
		return glib_slow();
	avt_agent_commit_t(avt_ring, (uint64_t)ticket, AVT_EV_RELEASE, (uint64_t)(uintptr_t)m, 0,
			   site, avt_my_tid, AVT_AGENT_T_SPEC);
	avt_agent_yield_note(avt_ring, AVT_EV_RELEASE, (uint64_t)(uintptr_t)m);
	avt_agent_spend(avt_ring);
	unlock(m); /* void: its %eax means nothing */
	avt_leave();
	return 0;
}

/*
 * The heap: malloc, calloc, realloc and free, for the heap's records
 * (which name the blocks the program's accesses touch: heap#N).  Not
 * events: no budget is spent and no expectation checked, but only the
 * thread that holds the run token (the one running) writes the ring, so
 * its order is still the order the calls took effect in.  The block is
 * obtained through libc's unhooked entry (raw[]), published only when
 * the supervisor hooked the heap; otherwise, or whenever the ring is not
 * usable, the stub jumps to libc's function itself (__libc_malloc and
 * the like: the same code, bound at load, no lookup that could allocate)
 * with the caller's return address in place: the ptrace path.
 */
#define HEAP_STUB(name, idx)                                    \
	__asm__(".text\n"                                       \
		".globl " #name "\n"                            \
		".type " #name ", @function\n"                  \
		".p2align 4\n" #name ":\n"                      \
		"	push %rdi\n"                            \
		"	push %rsi\n"                            \
		"	sub $24, %rsp\n" /* rsp 16-aligned */   \
		"	mov 40(%rsp), %rdx\n" /* the site */    \
		"	mov %rsp, %rcx\n" /* the result */      \
		"	mov $" #idx ", %r8d\n"                  \
		"	call avt_heap_fast\n"                   \
		"	test %eax, %eax\n"                      \
		"	jnz 1f\n"                               \
		"	mov (%rsp), %rax\n"                     \
		"	add $40, %rsp\n"                        \
		"	ret\n"                                  \
		"1:	add $24, %rsp\n"                        \
		"	pop %rsi\n"                             \
		"	pop %rdi\n"                             \
		"	jmp *avt_heap_real+8*(" #idx "-9)(%rip)\n" \
		".size " #name ", .-" #name "\n")

_Static_assert(AVT_RAW_MALLOC == 9 && AVT_RAW_FREE == 12, "HEAP_STUB's indexes");
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
HIDDEN void *avt_heap_real[4] = { (void *)__libc_malloc, (void *)__libc_calloc,
				  (void *)__libc_realloc, (void *)__libc_free };
HEAP_STUB(malloc, 9);
HEAP_STUB(calloc, 10);
HEAP_STUB(realloc, 11);
HEAP_STUB(free, 12);

typedef void *(*heap_fn)(uint64_t, uint64_t);
HIDDEN int avt_heap_fast(uint64_t a0, uint64_t a1, uint64_t site, void **out, uint32_t which);

/* The call (which, with a0 and a1) made in-process: 0 and its result in
 * *out; 1: take the ptrace path.  free's record is in the ring before
 * the block is free, as the ptrace hook takes it at the call's entry. */
HIDDEN int avt_heap_fast(uint64_t a0, uint64_t a1, uint64_t site, void **out, uint32_t which)
{
	struct avt_agent_hdr *r = avt_ring;
	if (which == AVT_RAW_FREE && !a0) {
		*out = NULL; /* free(NULL): nothing, and no record either way */
		return 0;
	}
	if (!avt_usable(r) || atomic_load_explicit(&r->run_tid, memory_order_acquire) != avt_my_tid)
		return 1;
	heap_fn fn = (heap_fn)(uintptr_t)atomic_load_explicit(&r->raw[which], memory_order_relaxed);
	if (!fn)
		return 1;
	avt_busy(r);
	int64_t ticket = avt_agent_claim(r, AVT_AGENT_UNLOCK_RESERVE);
	if (ticket < 0) {
		atomic_fetch_add_explicit(&r->full, 1, memory_order_relaxed);
		avt_leave();
		return 1;
	}
	uint64_t size = which == AVT_RAW_CALLOC ? a0 * a1 : which == AVT_RAW_REALLOC ? a1 : a0;
	if (which == AVT_RAW_FREE) {
		avt_agent_commit_alloc(r, (uint64_t)ticket, which, a0, 0, 0, site, avt_my_tid);
		fn(a0, 0);
		*out = NULL;
	} else {
		*out = fn(a0, a1);
		avt_agent_commit_alloc(r, (uint64_t)ticket, which, (uint64_t)(uintptr_t)*out,
				       which == AVT_RAW_REALLOC ? a0 : 0, size,
				       site, avt_my_tid);
	}
	avt_leave();
	return 0;
}

/*
 * Threads: pthread_create and pthread_join.  Neither is an event at its
 * entry on the ptrace path: the create event is emitted at the clone's
 * stop (the kernel's, which stays), with the site the entry's stop kept;
 * a join is an event, and waits while its thread lives.  So, for the
 * token's holder with events left and no expected events (a walk's or a
 * script's: those compare each event with the recording), in-process:
 *
 *   create  a call's record (the site, the caller's frame pointer) goes
 *           into the ring, then the stub jumps to libc's unhooked copy
 *           (raw[]): the clone's stop drains the record first
 *   join    pthread_tryjoin_np, which never blocks: joined (the thread
 *           had exited: the supervisor has its exit event already, since
 *           the kernel clears its tid after that stop) commits the join
 *           event; still running, the slot is cancelled and the stub jumps
 *           to libc's pthread_join, the ptrace path, whose model waits
 *
 * The stub keeps the four argument registers for that jump and hands the
 * C side the arguments, the caller's return address and frame pointer,
 * and a word for the result: 0, return it; 1, jump to it.
 */
#define THREAD_STUB(name, fast)                                 \
	__asm__(".text\n"                                       \
		".globl " #name "\n"                            \
		".type " #name ", @function\n"                  \
		".p2align 4\n" #name ":\n"                      \
		"	push %rdi\n"                            \
		"	push %rsi\n"                            \
		"	push %rdx\n"                            \
		"	push %rcx\n"                            \
		"	sub $8, %rsp\n" /* rsp 16-aligned */    \
		"	mov 40(%rsp), %rdx\n" /* the site */    \
		"	mov %rbp, %rcx\n"                       \
		"	mov %rsp, %r8\n" /* the result */       \
		"	call " #fast "\n"                       \
		"	test %eax, %eax\n"                      \
		"	jnz 1f\n"                               \
		"	mov (%rsp), %rax\n"                     \
		"	add $40, %rsp\n"                        \
		"	ret\n"                                  \
		"1:	mov (%rsp), %rax\n"                     \
		"	add $8, %rsp\n"                         \
		"	pop %rcx\n"                             \
		"	pop %rdx\n"                             \
		"	pop %rsi\n"                             \
		"	pop %rdi\n"                             \
		"	jmp *%rax\n"                            \
		".size " #name ", .-" #name "\n")

typedef int (*tryjoin_fn)(pthread_t, void **);
enum { THR_CREATE, THR_JOIN, THR_TRYJOIN, N_THR };
static void *thr_real[N_THR];

/* libc's functions (found as real_ptrs finds the locks'; before glibc
 * 2.34 they are libpthread's: the next definition then) */
static void *thr_ptr(int i)
{
	static const struct { const char *name, *version; } fn[N_THR] = {
		{ "pthread_create", "GLIBC_2.2.5" },
		{ "pthread_join", "GLIBC_2.2.5" },
		{ "pthread_tryjoin_np", "GLIBC_2.3.3" },
	};
	void *p = __atomic_load_n(&thr_real[i], __ATOMIC_ACQUIRE);
	if (p)
		return p;
	void *libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
	p = libc ? dlvsym(libc, fn[i].name, fn[i].version) : NULL;
	if (!p)
		p = dlvsym(RTLD_NEXT, fn[i].name, fn[i].version);
	if (libc)
		dlclose(libc);
	__atomic_store_n(&thr_real[i], p, __ATOMIC_RELEASE);
	return p;
}

/* May this thread take a thread call in-process (raw[which] published,
 * no expected events)?  Reads expect_n before entering: a walk's or a
 * script's budget compares every event with the recording. */
static int thr_may(enum avt_agent_raw which)
{
	struct avt_agent_hdr *r = avt_ring;
	return r && !avt_detached && !avt_depth &&
	       atomic_load_explicit(&r->raw[which], memory_order_relaxed) &&
	       !atomic_load_explicit(&r->expect_n, memory_order_relaxed);
}

HIDDEN int avt_create_fast(uint64_t a0, uint64_t a1, uint64_t site, uint64_t rbp, uint64_t *out);
HIDDEN int avt_join_fast(uint64_t th, uint64_t retp, uint64_t site, uint64_t rbp, uint64_t *out);

HIDDEN int avt_create_fast(uint64_t a0, uint64_t a1, uint64_t site, uint64_t rbp, uint64_t *out)
{
	(void)a0, (void)a1;
	*out = (uint64_t)(uintptr_t)thr_ptr(THR_CREATE);
	if (!thr_may(AVT_RAW_CREATE) || !avt_enter())
		return 1;
	int64_t ticket = avt_agent_claim(avt_ring, AVT_AGENT_UNLOCK_RESERVE);
	if (ticket < 0) {
		atomic_fetch_add_explicit(&avt_ring->full, 1, memory_order_relaxed);
	} else {
		/* the stub's frame: out[1] is the saved rcx (the start
		 * routine's argument), out + 5 the caller's stack pointer */
		avt_agent_commit_alloc(avt_ring, (uint64_t)ticket, AVT_RAW_CREATE, out[1], rbp,
				       (uint64_t)(uintptr_t)(out + 5), site, avt_my_tid);
		*out = atomic_load_explicit(&avt_ring->raw[AVT_RAW_CREATE], memory_order_relaxed);
	}
	avt_leave();
	return 1;
}

HIDDEN int avt_join_fast(uint64_t th, uint64_t retp, uint64_t site, uint64_t rbp, uint64_t *out)
{
	*out = (uint64_t)(uintptr_t)thr_ptr(THR_JOIN);
	tryjoin_fn tryjoin = (tryjoin_fn)(uintptr_t)thr_ptr(THR_TRYJOIN);
	lock_fn unused;
	if (!tryjoin || !thr_may(AVT_RAW_JOIN))
		return 1;
	int64_t ticket = begin(AVT_RAW_JOIN, AVT_AGENT_UNLOCK_RESERVE, &unused, AVT_EV_JOIN,
			       (void *)(uintptr_t)th, site);
	if (ticket < 0)
		return 1;
	int rv = tryjoin((pthread_t)th, (void **)(uintptr_t)retp);
	avt_agent_commit2(avt_ring, (uint64_t)ticket, rv ? AVT_EV_NONE : AVT_EV_JOIN, th, rbp, site,
			  avt_my_tid);
	if (!rv)
		avt_agent_spend(avt_ring);
	avt_leave();
	if (rv)
		return 1; /* running still (or an error): libc's join, on ptrace */
	*out = 0;
	return 0;
}

THREAD_STUB(pthread_create, avt_create_fast);
THREAD_STUB(pthread_join, avt_join_fast);

/* fork(): the child is not traced (avtrace detaches it, as without the
 * agent); it must never write into the parent's ring. */
static void on_fork_child(void)
{
	avt_detached = 1;
	if (avt_ring)
		munmap(avt_ring, ring_len);
	avt_ring = NULL;
	avt_my_tid = 0;
	avt_depth = 0;
}

/* Is fd the supervisor's memfd (and not some file the program opened
 * under the same number, as in a replay of an agent recording)? */
static int is_our_memfd(int fd)
{
	char path[64], link[128];
	static const char want[] = "/memfd:" AVT_AGENT_MEMFD_NAME;
	int n = 0;
	const char *p = "/proc/self/fd/";
	while (p[n])
		path[n] = p[n], n++;
	char digits[16];
	int nd = 0;
	for (int v = fd; nd == 0 || v; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	while (nd)
		path[n++] = digits[--nd];
	path[n] = 0;
	ssize_t len = readlink(path, link, sizeof link - 1);
	if (len < (ssize_t)(sizeof want - 1))
		return 0;
	return !memcmp(link, want, sizeof want - 1);
}

__attribute__((constructor)) static void agent_init(void)
{
	real_ptrs();
	glib_ptrs();
	for (int i = 0; i < N_THR; i++)
		thr_ptr(i);
	const char *s = getenv(AVT_AGENT_ENV_FD);
	if (!s || !*s)
		return;
	int fd = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || fd > 100000)
			return;
		fd = fd * 10 + (*s - '0');
	}
	struct stat st;
	if (!is_our_memfd(fd) || fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct avt_agent_hdr))
		return;
	size_t len = (size_t)st.st_size;
	void *p = mmap((void *)(uintptr_t)AVT_AGENT_MAP_ADDR, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	struct avt_agent_hdr *h = p;
	int32_t want = atomic_load_explicit(&h->want_pid, memory_order_relaxed);
	if (!avt_agent_valid(h, len) || (want && want != (int32_t)getpid())) {
		/* another process of the tree, which inherited the descriptor:
		 * not the one avtrace records */
		munmap(p, len);
		return;
	}
	ring_len = len;
	atomic_store_explicit(&h->pid, (int32_t)getpid(), memory_order_relaxed);
	atomic_fetch_add_explicit(&h->attached, 1, memory_order_relaxed);
	atomic_store_explicit(&h->self, (uint64_t)(uintptr_t)p, memory_order_relaxed);
	atomic_store_explicit(&h->park_entry[0], (uint64_t)(uintptr_t)avt_entry_pthread_mutex_lock,
			      memory_order_relaxed);
	atomic_store_explicit(&h->park_entry[1], (uint64_t)(uintptr_t)avt_entry_pthread_mutex_unlock,
			      memory_order_relaxed);
	avt_value_publish(h);
	atomic_store_explicit(&h->access_entry, (uint64_t)(uintptr_t)avt_access_entry,
			      memory_order_release);
	pthread_atfork(NULL, NULL, on_fork_child);
	avt_ring = h;
}
