/*
 * Private state of the tracer, shared by its files (tracer.c: launch and
 * the event loop; hooks.c: what each hooked function means; model.c: the
 * lock / condition / join model).  Three levels, each with one owner:
 * thread (tthread + tracer_priv_thread), address space (bpt_table, modmap,
 * scratch page), session (struct tracer).
 */
#ifndef AVT_TRACER_INT_H
#define AVT_TRACER_INT_H

#include <string.h>
#include <sys/user.h>

#include "bpt.h"
#include "elfmod.h"
#include "model.h"
#include "tracer.h"
#include "tree.h"
#include "trace/agent_proto.h"
#include "trace/log.h"

/* Breakpoint owners (struct bpt.kind). */
enum {
	BK_HOOK = 1,   /* data = hook index */
	BK_TRAMP,      /* the return trampoline */
	BK_ENTRY,      /* one-shot stop at the program entry */
	BK_PROBE,      /* an avtrace.h USDT probe; data = probe index */
	BK_DLDEBUG,    /* the dynamic linker's _dl_debug_state (a bare ret) */
	BK_ACCESS,     /* an access breakpoint (access.c); data = site index */
	BK_UNWIND,     /* an unwinder's entry in the target (unwinders.c) */
	BK_EXECVE,     /* libc's execve (sanexec.c) */
};

/* Pseudo hooks for requests that are not function entries. */
enum {
	HK_EXIT = -2,  /* the thread's own exit */
	HK_START = -3, /* a fresh thread's first run */
	HK_PROBE = -4, /* an avtrace.h probe: read, write, begin, end */
	HK_FRAME = -5, /* a user function's return watched for --stacks */
	HK_ACCESS = -6, /* an access breakpoint: read, write, rmw */
	HK_FUTEX = -7, /* a futex call of the program's own (futex.c, --futex) */
};

/* A USDT argument operand (probes.c). */
struct sdt_arg {
	int type;          /* SA_* in probes.c */
	int size;          /* bytes; negative: signed */
	size_t base, index; /* register offsets in user_regs_struct */
	int base_width, index_width;
	bool has_base, has_index, absolute;
	int scale;
	int64_t disp;
};

struct watch {
	uint64_t addr, size;
	uint64_t last;     /* value after the last access seen */
	char name[128];
};

struct probe {
	uint64_t pc;
	int kind;          /* AVT_EV_READ / WRITE / BEGIN / END */
	struct sdt_arg arg[2];
};

/* What a hooked function does to the model, at entry and at return. */
enum hop {
	OP_CREATE, OP_JOIN,
	OP_LOCK, OP_TRYLOCK, OP_TIMEDLOCK, OP_UNLOCK,
	OP_RDLOCK, OP_WRLOCK, OP_TRYRDLOCK, OP_TRYWRLOCK, OP_TIMEDRDLOCK, OP_TIMEDWRLOCK,
	OP_RWUNLOCK,
	OP_SPINLOCK, OP_SPINTRYLOCK, OP_SPINUNLOCK,
	OP_CONDWAIT, OP_CONDTIMEDWAIT, OP_SIGNAL, OP_BROADCAST,
	OP_BARRIER,
	OP_SEMWAIT, OP_SEMTRYWAIT, OP_SEMTIMEDWAIT, OP_SEMPOST,
	OP_SLEEP,      /* a sleeping call: nanosleep, poll, sched_yield, ... */
	OP_EXIT,       /* exit(), _exit(), _Exit(): the process ends */
	/* heap hooks: transparent (recorded, never a scheduling point) */
	OP_MALLOC, OP_CALLOC, OP_REALLOC, OP_FREE,
};

static inline bool hop_is_heap(enum hop op)
{
	return op >= OP_MALLOC;
}

/* Hooks of a sync spec (hook_def.flags); HF_GATED is a built-in's. */
enum {
	HF_SPEC = 1,          /* from a sync spec (syncspec.c, docs/sync-spec.md) */
	HF_RECURSIVE = 2,     /* OP_LOCK, OP_TRYLOCK: the owner may take it again */
	HF_OK_NONZERO = 4,    /* try-locks: nonzero is success; timed waits:
	                         nonzero is woken, zero timed out */
	HF_ONCE = 8,          /* OP_LOCK held for the call: released at its return */
	HF_ONCE_ENTER = 16,   /* OP_LOCK kept when it returns nonzero (the caller
	                         initializes), released at once when it returns 0 */
	HF_WRAP = 32,         /* OP_CREATE, OP_JOIN: the pthread call inside it is
	                         the event, at this call's site */
	HF_GATED = 64,        /* built-in: libc and ld.so call it themselves, and
	                         those calls pass a gate with no stop (hooks.c) */
};

struct hook_def {
	const char *name;
	enum hop op;
	/* sync-spec hooks only (built-in ones: zero, or HF_GATED) */
	unsigned flags;       /* HF_* */
	const char *lib;      /* the module to look in; "": the program, then any */
	uint8_t arg, arg2;    /* argument index of obj and (waits) of obj2 */
	int8_t bit_arg;       /* >= 0: obj += that argument / 8 (bit locks) */
};

#define HOOK_MAX 256
/* The built-in hooks, then the sync specs' (hookdefs.c, hooks_add_spec). */
extern struct hook_def hook_defs[HOOK_MAX];
extern size_t n_hook_defs;
extern const size_t n_builtin_hooks;

/* A call in progress whose return we intercept (uretprobe style: the
 * return address on the stack is swapped for the trampoline). */
struct retframe {
	uint64_t ret;      /* real return address */
	uint64_t sp;       /* stack pointer at entry (points at the return address) */
	int hook;
	uint64_t obj, obj2;
	uint64_t site;
};

#define MAX_RETFRAMES 32
#define MAX_STACK_DEPTH 16
/* Frames a stack walk reads: the calls it tells apart (stack.c) */
#define MAX_STACK_WALK (MAX_STACK_DEPTH + 8)

struct tracer_priv_thread {
	struct process *proc;  /* the process it belongs to */
	struct retframe rets[MAX_RETFRAMES];
	int nrets;
	bool interrupt_pending;
	bool expect_block;     /* committed into a wait: watch for it falling asleep */
	bool exit_seen;
	bool exit_req;         /* it called exit(): the process ends with it */
	bool sync_sleep;       /* in a pure sleep left to run to its end */
	int pending_sig;       /* signal to deliver on next resume */
	uint64_t resume_pc;    /* nonzero: set pc before resuming */
	uint64_t stop_rip;     /* its pc at the request stop (past the int3) */
	uint64_t create_site;  /* site of the pthread_create in progress */
	struct user_regs_struct regs; /* registers at the request stop */
	bool regs_valid;
	uint64_t stop_pc;      /* address of the int3 it is stopped at (requests) */
	struct { uint64_t cfa; uint32_t inv; } live[MAX_STACK_WALK]; /* open calls, outermost first */
	int nlive;
	uint32_t next_inv;
	struct user_regs_struct slice_regs; /* registers at its last slice end */
	uint32_t slice_nev;    /* its events then */
	bool slice_valid;
	int access_site;       /* HK_ACCESS request: the site's index (access.c) */
	uint64_t escaped_lo;   /* the lowest address into its own stack it let
	                          escape (a thread start's argument, a store
	                          outside the stack), 0: none: its own-stack
	                          accesses from there up are events */
	uint64_t held_since;   /* set aside inside a fresh timed call at (CLOCK_MONOTONIC ns), 0: not (fidelity.c) */
	long held_nr;          /* that call's syscall number */
	struct {               /* its futex call (futex.c) */
		bool restart;      /* interrupted in a wait it re-executes */
		bool in_wait;      /* committed into a wait, not back yet */
		bool exact;        /* the request's site is the syscall itself */
		bool timed;        /* the wait has a timeout */
		uint8_t cls;       /* enum futex_class of the request */
		uint64_t word2;    /* a requeue's or wake_op's second word */
		uint32_t n2;       /* wake_op: how many on word2 */
	} fx;
};

/* Is ea on the stack of a thread whose stack pointer is rsp?
 * (trace/agent_proto.h: the agent's test too.) */
static inline bool own_stack(uint64_t ea, uint64_t rsp)
{
	return avt_own_stack(ea, rsp);
}

/* t (stack pointer sp) let the address p into its own stack escape: the
 * object there and the frames above it (its own, its callers') are events
 * from then on (access.c emit_access); the frames of calls below it are
 * not (std::thread's constructor, called with a reference to main's
 * object, works on temporaries of its own).  False if p is not on t's
 * stack or already escaped. */
static inline bool stack_escape(struct tthread *t, uint64_t p, uint64_t sp)
{
	if (!p || !own_stack(p, sp) || (t->priv->escaped_lo && t->priv->escaped_lo <= p))
		return false;
	t->priv->escaped_lo = p;
	return true;
}

/* Is ea, on t's own stack, in what t let escape? */
static inline bool stack_escaped(const struct tthread *t, uint64_t ea)
{
	return t->priv->escaped_lo && ea >= t->priv->escaped_lo;
}

/* t starts a thread with arg (t's stack pointer sp): a pointer into t's
 * own stack lets it escape.  Not the access feature's: the thread's. */
static inline void thread_start_arg(struct tthread *t, uint64_t arg, uint64_t sp)
{
	stack_escape(t, arg, sp);
}

/* An address space (aspace.c): one per process, built at exec (tracer.c,
 * exec_begin / exec_at_entry, the features' plant), copied at fork (a
 * forked child inherits the parent's int3s and slots).  The session holds
 * owned by its process (process.as). */
struct aspace {
	struct bpt_table bpts;  /* breakpoints and their out-of-line slots */
	struct modmap mods;     /* modules mapped, with their trace ids */
	uint16_t next_mod_id;
	uint64_t scratch;       /* the scratch page (slots, trampoline) */
	uint64_t tramp;         /* address of the return trampoline int3 */
	uint64_t hook_addr[HOOK_MAX]; /* hooked functions, by hook number */
	uint64_t hook_size[HOOK_MAX];
	bool heap_hooked;       /* the heap's hooks are planted (hooks.c) */
	struct probe *probes;   /* planted avtrace.h probes */
	size_t nprobes;
	struct access *acc;     /* access breakpoints (access.c), NULL when off */
	struct sym *sym;        /* live-process symbolizer, made on first use */
	struct cfi_cache *cfi;  /* modules' unwind tables (--stacks), made on first use */
	uint64_t syscall_fn;    /* libc's syscall() (futex.c), 0: not found */
	uint64_t syscall_fn_size;
	/* hooks.c's answers for return addresses seen (is the caller libc's
	 * own, or inside a hooked function?), direct-mapped; forgotten
	 * whenever a module or a hook's address changes (aspace_callers_forget) */
	struct caller_memo {
		uint64_t ret;   /* 0: empty */
		bool internal;
	} caller_memo[1024];
};

static inline void aspace_callers_forget(struct aspace *as)
{
	memset(as->caller_memo, 0, sizeof as->caller_memo);
}

/* aspace.c */
void aspace_init(struct aspace *as);
/* dst (fresh) becomes a copy of src for a forked child pid whose memory
 * is at memfd: its breakpoints, slots, modules, hooks and probes (the
 * child's memory holds the parent's int3s and slots).  The access
 * breakpoints' table and the caches are not copied: a child has none
 * until it plants its own, and the caches are made on first use.
 * Returns 0, or -1 (out of memory; dst released). */
int aspace_copy(struct aspace *dst, const struct aspace *src, pid_t pid, int memfd);
/* Everything but the access state (access.c releases it) and the caches
 * (their owners free them). */
void aspace_release(struct aspace *as);

/* A traced process (process.c): its memory, its address space, its lock
 * model (locks are addresses in it) and its threads.  The session holds
 * its processes; a thread belongs to one (tracer_priv_thread.proc). */
struct process {
	pid_t pid;
	int memfd;            /* its memory (/proc/pid/mem), -1 when closed */
	bool alive;
	int exit_status;      /* shell style */
	int exit_signal;
	struct aspace as;     /* its address space */
	struct model model;
	struct tthread **thr; /* its threads, by logical id */
	size_t nthr, capthr;
	/* the same threads but those seen dead by the last process_prune, by
	 * logical id: what the loop's scans go through, so that a program
	 * that started thousands of threads, a few at a time, costs each
	 * step the threads alive, not all it ever had */
	struct tthread **live;
	size_t nlive, caplive;
	/* its threads that made their START event (emit.c): before the
	 * second, its private accesses say little of sharing (access.c's
	 * budget) */
	uint32_t nstarted;
	/* fs_base -> logical id + 1 (0 empty, FS_GONE deleted), open
	 * addressing: a join finds its thread without a scan (thread.c) */
	struct fs_slot { uint64_t fs; uint32_t lid1; } *fsmap;
	size_t fscap, fsused;
};

/* process.c */
/* A new process pid (its memory not open yet); NULL: out of memory. */
struct process *process_new(pid_t pid);
/* Its threads, its model, its address space; closes its memory. */
void process_free(struct process *p);
/* Drops the threads now dead from p->live (thread.c). */
void process_prune(struct process *p);
/* t's pthread_t is fs now (0: none).  glibc hands a joined thread's
 * thread block to the next thread it creates: another thread that had fs
 * loses it, so at most one thread has a given fs (thread.c). */
void process_set_fs(struct process *p, struct tthread *t, uint64_t fs);
/* The thread whose pthread_t is fs, dead or alive, or NULL. */
struct tthread *process_by_fs(const struct process *p, uint64_t fs);

/* sanitizer.c: a program built with a sanitizer runtime */
struct sanitizer {
	bool prepared;
	bool asan;           /* AddressSanitizer: shadow memory (access.c) */
	char first[64];      /* the runtime's soname LD_PRELOAD must name first, or "" */
	bool allocator;      /* first is an allocator of the program's (malloc) */
	char **env;          /* the environment made for it, or NULL */
	struct { uint64_t lo, hi; } icpt[128]; /* its interceptors of hooked
	                                          functions (hooks.c) */
	size_t nicpt;
	struct { uint64_t lo, hi; } data[64]; /* its global variables */
	size_t ndata;
};
bool sanitizer_runtime(const char *path);
void sanitizer_module(struct tracer *tr, const struct elfmod *m);
bool sanitizer_data(const struct tracer *tr, uint64_t a);
int sanitizer_prepare(struct tracer *tr);
const char *sanitizer_first(const struct tracer *tr);
bool tracer_asan(const struct tracer *tr);
void sanitizer_free(struct tracer *tr);
/* Is the ELF file at path an AddressSanitizer build (libasan.so needed,
 * or __asan_init in its dynamic symbols)? */
bool sanitizer_asan_file(const char *path);

struct tracer {
	struct tracer_opts opts;
	struct tracer_sink sink;
	char *exe;            /* resolved program path (a script's: its
	                         interpreter's, once launched) */
	bool script;          /* the program is a "#!" script */
	char *named;          /* the program named on the command line (its
	                         real path; NULL for a script): the user's code
	                         wherever it is installed (tracer_user_code) */
	bool launched;
	pid_t feeder;         /* tracer_set_stdin's: the caller's child, not traced */
	bool feeder_gone;     /* reaped by a wait for any child */

	/* The processes traced in full.  One: the recorded process (proc);
	 * the others of the tree are followed lightly (tree). */
	struct process **procs;
	size_t nprocs;
	struct process *proc;
	uint32_t current;     /* last thread run, NO_THREAD at start */
	uint64_t current_busy;  /* its time on a CPU since it became the current thread (ns) */
	struct tthread *run_last; /* a script's thread that ended the last run, else NULL */
	uint64_t step_busy;     /* the last step's (run_until_stop) */

	uint64_t seq;
	uint64_t wait_seq;
	unsigned rescue;        /* last-resort resumes of unsignalled waiters left
	                           before "nobody can run" means deadlock */
	struct tracer_stats stats;

	bool sink_stop;         /* the sink asked to stop the session */
	bool interrupt_blocked; /* the pending interrupt sets a sleeper aside */
	int fatal_sig;          /* a fatal signal was delivered (0: none) */
	bool exiting;           /* a thread went by exit_group, or SIGKILL: nothing more happens */
	pid_t fatal_tid;
	uint64_t fatal_pc;

	bool access_on;
	struct watch watch[4];  /* --watch variables (debug registers) */
	size_t nwatch;
	struct tthread **run, **last; /* tracer_step's candidate arrays */
	size_t candcap;

	struct agent *agent;    /* --agent: the in-process fast path (agent.c) */
	struct sanitizer san;   /* sanitizer.c */
	/* The access feature's side of the agent (set by access.c once it is
	 * on; the agent calls back through it, never up into access.c):
	 * access_park_at and access_agent_event below. */
	struct {
		uint64_t (*park_at)(struct tracer *tr, const struct tthread *t, uint16_t *kind);
		void (*event)(struct tracer *tr, struct tthread *t, const struct avt_event *ev);
	} agent_acc;

	/* tids seen before the clone event that announces them */
	pid_t orphans[64];
	int norphans;

	struct tree tree;       /* every process of the program (tree.c) */
};

/* loop.c */
/* What a stop's handler decides for its thread, as data; act() is the one
 * place that carries it out. */
enum next_kind {
	NX_RESUME,    /* resume it (its registers set first, if given) */
	NX_STOP,      /* it stays stopped, in state `state`: a scheduling point
	                 when it is the thread being run */
	NX_HOLD,      /* it stays stopped; no scheduling point */
	NX_EXITED,    /* the whole target is gone */
	NX_ERROR,
	NX_LET_GO,    /* resume it as it was, the agent's run token untouched:
	                 a system call stop that is no event (futex.c) */
};

struct next {
	enum next_kind kind;
	enum tthread_state state;     /* NX_STOP: its new state (TS_NEW: as is) */
	bool set_regs;                /* write regs first */
	bool only_if_changed;         /* ... unless they equal was */
	bool modules_changed;         /* the link map changed (dlopen): look
	                                 for new modules first */
	struct user_regs_struct regs, was;
};

static inline struct next nx(enum next_kind kind)
{
	struct next n;
	n.kind = kind;
	n.state = TS_NEW;
	n.set_regs = n.only_if_changed = n.modules_changed = false;
	return n;
}

static inline struct next nx_stop(enum tthread_state state)
{
	struct next n = nx(NX_STOP);
	n.state = state;
	return n;
}

struct ptu_status;
/* The decision for a stop s of a known thread t while run runs (the
 * handlers of loop.c; only act() carries it out), and for a task gone. */
struct next loop_decide(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			struct tthread *run);
struct next loop_on_gone(struct tracer *tr, pid_t pid, const struct ptu_status *s);
/* Is pid's wait status the feeder's end (tracer_set_stdin)?  Then it is
 * marked reaped, and the status is no stop of the program's. */
bool tracer_reaped_feeder(struct tracer *tr, pid_t pid, const struct ptu_status *s);

/* Where addr lies: module id and offset (tracer_site; inline for tr_emit,
 * which places every event). */
static inline void site_in(const struct modmap *mods, uint64_t addr, uint16_t *mod,
			   uint64_t *off)
{
	struct elfmod *m = modmap_find(mods, addr);
	if (m && m->id >= 0) {
		*mod = (uint16_t)m->id;
		*off = addr - m->bias;
	} else {
		*mod = AVT_MOD_NONE;
		*off = addr;
	}
}

/* Resume (or stop) with registers r. */
static inline struct next nx_regs(struct next n, const struct user_regs_struct *r)
{
	n.set_regs = true;
	n.regs = *r;
	return n;
}

/* Resume with registers r, written only if they differ from now (a stop
 * in the jump form resumes where it stands: no ptrace call). */
static inline struct next nx_regs_changed(const struct user_regs_struct *r,
					  const struct user_regs_struct *now)
{
	struct next n = nx_regs(nx(NX_RESUME), r);
	n.only_if_changed = true;
	n.was = *now;
	return n;
}

struct bpt;
/* t stopped where the scheduler decides (a request at b): it stays there,
 * remembering how to go on (now: its registers as it stopped, or NULL). */
struct next nx_request(struct tthread *t, const struct bpt *b, const struct user_regs_struct *r,
		       const struct user_regs_struct *now);

/* features.c: each feature of the tracer behind one interface. */
struct tracer_feature {
	const char *name;
	/* A new image at its entry point, t stopped there: plant (-1 and why
	 * when the session cannot go on). */
	int (*plant)(struct tracer *tr, struct tthread *t, char *why, size_t whylen);
	/* A module mapped later (dlopen); cur: the current thread, or NULL. */
	void (*plant_module)(struct tracer *tr, struct tthread *cur, const struct elfmod *m);
	/* A new image is starting: the old one's state means nothing. */
	void (*exec_reset)(struct tracer *tr);
	/* The session ends. */
	void (*release)(struct tracer *tr);
	/* t hit b, one of the breakpoints of a kind in `kinds` (a bit per
	 * BK_*): r is its registers with rip at b, now as they were at the
	 * stop.  Returns what happens to t next. */
	struct next (*on_hit)(struct tracer *tr, struct tthread *t, const struct bpt *b,
			      struct user_regs_struct *r, const struct user_regs_struct *now);
	unsigned kinds;
	/* A trap at none of the breakpoints (a debug register): true when it
	 * was this feature's, *n the decision. */
	bool (*on_stray_trap)(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			      const struct user_regs_struct *r, struct next *n);
	/* A system call the seccomp filter sent to the tracer, t stopped at
	 * its entry: true when it was this feature's, *n the decision. */
	bool (*on_seccomp)(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			   struct next *n);
};
int features_plant(struct tracer *tr, struct tthread *t);
void features_plant_module(struct tracer *tr, const struct elfmod *m);
void features_exec_reset(struct tracer *tr);
void features_release(struct tracer *tr);
/* The decision of the feature owning b's kind (NX_ERROR: none does). */
struct next features_on_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
			    struct user_regs_struct *r, const struct user_regs_struct *now);
/* A trap at no breakpoint: true when a feature took it (*n its decision). */
bool features_on_stray_trap(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			    const struct user_regs_struct *r, struct next *n);
/* A seccomp stop: the decision of the feature that took it, else let go
 * (the call runs). */
struct next features_on_seccomp(struct tracer *tr, struct tthread *t, struct ptu_status *s);

/* sanexec.c: an execve of an ASan build keeps the leak check off */
int sanexec_plant(struct tracer *tr, struct tthread *t, char *why, size_t len);
struct next sanexec_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
			struct user_regs_struct *r, const struct user_regs_struct *now);

/* futex.c: futex calls as events (--futex, tracer_opts.futex) */
enum futex_class {
	FC_NONE,     /* not a wait nor a wake (FUTEX_FD, another call) */
	FC_WAIT,     /* sleeps while the word holds the value given */
	FC_LOCK_PI,  /* a priority-inheritance lock: sleeps while the word has an owner */
	FC_WAKE,     /* wakes waiters (wake, wake_op, requeue, unlock_pi) */
};
/* The feature's entries (features.c): plant (libc's syscall()), a new
 * image, a seccomp stop. */
int futex_plant(struct tracer *tr, struct tthread *t, char *why, size_t len);
void futex_exec_reset(struct tracer *tr);
bool futex_on_seccomp(struct tracer *tr, struct tthread *t, struct ptu_status *s,
		      struct next *n);
/* In the target, before exec: futex and futex_waitv stop for the tracer,
 * nothing else does, nor the agent's own futex calls (0, or -1 with
 * errno). */
int futex_filter_install(void);
/* The class of system call nr with futex op (pure). */
enum futex_class futex_classify(long nr, unsigned op);
/* Commit t's futex request: the event, the wait or the waiters woken. */
void futex_commit(struct tracer *tr, struct tthread *t);
/* t stopped by an interrupt: still inside its futex wait (re-executed when
 * resumed), or out of it (the wait is over)? */
void futex_stopped(struct tracer *tr, struct tthread *t);
/* t is out of its futex wait (it reached another point): no waiter now. */
void futex_wait_over(struct tthread *t);

/* tracer.c */
struct tthread *thread_add(struct tracer *tr, pid_t tid, uint32_t parent);
struct tthread *tr_by_tid(struct tracer *tr, pid_t tid);
/* A signal the remote-syscall injector kept: t's next resume delivers it. */
void tr_keep_signal(struct tthread *t, int sig);
void tr_emit(struct tracer *tr, struct tthread *t, enum avt_kind kind, uint64_t obj,
	     uint64_t obj2, uint64_t site, uint16_t flags, uint16_t size);

int exec_begin(struct tracer *tr);
/* The dynamic linker changed the link map (dlopen): new modules. */
void tr_modules_changed(struct tracer *tr);
void timer_stop(void);
int exec_at_entry(struct tracer *tr, struct tthread *t, struct bpt *b,
		  struct user_regs_struct *r);

/* Captures t's call stack and hands it to the sink for event seq. */
void tr_capture_stack(struct tracer *tr, struct tthread *t, uint64_t seq);

/* probes.c */
void probes_plant(struct tracer *tr);
void probes_plant_module(struct tracer *tr, const struct elfmod *m);
void probes_request(struct tracer *tr, struct tthread *t, const struct probe *p,
		    const struct user_regs_struct *r);
int sdt_eval(struct tracer *tr, const struct sdt_arg *a, const struct user_regs_struct *r,
	     uint64_t *out);

/* stack.c */
int stack_capture(struct tracer *tr, struct tthread *t, uint64_t site, bool at_request,
		  struct avt_frame *out, int max);
void stack_frame_returned(struct tthread *t, uint64_t slot);
void stack_unswap(struct tracer *tr, struct tthread *t);
/* t entered an unwinder: put back every return address it had swapped
 * and forget those returns. */
void stack_unwinding(struct tracer *tr, struct tthread *t);

/* access.c */
void access_plant(struct tracer *tr, pid_t tid);
void access_plant_module(struct tracer *tr, pid_t tid, const struct elfmod *m);
/* t stopped at access site b with registers r: its request.  True when
 * the access is to t's own frames (no event: emit_access), a request no
 * schedule counts or waits at, committed at once. */
bool access_request(struct tracer *tr, struct tthread *t, const struct bpt *b,
		    const struct user_regs_struct *r);
void access_commit(struct tracer *tr, struct tthread *t);
void access_release(struct tracer *tr);
/* An access the agent committed in-process (through a stub): the event
 * the ptrace path would have emitted, and the site's bookkeeping. */
void access_agent_event(struct tracer *tr, struct tthread *t, const struct avt_event *ev);
/* t stopped at an access the agent could take (its stub, with hits left
 * in-process): the stub (to send it to, with the registers it stopped
 * with) and the event's kind; else 0. */
uint64_t access_park_at(struct tracer *tr, const struct tthread *t, uint16_t *kind);
/* A pc inside an access breakpoint's out-of-line copy -> the original
 * instruction's address (any other pc is returned as is). */
uint64_t access_orig_pc(const struct tracer *tr, uint64_t pc);

/* watch.c */
int watch_setup(struct tracer *tr, char *why, size_t whylen);
int watch_arm_thread(struct tracer *tr, pid_t tid);
struct ptu_status;
bool watch_trap(struct tracer *tr, struct tthread *t, struct ptu_status *s,
		const struct user_regs_struct *r);

/* unwinders.c: hook the target's unwinders (transparent stops) */
void unwinders_plant(struct tracer *tr);
void unwinders_plant_module(struct tracer *tr, const struct elfmod *m);

/* hooks.c */
int hooks_plant(struct tracer *tr, char *why, size_t whylen);
/* A thread stopped at hook h's entry: fill its request (false: internal
 * call, resume it transparently). */
bool hooks_request(struct tracer *tr, struct tthread *t, int h, struct user_regs_struct *r);
/* Commit t's request: update the model, emit, arrange the return frame. */
int hooks_commit(struct tracer *tr, struct tthread *t, struct user_regs_struct *r);
/* t stopped at the trampoline: handle the return of its innermost frame.
 * Returns 1 when that was a transparent (heap) call: not a scheduling
 * point, resume the thread at once. */
int hooks_return(struct tracer *tr, struct tthread *t, struct user_regs_struct *r);
/* t stopped at a heap hook's entry: record it and arrange for its return. */
void hooks_heap_entry(struct tracer *tr, struct tthread *t, int h, struct user_regs_struct *r);
/* Hooks whose entry is no scheduling point (heap calls, a spec's thread
 * create/join wrappers): hooks_heap_entry takes them. */
bool hooks_transparent(int h);
/* A module mapped later: the sync specs' hooks in it. */
void hooks_plant_module(struct tracer *tr, const struct elfmod *m);

/* sched.c: the record policy (tracer_pick_round_robin is in tracer.h) */
bool sched_is_sleep_call(int hook);
/* The length of the sleep t is about to make (stopped at a sleeping
 * call's entry): nanoseconds, or UINT64_MAX when it waits for files
 * (poll with descriptors, select with sets, epoll) or for ever. */
uint64_t sched_sleep_ns(struct tracer *tr, int hook, const struct user_regs_struct *r);
/* t ran through its time slice and was interrupted: its turn is used;
 * spinning when nothing changed since the last slice (sched.c). */
void sched_slice_over(struct tracer *tr, struct tthread *t);
/* Could a thread other than t run if t were set aside?  last_resorts:
 * count those that can only proceed as a last resort too. */
bool sched_others_could_run(struct tracer *tr, struct tthread *t, bool last_resorts);
/* hooks.c, for the agent's records: what the ptrace hooks do with the
 * same call (model update + event; the libc/ld.so caller filter) */
void hooks_acquire(struct tracer *tr, struct tthread *t, uint64_t obj, enum avt_kind kind,
		   uint64_t obj2, uint64_t site, uint16_t flags);
void hooks_release(struct tracer *tr, struct tthread *t, uint64_t obj, uint64_t site);
void hooks_signal(struct tracer *tr, struct tthread *t, uint64_t obj, enum avt_kind kind,
		  uint64_t site);
bool hooks_internal_caller(struct tracer *tr, struct tthread *t, uint64_t ret);
/* A call returning to ret from inside a spec's call: part of it, no event. */
bool hooks_nested_call(struct tracer *tr, struct tthread *t, uint64_t ret);
/* A heap call the agent made in-process (agent.c): op is OP_MALLOC ..
 * OP_FREE; rv the block returned (free: the block freed), size the size
 * asked for, old realloc's block.  The records the ptrace hooks make;
 * false if the call is not the program's (internal_caller). */
bool hooks_heap_call(struct tracer *tr, struct tthread *t, enum hop op, uint64_t rv,
		     uint64_t size, uint64_t old, uint64_t site);
/* pthread_create and pthread_join made in-process (the agent's records):
 * what their entry stops make of them.  A create keeps its site for the
 * clone's stop; a join emits its event.  ret: the call's return address,
 * rbp: the caller's frame pointer (a sanitizer interceptor's site). */
void hooks_create_call(struct tracer *tr, struct tthread *t, uint64_t ret, uint64_t rbp,
		       uint64_t arg, uint64_t sp);
void hooks_join_call(struct tracer *tr, struct tthread *t, uint64_t th, uint64_t ret, uint64_t rbp);
/* t entered a forced unwind in a condition wait: its request is now the
 * mutex's re-acquisition (false: no such wait). */
bool hooks_cancel_wait(struct tracer *tr, struct tthread *t);

/* agent.c: the in-process agent (docs/agent.md).  All no-ops without it. */
int agent_prepare(struct tracer *tr);     /* before fork: memfd, environment */
void agent_launched(struct tracer *tr);   /* after fork: the target has the memfd */
void agent_free(struct tracer *tr);
void agent_exec_reset(struct tracer *tr); /* a new image: fast path off */
void agent_publish(struct tracer *tr);    /* its entry stop, hooks planted: on */
void agent_publish_heap(struct tracer *tr); /* the heap's hooks planted late */
void agent_publish_glib(struct tracer *tr); /* GMutex's, after a module's spec hooks */
/* Turns the ring's committed records into events; final once the target
 * is dead (claimed, never committed slots are skipped). */
void agent_drain(struct tracer *tr, bool final);
/* The sink's drain_running: at a tick while the token's holder runs. */
void agent_drain_running(struct tracer *tr);
/* Is t inside a fast path (a preemption there would cut a hook in two)? */
bool agent_busy(struct tracer *tr, const struct tthread *t);
/* t is resumed: it holds the run token, with the in-process events the
 * sink allows (tracer_sink.allow); NULL: nobody may take a fast path. */
void agent_grant(struct tracer *tr, const struct tthread *t);
/* The target goes on without avtrace (replay --gdb): fast path off. */
void agent_detach(struct tracer *tr);
/* Hand-over scripts (docs/agent.md): the request t is stopped at, if the
 * agent could take it after a hand-over (AVT_EV_ACQUIRE, AVT_EV_RELEASE;
 * 0 not); is a script on; its threads (into parts, at most max; the
 * granted thread first); and its end: no token, every waiter woken to
 * take the ptrace path.  Returns the tid that held the token. */
uint16_t agent_park_kind(struct tracer *tr, const struct tthread *t);
bool agent_script_on(const struct tracer *tr);
struct tthread *agent_script_holder(struct tracer *tr);
size_t agent_script_parts(struct tracer *tr, struct tthread **parts, size_t max);
uint32_t agent_script_end(struct tracer *tr);
/* Access stubs (decode/stub.h): the agent's entry, or 0 when this image
 * has no fast path (then sites keep the jump form's ptrace stop). */
uint64_t agent_access_entry(struct tracer *tr);
/* t stopped with a fault in the agent's load of a read's value (an
 * address its instruction faults on next, agent/access.c): resumes it
 * past the load (no value) and says true; the signal is then not the
 * program's.  false for any other fault. */
bool agent_value_fault(struct tracer *tr, struct tthread *t);
/* A new entry in the agent's site table: its index, or -1 when full. */
int agent_access_site(struct tracer *tr, uint64_t pc, uint16_t kind, uint16_t size,
		      uint16_t flags, int32_t left, uint64_t rec_lids, bool store);
/* Hits site idx may still take in-process (all threads stopped). */
void agent_access_left(struct tracer *tr, int idx, int32_t left);
int32_t agent_access_left_now(struct tracer *tr, int idx);

/* model.c: the questions that read the threads (the table's own: model.h) */
/* Can t commit its request now?  1 yes, 0 no, 2 only as a last resort
 * (a timed lock of a held lock: it can only time out). */
int model_can_commit(struct tracer *tr, const struct tthread *t);
/* Would t's futex wait request (HK_FUTEX) sleep in the kernel now?  Only
 * one thread runs: the word cannot change between this look and the
 * call.  (A PI lock: while the word has an owner.) */
bool model_futex_sleeps(struct tracer *tr, const struct tthread *t);
/* Can a kernel-waiting thread be resumed with a chance of progress? 1 yes,
 * 0 no, 2 only as a last resort. */
int model_can_wake(struct tracer *tr, const struct tthread *t);
/* "Can this thread run?": 1 yes (ready, a request the model commits, a
 * waiter it wakes), 0 no (and running, new, dead), 2 as a last resort. */
int model_can_run(struct tracer *tr, const struct tthread *t);
/* o is about to lock what is free or self's alone: *lock, and how deep
 * self holds it (*held). */
bool model_lock_offered(struct tracer *tr, const struct tthread *o, uint32_t self,
			uint64_t *lock, uint32_t *held);
/* Every lock held now, for a script's hand-overs; not known when there
 * are too many, or an owner is gone (a robust mutex's may be taken). */
void model_view_locks(struct tracer *tr, struct tracer_view *v);

/* signals.c: may a caught asynchronous signal be delivered now?  (the
 * sink decides, tracer_sink.signal; false: it is dropped) */
bool sig_pass(struct tracer *tr, struct tthread *t, struct ptu_status *s, int sig);

/* fidelity.c: blocking calls return as without avtrace */
void fidelity_stopped(struct tthread *t);     /* an interrupt (or group) stop: inside a timed call? */
void fidelity_left(struct tthread *t);        /* it stopped outside any wait */
/* A caught signal is about to be delivered to t: a timed call it was held
 * in past its timeout returns its timeout first.  True if it was made to. */
bool fidelity_before_signal(struct tthread *t);
/* Is t stopped inside a call a signal interrupted (asleep in it: the
 * kernel restarts it when the signal is not delivered)? */
bool fidelity_in_interrupted_call(const struct tthread *t);

/* Is the module at path the user's code: the program named on the command
 * line, or any module elfmod_user_code counts under --access-scope?
 * (Inline: access.c and hooks.c ask, and tracer.c calls them.) */
static inline bool tracer_user_code(const struct tracer *tr, const char *path)
{
	return (tr->named && !strcmp(path, tr->named)) || elfmod_user_code(path, tr->opts.access_scope);
}

#endif
