/* Private state of a replay (replay.c, policy.c, report.c). */
#ifndef AVT_REPLAY_INT_H
#define AVT_REPLAY_INT_H

#include "replay.h"
#include "yields.h"
#include "tracer/tracer.h"

struct replay {
	struct replay_opts opts;
	char sched_path[4200];
	struct trace *trace;          /* the recording */
	struct schedule *sched;
	char **argv, **envp;          /* from meta.json */
	char **watch;                 /* --watch of the recording */
	size_t nwatch;
	bool no_heap;
	bool futex;             /* the recording's --futex */
	bool agent;                   /* recorded with the in-process agent */
	bool access;                  /* the recording had access breakpoints */
	unsigned access_budget;
	char *access_scope;     /* the recording's --access-scope (owned) */
	unsigned fork_path[16]; /* a forked process's: its path from the
	                           recorded command (tracer_opts.fork_path) */
	size_t nfork_path;
	char *sync_spec;        /* the recording's sync spec (owned), or NULL */
	char *sync_spec_name;   /* its file's name (owned) */
	char *cwd, *exe;
	struct tracer *tr;
	struct tracer_site_lids *site_lids; /* per access site, its recorded threads */
	size_t nsite_lids;

	/* expected events: recorded events of each thread, in order */
	const struct avt_event ***texp;
	size_t *ntexp;
	size_t nthreads;

	/* progress through the schedule */
	size_t step;                  /* index of the current step */
	uint32_t left;                /* events left in the current step */
	bool in_free;
	bool advancing;               /* running another thread to its next request */

	/* what happened */
	bool stop;                    /* the policy decided the run is over */
	enum replay_outcome outcome;  /* valid when stop */
	char reason[1024];
	bool has_div;
	bool actual_missing;
	struct avt_event expected, actual;
	struct avt_event *ev;         /* what ran */
	size_t nev, evcap;
	struct replay_mark *marks;    /* under a picker: event-less turns */
	size_t nmarks, markcap;
	struct yields yl;             /* under a picker: the thread picked last,
	                                 its picks that made no event (yields.h) */
	bool pk_chose;                /* the picker chose it (not a last resort) */
	struct avt_module_rec *mods;  /* modules of the run (for its trace) */
	char **modpaths;
	size_t nmods;
	struct avt_frame *bt;
	uint32_t nbt;
	struct avt_alloc_rec *allocs; /* heap records of the run (for its trace) */
	size_t nallocs;
	struct avt_signal_rec *sigs;  /* signals the run delivered (for its trace) */
	size_t nsigs;
	unsigned char *sig_state;     /* per recorded delivery (trace->signals):
	                                 0 due later, 1 raised, 2 delivered */
	size_t sig_lo;                /* recorded deliveries before it: delivered */
	int fatal_sig;
	uint32_t fatal_thread;
	enum tstep last_step;
	int stdout_fd;                /* capture of the target's stdout, or -1 */
	char stdout_path[64];
	int stderr_fd;                /* capture of the target's stderr, or -1 */
	double t0;
	double recorded_s;            /* how long the recording took (meta.json) */
	unsigned asleep_turns;        /* turns given while the scheduled thread sleeps */
	size_t asleep_step;           /* 1 + the step they count in */
	struct sym *sym;              /* names for messages (recorded modules) */
};

/* "counter_lock" or "0x..." for messages; "T3" for a join. */
const char *rp_obj_name(struct replay *rp, const char *what, uint64_t obj, char *buf, size_t len);

/* policy.c */
uint64_t policy_allow(void *ctx, struct tracer *tr, const struct tthread *t);
int policy_pick(void *ctx, struct tracer *tr, struct tthread **run, size_t nrun,
		struct tthread **last, size_t nlast, bool *use_last);
int policy_event(void *ctx, struct tracer *tr, const struct avt_event *ev);
bool policy_signal(void *ctx, struct tracer *tr, const struct tthread *t, int sig, bool raised);
/* Stops the run as INFEASIBLE with a reason. */
void policy_infeasible(struct replay *rp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
