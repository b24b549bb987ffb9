/*
 * libavtrace-agent.so: avtrace's in-process fast path (docs/agent.md).
 *
 * Loaded into the target by LD_PRELOAD when avtrace records it (and when
 * it replays such a recording).  It interposes pthread_mutex_lock,
 * pthread_mutex_trylock and pthread_mutex_unlock.  The supervisor still
 * serializes the threads under ptrace (one runs at a time) and says which
 * thread may take a fast path and for how many events (the run token:
 * run_tid, budget); what the agent saves is the ptrace stop per
 * uncontended operation:
 *
 *   lock     claim a ring slot, try the lock through the unhooked copy of
 *            pthread_mutex_trylock; taken: commit an acquire event, return
 *            0; busy (held by a stopped thread, or relocked by its owner):
 *            cancel the slot and jump to the real (hooked) function with the
 *            caller's return address in place, so the ptrace hook sees the
 *            same call it always sees and its model decides
 *   trylock  the same, committing acquire or trylock_fail
 *   unlock   commit a release event, then unlock through the unhooked copy
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/agent_proto.h"

#define HIDDEN __attribute__((visibility("hidden")))
#define TLS __attribute__((tls_model("initial-exec")))

static struct avt_agent_hdr *ring;   /* NULL: passive, every call goes to ptrace */
static size_t ring_len;
static volatile int detached;        /* a forked child: never touch the ring */
static __thread int depth TLS;       /* > 0: inside a fast path (signal nesting) */
static __thread uint32_t my_tid TLS;

typedef int (*mutex_fn)(pthread_mutex_t *);

/* The fast paths, called by the stubs below with the caller's return
 * address.  -1: take the ptrace path; else the function's return value. */
HIDDEN int avt_agent_lock(pthread_mutex_t *m, uint64_t site);
HIDDEN int avt_agent_trylock(pthread_mutex_t *m, uint64_t site);
HIDDEN int avt_agent_unlock(pthread_mutex_t *m, uint64_t site);

/*
 * The exported entry points.  Each hands the fast path its argument and
 * its caller's return address (0(%rsp) at entry); on -1 it jumps, not
 * calls, to libc's function (its __pthread_* alias, the same code), so the
 * return address on the stack is still the caller's and the ptrace hook at
 * that function's entry reports the caller's site, as without the agent.
 */
#define STUB(name, fast, real)                                  \
	__asm__(".text\n"                                       \
		".globl " #name "\n"                            \
		".type " #name ", @function\n"                  \
		".p2align 4\n" #name ":\n"                      \
		"	mov (%rsp), %rsi\n"                     \
		"	push %rdi\n" /* keeps rsp 16-aligned */ \
		"	call " #fast "\n"                       \
		"	pop %rdi\n"                             \
		"	cmp $-1, %eax\n"                        \
		"	je 1f\n"                                \
		"	ret\n"                                  \
		"1:	jmp " #real "@PLT\n"                    \
		".size " #name ", .-" #name "\n")

/* libc's own names for them, at the version every x86-64 glibc has */
__asm__(".symver avt_real_lock, __pthread_mutex_lock@GLIBC_2.2.5\n"
	".symver avt_real_trylock, __pthread_mutex_trylock@GLIBC_2.2.5\n"
	".symver avt_real_unlock, __pthread_mutex_unlock@GLIBC_2.2.5\n");
STUB(pthread_mutex_lock, avt_agent_lock, avt_real_lock);
STUB(pthread_mutex_trylock, avt_agent_trylock, avt_real_trylock);
STUB(pthread_mutex_unlock, avt_agent_unlock, avt_real_unlock);

/* Enters a fast path: the ring is there, the supervisor enabled it, this
 * is not a forked child, and no hook of this thread is in progress. */
static inline int enter(void)
{
	if (!ring || detached || depth ||
	    !atomic_load_explicit(&ring->enabled, memory_order_acquire)) {
		if (ring && depth && !detached)
			atomic_fetch_add_explicit(&ring->nested, 1, memory_order_relaxed);
		return 0;
	}
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	/* the run token: this thread was resumed by the supervisor with
	 * events left before the scheduler's next decision */
	if (!avt_agent_may_run(ring, my_tid))
		return 0;
	depth = 1;
	/* the supervisor does not take a thread as preempted inside here */
	atomic_store_explicit(&ring->busy, my_tid, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return 1;
}

static inline void leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&ring->busy, 0, memory_order_relaxed);
	depth = 0;
}

static inline mutex_fn raw(enum avt_agent_raw which)
{
	return (mutex_fn)(uintptr_t)atomic_load_explicit(&ring->raw[which], memory_order_relaxed);
}

static int lock_like(pthread_mutex_t *m, uint64_t site, int is_try)
{
	if (!enter())
		return -1;
	mutex_fn trylock = raw(AVT_RAW_MUTEX_TRYLOCK);
	int64_t ticket = trylock ? avt_agent_claim(ring, AVT_AGENT_UNLOCK_RESERVE) : -1;
	if (ticket < 0) {
		if (trylock)
			atomic_fetch_add_explicit(&ring->full, 1, memory_order_relaxed);
		leave();
		return -1;
	}
	int rv = trylock(m);
	/* EOWNERDEAD: a robust mutex whose owner died, taken (the caller
	 * must make it consistent); anything else: not taken */
	int taken = rv == 0 || rv == EOWNERDEAD;
	uint16_t kind = taken ? AVT_EV_ACQUIRE : is_try ? AVT_EV_TRYLOCK_FAIL : AVT_EV_NONE;
	avt_agent_commit(ring, (uint64_t)ticket, kind, (uint64_t)(uintptr_t)m, site, my_tid);
	if (kind != AVT_EV_NONE)
		avt_agent_spend(ring);
	leave();
	if (!taken && !is_try)
		return -1; /* busy: the ptrace hook and its model decide */
	return rv;
}

int avt_agent_lock(pthread_mutex_t *m, uint64_t site)
{
	return lock_like(m, site, 0);
}

int avt_agent_trylock(pthread_mutex_t *m, uint64_t site)
{
	return lock_like(m, site, 1);
}

int avt_agent_unlock(pthread_mutex_t *m, uint64_t site)
{
	if (!enter())
		return -1;
	mutex_fn unlock = raw(AVT_RAW_MUTEX_UNLOCK);
	int64_t ticket = unlock ? avt_agent_claim(ring, 0) : -1;
	if (ticket < 0) {
		if (unlock)
			atomic_fetch_add_explicit(&ring->full, 1, memory_order_relaxed);
		leave();
		return -1;
	}
	/* the release is in the ring before the lock is free, as the ptrace
	 * hook emits it at the entry of the call; whether it is an event at
	 * all (a lock never locked, not held) the supervisor's model says */
	avt_agent_commit(ring, (uint64_t)ticket, AVT_EV_RELEASE, (uint64_t)(uintptr_t)m, site, my_tid);
	avt_agent_spend(ring);
	int rv = unlock(m);
	leave();
	return rv;
}

/* fork(): the child is not traced (avtrace detaches it, as without the
 * agent); it must never write into the parent's ring. */
static void on_fork_child(void)
{
	detached = 1;
	if (ring)
		munmap(ring, ring_len);
	ring = NULL;
	my_tid = 0;
	depth = 0;
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
	if (!avt_agent_valid(h, len)) {
		munmap(p, len);
		return;
	}
	ring_len = len;
	atomic_store_explicit(&h->pid, (int32_t)getpid(), memory_order_relaxed);
	atomic_fetch_add_explicit(&h->attached, 1, memory_order_relaxed);
	pthread_atfork(NULL, NULL, on_fork_child);
	ring = h;
}
