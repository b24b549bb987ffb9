/*
 * The tracer: runs a target under ptrace, serialized (exactly one thread
 * runs at a time), and turns its pthread calls into events.
 *
 * How a session advances (docs/INTERNALS.md has the long version):
 *
 *   - Every thread is stopped except the one the sink picked.
 *   - A thread stops at a *request*: the entry of a hooked function, a probe,
 *     its own exit.  The request is what the thread is about to do
 *     (acquire m, signal c, ...).  The lock model (model.c) says whether it
 *     could proceed now.
 *   - tracer_step() asks the sink to pick one runnable thread, *commits* its
 *     request (updates the model, emits the event through the sink) and
 *     runs it to its next request.  Events whose outcome is known only when
 *     the call returns (trylock, cond wait wake-up, sem wait, barrier) are
 *     emitted at the return trampoline, inside the same step.
 *   - A thread that runs too long without a request (a spin loop) is
 *     preempted after a time slice; one that sleeps in the kernel on
 *     something the model does not know (glibc-internal locks, I/O) is
 *     interrupted and set aside, so a serialized run never hangs on it.
 *
 * The sink is either the recorder (appends to a trace file, picks "the
 * current thread until it blocks") or the replay scheduler (picks what the
 * schedule says and checks each event against the expected one).
 *
 * Ownership: struct tracer owns its threads, breakpoint table and module
 * map; the sink and the argv stay the caller's.
 */
#ifndef AVT_TRACER_TRACER_H
#define AVT_TRACER_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/event.h"
#include "trace/trace.h"
#include "tracer/view.h"

struct tracer;
struct tthread;

enum tthread_state {
	TS_NEW,      /* known tid, first stop not seen yet */
	TS_READY,    /* stopped, nothing pending: may run */
	TS_REQ,      /* stopped at a request; the model decides */
	TS_KWAIT,    /* asleep in the kernel (cond, barrier, sem, unknown), held stopped */
	TS_RUNNING,
	TS_DEAD,
};

/* What a waiting thread waits for. */
enum twait {
	TW_NONE,
	TW_COND,     /* pthread_cond_wait: needs a signal, then the mutex */
	TW_BARRIER,
	TW_SEM,
	TW_JOIN,
	TW_TIMED,    /* a timed wait: may always proceed, by timing out */
	TW_UNKNOWN,  /* blocked in the kernel on something unmodelled */
	TW_SLEEP,    /* in a sleeping call (nanosleep, poll, ...): proceeds by itself */
	TW_FUTEX,    /* a futex wait of the program's own (--futex): needs a
	                wake on wait_obj */
};

/* A pending request (what the thread does when next committed). */
struct treq {
	int hook;        /* index into the hook table, or a HK_* pseudo hook */
	enum avt_kind kind; /* the event it will emit at commit (AVT_EV_NONE: none) */
	uint64_t obj, obj2;
	uint64_t site;   /* absolute return address (or pc for probes) */
	uint16_t size;
	bool never;      /* can never proceed (relocking a normal mutex one holds) */
	bool offered;    /* a sink was told this request gives way (sinks' use) */
};

/* The public view of a thread, for sinks and policies. */
struct tthread {
	pid_t tid;
	uint32_t lid;          /* logical id */
	uint32_t parent;
	uint32_t nth_child;
	uint32_t nchildren;
	enum tthread_state state;
	struct treq req;       /* valid in TS_REQ */
	enum twait wait;       /* valid in TS_KWAIT */
	uint64_t wait_obj;
	bool woken;            /* a signal/post/barrier release reached it */
	bool started;          /* its start event was emitted */
	bool preempted;        /* its turn is used: it ran through a time slice, or
	                          it reached a sleeping call (sched.c) */
	bool sliced;           /* its last run was interrupted by the slice timer */
	bool spinning;         /* preempted twice in a row at the same registers
	                          (rip aside) with no event between: it waits
	                          for another thread, it does not compute */
	uint32_t nevents;      /* events emitted so far (next tindex) */
	uint64_t fs_base;      /* its pthread_t */
	uint64_t idle_ns;      /* time run since its last event (stuck detection) */
	uint64_t wait_seq;     /* order of entering a cond wait (fairness) */
	uint64_t born_seq;     /* events in the session before it was created */
	struct tracer_priv_thread *priv;
};

/* Why a step ended the session or could not go on. */
enum tstep {
	TSTEP_CONTINUE,
	TSTEP_EXITED,    /* the target exited; see tracer_exit_status() */
	TSTEP_DEADLOCK,  /* every live thread is blocked in the model */
	TSTEP_STOPPED,   /* the sink asked to stop */
	TSTEP_ERROR,
};

struct tracer_sink {
	void *ctx;
	/* An event took effect.  Return -1 to stop the session (divergence). */
	int (*event)(void *ctx, struct tracer *tr, const struct avt_event *ev);
	/* Choose which thread runs next: index into run[0..nrun), or -1 to stop.
	 * run[] are threads that can proceed now; last[] are threads that can
	 * only proceed by timing out or on a guess (unmodelled kernel waits),
	 * worth running only when run[] is empty.  *use_last set to pick from last. */
	int (*pick)(void *ctx, struct tracer *tr, struct tthread **run, size_t nrun,
		    struct tthread **last, size_t nlast, bool *use_last);
	/* Optional: t is about to run; how many events may it do in-process
	 * (the agent's fast path) before the sink decides again?  0: none,
	 * every event is a ptrace stop; UINT64_MAX: no limit.  NULL: no
	 * limit (record's run-until-block).  The count may run short (a call
	 * that turns out to be no event still spends one), never over. */
	uint64_t (*allow)(void *ctx, struct tracer *tr, const struct tthread *t);
	/* Optional: a thread record / module record / note to keep. */
	void (*thread)(void *ctx, struct tracer *tr, const struct avt_thread_rec *th);
	void (*module)(void *ctx, struct tracer *tr, const struct avt_module_rec *m,
		       const char *path);
	void (*note)(void *ctx, struct tracer *tr, const char *text);
	/* Optional: a heap allocation or free by the program. */
	void (*alloc)(void *ctx, struct tracer *tr, const struct avt_alloc_rec *a);
	/* Optional: an access breakpoint was removed (record only). */
	void (*disarm)(void *ctx, struct tracer *tr, const struct avt_disarm_rec *d);
	/* Optional: an asynchronous signal (no fault) that t's process has a
	 * handler for is about to be delivered to t (tracer/signals.c);
	 * raised: tracer_raise_signal's.  true: deliver it now; false: drop
	 * it (a replay raises it again where the recording has it). */
	bool (*signal)(void *ctx, struct tracer *tr, const struct tthread *t, int sig, bool raised);
	/* Optional: the call stack of the thread at event seq. */
	void (*stack)(void *ctx, struct tracer *tr, uint64_t seq, const struct avt_frame *f,
		      uint32_t depth);
	/* The agent's records may become events while the thread that made
	 * them still runs (at the tracer's tick), not only at its next stop:
	 * for a sink whose events change no decision before that stop (record,
	 * whose budget is unlimited).  A replay or explore sink checks each
	 * event against a schedule, and its verdict must come at a stop. */
	bool drain_running;
	/* The sink's pick at a sched_yield of the running thread, when every
	 * other thread waits for a lock it holds, is that thread again (record's
	 * round robin: nothing else can run): the agent may take such a yield
	 * in-process, with no stop.  A replay counts a yield as a scheduling
	 * point, explore may draw there: they keep the stop. */
	bool keeps_yielder;
};

struct tracer_opts {
	char *const *argv;     /* program and arguments (argv[0] resolved via PATH) */
	const char *cwd;       /* NULL: inherit */
	char *const *envp;     /* NULL: inherit */
	int cpu;               /* pin supervisor + target to this CPU; -1: do not pin */
	unsigned slice_ms;     /* preemption slice for a thread with no event (default 10) */
	bool quiet_target;     /* redirect the target's stdout/stderr to /dev/null */
	int stdout_fd;         /* >= 0: the target's stdout goes there */
	int stderr_fd;         /* > 0: the target's stderr goes there */
	int stdin_fd;          /* > 0: the target's stdin comes from there */
	const char *stdin_path; /* non-NULL: the target's stdin is this file */
	bool no_heap;          /* do not hook malloc/calloc/realloc/free */
	const char *const *watch; /* --watch: variables to watch (at most 4) */
	size_t nwatch;
	bool own_session;      /* setsid() the target: it must outlive avtrace
	                          stopped (replay --gdb) */
	unsigned stack_depth;  /* > 0: record each event's call stack (stack.c) */
	bool sync_sleeps;      /* a pure sleep of at most 1 s runs to its end,
	                          the other threads held (replay, explore: a
	                          sleep then ends at the same point of the
	                          schedule on every run; sched.c) */
	bool access;           /* access breakpoints on the program's own code
	                          (access.c), unless it is annotated or --watch */
	unsigned access_budget; /* private hits before a site is removed (256) */
	const char *access_scope; /* also these modules ("libfoo,libbar" by file
	                          name, or "all"), in the system directories too */
	const struct avt_disarm_rec *disarms; /* replay: the recording's removals,
	                          applied instead of deciding (NULL: record) */
	size_t ndisarms;
	/* replay: per access site, the threads the recording saw access
	 * there (a bit per logical id below 64; bit 63 also for any above);
	 * sites not listed: none */
	const struct tracer_site_lids {
		uint16_t site_mod;
		uint64_t site_off;
		uint64_t lids;
	} *site_lids;          /* sorted by tracer_site_lids_cmp */
	size_t nsite_lids;
	const char *agent_lib; /* non-NULL: preload this in-process agent and
	                          take its events (agent.c, docs/agent.md) */
	const char *sync_spec; /* the text of the user's sync spec (--sync-spec,
	                          docs/sync-spec.md), or NULL */
	const char *sync_spec_name; /* its file's name, for messages */
	/* a process forked without exec (tree.c): the launched program's
	 * fork_path[0]-th fork (1-based, counted since its last exec), that
	 * child's fork_path[1]-th, ...; the last one is recorded, the others
	 * run free once they forked the next (none: the launched program) */
	const unsigned *fork_path;
	size_t nfork_path;
	bool futex;            /* the program's own futex calls are events
	                          (futex.c, --futex): a seccomp filter in
	                          every process of the tree */
};

/* Reads and checks the sync spec at path (syncspec.c): 0 and its text in
 * *text (malloc'd), or -1 with "FILE:LINE: what is wrong" (or why it
 * cannot be read) in err. */
int tracer_sync_spec_load(const char *path, char **text, char *err, size_t errlen);
/* The same check of a spec's text (a recording's, named name). */
int tracer_sync_spec_check(const char *text, const char *name, char *err, size_t errlen);

/* CPUs (cpu.c).  The k-th CPU (modulo their number) of those this process
 * was allowed before it first pinned itself, for the k-th of several
 * parallel runs; -1 if unknown. */
int tracer_nth_cpu(unsigned k);
/* The CPU a lone run pins to: the one this process runs on now, if allowed. */
int tracer_default_cpu(void);
/* Pins this process (and what it forks later) to cpu; -1: no-op. */
void tracer_pin_cpu(int cpu);

struct tracer *tracer_new(const struct tracer_opts *opts, const struct tracer_sink *sink);
void tracer_free(struct tracer *tr);

/* The record policy (also replay's after "free"): keep the current thread
 * while it can run and its slice lasts, else the next one in logical-id
 * order; threads that can only proceed as a last resort get a turn when
 * nothing else can run, or when everything that can has just spun through
 * a slice without an event (it may be waiting for one of them: glibc's
 * condition variables hand off internal state between threads). */
/* Sends sig to t (tgkill): delivered at its next resume, before its
 * pending request if it has one (the request is made again after the
 * handler), and offered to the sink as raised (tracer_sink.signal).  -1
 * with errno on failure. */
int tracer_raise_signal(struct tracer *tr, struct tthread *t, int sig);
int tracer_pick_round_robin(struct tracer *tr, struct tthread **run, size_t nrun,
			    struct tthread **last, size_t nlast, bool *use_last);

/* Is t stopped at a call that ends the process (exit(), _exit(), return
 * from main)?  Other threads may run before it commits. */
bool tracer_at_exit(const struct tthread *t);
/* Is t stopped at a sleeping call (nanosleep, poll, sched_yield, ...),
 * offering the CPU to the others? */
bool tracer_at_sleep(const struct tthread *t);

/* Resolves and checks the program (exists, executable, ELF, not setuid)
 * without running it; tracer_launch does it too.  -1 after one error. */
int tracer_check(struct tracer *tr);
const char *tracer_exe(const struct tracer *tr);
/* The program named on the command line (its real path), the user's code
 * wherever it is installed; NULL when it is a "#!" script. */
const char *tracer_program(const struct tracer *tr);
/* Logical id of the thread run last (UINT32_MAX before the first step). */
uint32_t tracer_current(const struct tracer *tr);

/* Checks the program (exists, executable, ELF, not setuid), forks it under
 * ptrace with ASLR off, stops it at its entry point and plants the hooks.
 * Returns 0, or -1 after printing one clear error. */
int tracer_launch(struct tracer *tr);

/* One scheduling decision: commit + run one thread to its next request. */
enum tstep tracer_step(struct tracer *tr);

/* Asks every tracer of this process to stop at its next step (returns
 * TSTEP_STOPPED), for SIGINT/SIGTERM: async-signal-safe.  The caller then
 * finishes as usual, which kills the target and keeps what was recorded. */
void tracer_interrupt_all(int sig);
/* The signal that interrupted, 0 if none. */
int tracer_interrupted(void);

/* Before launch: the target's stdin is fd (> 0), closed by the caller
 * after tracer_launch().  feeder (0: none) is the caller's own child that
 * writes it (record's stdin tee): the tracer waits for any child, so it
 * reaps the feeder when it ends, as no stop of the program's (no drain of
 * the agent's ring while a thread runs), and says so: tracer_feeder_gone. */
void tracer_set_stdin(struct tracer *tr, int fd, pid_t feeder);
/* Has the tracer reaped the feeder?  (Then its pid is no longer the
 * caller's to kill or wait for.) */
bool tracer_feeder_gone(const struct tracer *tr);

/* Kills the target (if alive) and reaps it. */
void tracer_kill(struct tracer *tr);
/* Leaves the target stopped and detached (for gdb): returns its pid. */
pid_t tracer_detach_stopped(struct tracer *tr);

/* After TSTEP_EXITED: shell-style status (code, or 128+signal). */
int tracer_exit_status(const struct tracer *tr);
int tracer_exit_signal(const struct tracer *tr);
pid_t tracer_pid(const struct tracer *tr);

struct tthread *tracer_thread(struct tracer *tr, uint32_t lid);
size_t tracer_nthreads(const struct tracer *tr);
/* Why t cannot proceed now (for reports): fills holder/obj, returns a word
 * like "lock", "join", "cond", or NULL when it can.  For "join", obj is the
 * logical id of the thread waited for. */
const char *tracer_blocked_on(struct tracer *tr, const struct tthread *t,
			      uint64_t *obj, uint32_t *holder);
/* Does t, held stopped in a kernel wait, go on with no other thread run:
 * it is inside a call with a timeout, or its call had ended when it
 * stopped? (fidelity.c) */
bool tracer_wait_ends_alone(const struct tthread *t);

/* Facts for summaries. */
struct tracer_stats {
	uint64_t events;
	unsigned threads;
	unsigned forks_untraced;
	unsigned execs;
	unsigned preemptions;
	unsigned kernel_waits;
	unsigned stuck_waits;  /* turns ended at once: asleep on a private untimed futex */
	uint64_t futex_stops;  /* --futex: the recorded process's futex calls
	                          stopped by the filter (events or let go) */
	unsigned mutexes, condvars;
	uint64_t heap_blocks;  /* blocks the heap's hooks saw allocated */
	uint64_t agent_events; /* events that came through the in-process agent */
	uint64_t agent_heap;   /* the program's heap calls the agent recorded in-process */
	uint64_t agent_parked; /* threads sent to wait their turn in the agent */
	uint64_t agent_handovers; /* run tokens passed between threads in-process */
	uint64_t agent_scripts;  /* hand-over scripts begun */
	uint64_t agent_extras;   /* accesses the recording does not have, made
	                            in-process within a budget */
	uint64_t agent_drained_running; /* records taken while their thread
	                            ran on (tracer_sink.drain_running) */
	uint64_t agent_yields;   /* sched_yield calls taken in-process
	                            (tracer_sink.keeps_yielder) */
	uint64_t stops;          /* waitpid reports of the recorded process's
	                            tasks: what a thread costs (issue 30) */
};
const struct tracer_stats *tracer_stats(const struct tracer *tr);

/* The process tree (tree.c): the launched program (index 0) and every
 * process it started, directly or not. */
struct tracer_proc {
	pid_t pid;
	int parent;            /* its index; -1 for the root */
	unsigned ordinal;      /* its parent's how-many-th fork since the
	                          parent's last exec (1-based; 0: the root) */
	bool vfork;            /* made by vfork (posix_spawn) */
	bool execd;            /* it exec'd: exe, argv, env, cwd are its own */
	char *exe, *cwd;       /* at its last exec (NULL: none) */
	char **argv, **env;    /* NULL-terminated (NULL: none); env without
	                          what avtrace added (the agent's) */
	unsigned threads;      /* alive now (light processes) */
	unsigned max_threads;  /* threads it had since its last exec, the
	                          first included (not "at once": that
	                          depends on timing) */
	unsigned forks;        /* forks since its last exec */
	bool alive;
	int exit_status;       /* shell style, once it is gone */
};
size_t tracer_nprocs(const struct tracer *tr);
const struct tracer_proc *tracer_proc(const struct tracer *tr, size_t i);
/* The index of the process recorded (the fork path's end, else 0). */
size_t tracer_focus(const struct tracer *tr);
/* The tree, taken from the tracer (it keeps none): *n processes, the
 * recorded one at *focus.  Free with tracer_procs_free. */
struct tracer_proc *tracer_take_tree(struct tracer *tr, size_t *n, size_t *focus);
void tracer_procs_free(struct tracer_proc *p, size_t n);

/* The variables being watched (--watch). */
size_t tracer_watch_count(const struct tracer *tr);
const char *tracer_watch_name(const struct tracer *tr, size_t i);

/* Access breakpoints. */
struct tracer_access_stats {
	unsigned sites;       /* instructions instrumented */
	unsigned skipped;     /* could not run out of line (or no scratch) */
	unsigned undecodable; /* bytes of code capstone could not decode */
	unsigned disarmed;    /* sites removed after their private budget */
	unsigned stubs;       /* sites the agent takes in-process (decode/stub.h) */
	unsigned covers;      /* short sites displaced with the instructions after them */
	uint64_t events;      /* access events emitted */
	uint64_t own_stack;   /* hits on the thread's own frames: no event */
	unsigned stack_escapes; /* stores that let a thread's stack escape (further down) */
};
bool tracer_access_on(const struct tracer *tr);
const struct tracer_access_stats *tracer_access_stats(const struct tracer *tr);

/* The agent library to preload: $AVTRACE_AGENT_LIB, else
 * libavtrace-agent.so next to this executable or in ../lib/avtrace/;
 * NULL if none is found. */
const char *tracer_agent_lib_default(void);
/* The environment the target gets (NULL: avtrace's own, inherited). */
char *const *tracer_envp(const struct tracer *tr);

/* Module id and offset of an absolute address (AVT_MOD_NONE if unknown). */
void tracer_site(struct tracer *tr, uint64_t addr, uint16_t *mod, uint64_t *off);

/* Makes the results of static decoding (the functions the sync hooks
 * displace) shared with every process this one forks from now on: an
 * exploration's runs then decode each function once between them.  0, or
 * -1 (no shared memory: each run decodes for itself). */
int tracer_share_decoding(void);

/* The next pick as it stands while thread self runs on alone (view.h
 * says what it holds); n, 0 when nothing can be said.  For the agent's
 * decisions ahead (explore). */
size_t tracer_pick_view(struct tracer *tr, const struct tthread *self, struct tracer_view *v);

/* The order of tracer_opts.site_lids (module, then offset). */
int tracer_site_lids_cmp(const void *a, const void *b);

/* An event a budget of the agent expects (a recorded one). */
struct tracer_expect {
	uint64_t obj;
	uint64_t site_off;
	uint16_t site_mod;  /* trace module id, or AVT_MOD_NONE */
	uint16_t kind;
	uint32_t lid;       /* the thread that makes it */
	uint16_t flags;     /* TRACER_EXPECT_* */
	uint16_t reads;     /* reads its thread may make after it before the
	                       picker could take it for a spinner */
};
/* An access the recording does not have may come before it, made with no
 * decision (a pick there would give its thread that access). */
#define TRACER_EXPECT_EXTRAS 0x1
/* From a sink's allow(): the budget being granted must take exactly these
 * events in-process, in this order; any other event takes the ptrace
 * path.  Events of threads other than the one granted make a hand-over
 * script: each such thread must be stopped at a request the view offered
 * as park, the same as its first event here, or the list is cut before
 * that event; those threads then wait their turn in the agent
 * (docs/agent.md).  Returns how many were accepted (the budget must not
 * exceed it); 0 without the agent. */
size_t tracer_agent_expect(struct tracer *tr, const struct tracer_expect *ev, size_t n);

#endif
