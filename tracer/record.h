/*
 * Recording: the tracer with the recorder sink.  The recorder appends every
 * event to DIR/trace.avt as it takes effect and picks threads with the
 * policy "keep running the current thread until it blocks or its slice
 * ends, then the next one in logical-id order", so the recorded order is
 * itself a valid schedule (written as DIR/schedules/0000.sched).
 *
 * Ownership: struct recorder owns its tracer and writer; opts strings stay
 * the caller's.
 */
#ifndef AVT_TRACER_RECORD_H
#define AVT_TRACER_RECORD_H

#include <stdbool.h>

#include "tracer.h"

struct record_opts {
	const char *dir;      /* output directory */
	bool force;           /* replace an existing avtrace output directory */
	char *const *argv;
	int cpu;              /* -1: do not pin */
	unsigned slice_ms;
	bool quiet_target;
	bool no_heap;         /* do not record heap allocations */
	const char *const *watch; /* --watch variables, at most 4 */
	size_t nwatch;
	bool no_auto_watch;   /* no access breakpoints (--no-access; the old
	                         --no-auto-watch is the same switch) */
	unsigned access_budget; /* private hits before a site is removed (0: 256) */
	const char *access_scope; /* --access-scope: system modules instrumented too */
	bool keep_stdin;      /* copy what PROG reads on stdin to DIR/stdin, for
	                         replay and explore to give it again */
	unsigned stack_depth; /* > 0: each event's call stack (--stacks) */
	const char *agent_lib; /* --agent: preload this in-process agent */
	const char *sync_spec; /* --sync-spec: the spec's text, or NULL */
	const char *sync_spec_name; /* its file */
	bool futex;           /* --futex: futex calls as events (tracer_opts.futex) */
	/* a process of another recording's tree (cli/tree.c): */
	const char *cwd;      /* where it ran (NULL: here) */
	char *const *envp;    /* its environment (NULL: ours) */
	const unsigned *fork_path; /* tracer_opts.fork_path */
	size_t nfork_path;
	bool tree;            /* cli: also record the tree's other
	                         multithreaded processes (cli/tree.c) */
	const char *origin;   /* meta "process": a JSON object text saying
	                         which process of which tree it is, or NULL */
};

struct record_result {
	int exit_status;      /* shell style: code or 128+signal; -1 on deadlock */
	bool deadlock;
	char deadlock_desc[512]; /* "T0 waits for mutex 0x... held by T1; ..." */
	/* the same, one entry per blocked thread (at most 16) */
	struct record_blocked {
		uint32_t lid, holder; /* holder UINT32_MAX: none known */
		uint64_t obj;
		char what[24];        /* "mutex", "barrier", ... */
	} blocked[16];
	size_t nblocked;
	double seconds;
	struct tracer_stats stats;
	bool access_on;
	struct tracer_access_stats access;
	/* the process tree (tracer_proc; record_tree_free) */
	struct tracer_proc *procs;
	size_t nprocs, focus;
};
/* Frees res's tree. */
void record_tree_free(struct record_result *res);

struct recorder;

/* Checks the program and the output directory, creates the directory and
 * launches the program.  NULL after one clear error (nothing left behind). */
struct recorder *record_start(const struct record_opts *opts);
/* One scheduling step (see tracer_step). */
enum tstep record_step(struct recorder *rec);
/* Ends the recording (kills the target if still alive), writes meta.json
 * and schedules/0000.sched.  Returns 0, or -1 if the output is incomplete. */
int record_finish(struct recorder *rec, enum tstep last, struct record_result *res);
void record_free(struct recorder *rec);
struct tracer *record_tracer(struct recorder *rec);

/* Shared by record and replay: the directory helpers. */
int outdir_prepare(const char *dir, bool force);
/* "1,204" */
const char *fmt_thousands(unsigned long long v, char *buf, size_t len);

#endif
