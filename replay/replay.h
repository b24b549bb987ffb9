/*
 * Replay: re-run a recorded program under the tracer while enforcing a
 * schedule, one thread at a time, and judge the run.
 *
 * The scheduling policy is in policy.c; this file's types are what the CLI
 * and the tests drive: replay_open() checks everything before running
 * anything, replay_step() advances one scheduling decision, replay_finish()
 * classifies the outcome.
 *
 * Ownership: struct replay owns the loaded trace, schedule, metadata and
 * tracer; struct replay_result owns its strings and arrays
 * (replay_result_release()).
 */
#ifndef AVT_REPLAY_REPLAY_H
#define AVT_REPLAY_REPLAY_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/event.h"
#include "tracer/tracer.h"
#include "trace/schedule.h"
#include "trace/trace.h"

enum replay_outcome {
	RO_PASS,
	RO_BUG,
	RO_INFEASIBLE,
	RO_DEADLOCK,
	RO_ERROR,
};

const char *replay_outcome_name(enum replay_outcome o);

/* A priority policy instead of a schedule (explore/): it sees every event
 * and picks among the threads that can run at each decision. */
struct replay_picker {
	void *ctx;
	void (*event)(void *ctx, const struct avt_event *ev);
	/* index into lids[0..n) of the thread to run; n > 0 */
	size_t (*pick)(void *ctx, const uint32_t *lids, size_t n);
	/* thread lid, run last, spun through a time slice without an event */
	void (*yield)(void *ctx, uint32_t lid);
	/* optional: thread lid gives way to every other thread (it is about
	 * to end the process: exit(), return from main) */
	void (*drop)(void *ctx, uint32_t lid);
	/* optional: thread lid, just picked, may make these n events (n
	 * returned, at most max, into ev) with no pick (in-process, through the
	 * agent): every pick would give it them if they are those; 0 none
	 * (docs/agent.md).  v: the next pick as it stands (tracer_pick_view),
	 * or NULL: the picker may decide picks ahead with it, and must then
	 * apply each decision when the event it was made for comes. */
	size_t (*budget)(void *ctx, uint32_t lid, const struct tracer_view *v,
			 struct tracer_expect *ev, size_t max);
	/* optional, called before yield: the slice showed lid waiting on
	 * another thread, not computing (its registers did not change over
	 * it: a spin on memory) */
	void (*spun)(void *ctx, uint32_t lid);
};

/* In a run under a picker: thread `thread` ran on through `count`
 * scheduling points with no event, after the run's first `after` events,
 * before another thread was picked (a "yield" step of its schedule). */
struct replay_mark {
	size_t after;
	uint32_t thread, count;
};

#define REPLAY_MAX_TIME_BASE_S 60.0
#define REPLAY_MAX_TIME_FACTOR 10.0

struct replay_opts {
	const char *dir;        /* recording directory */
	unsigned schedule;      /* schedule number (schedules/NNNN.sched) */
	const char *sched_path; /* or an explicit schedule file (overrides) */
	double timeout_s;       /* a scheduled thread missing its event this long is stuck */
	int cpu;                /* -1: do not pin */
	bool keep_stdout;       /* let the target's stdout through (else captured) */
	const char *oracle;     /* shell command fed the run's stdout; failing = BUG */
	bool gdb;               /* stop and detach at the failure */
	bool capture_stderr;    /* keep the target's stderr (its tail in the
	                           result) instead of letting it through */
	bool no_agent;          /* a recording made with the in-process agent
	                           replays through it (docs/agent.md) unless
	                           this is set: then on ptrace alone */
	/* exploration: no schedule is read or followed and events are not
	 * compared with the recording; the picker decides.  A run longer than
	 * run_timeout_s (if > 0) is stopped as INFEASIBLE ("run timed out").
	 * A schedule's replay has that limit too: by default
	 * REPLAY_MAX_TIME_BASE_S + REPLAY_MAX_TIME_FACTOR x the recording's time. */
	const struct replay_picker *picker;
	double run_timeout_s;
};

/* A thread blocked in a reported deadlock. */
struct replay_wait {
	uint32_t thread;
	char what[16];          /* "lock", "join", "cond", ... */
	uint64_t obj;
	uint32_t holder;        /* UINT32_MAX if none */
	struct avt_event last;  /* its last event (for its site) */
	bool has_last;
};

struct replay_result {
	enum replay_outcome outcome;
	char reason[1024];      /* one line: why infeasible / what failed */
	size_t step;            /* schedule step reached (1-based), 0 if none */
	bool in_free;           /* reached the schedule's free part */
	/* divergence: the expected and the actual event */
	bool has_divergence;
	struct avt_event expected, actual;
	bool actual_missing;    /* stuck: no actual event */
	/* BUG */
	int exit_status;        /* shell style, -1 if not exited */
	int signal;             /* fatal signal, 0 if none */
	uint32_t fail_thread;
	/* what ran, in order */
	struct avt_event *ev;
	size_t nev;
	struct replay_mark *marks; /* under a picker: its event-less turns */
	size_t nmarks;
	struct avt_frame *bt;   /* failing thread's backtrace */
	uint32_t nbt;
	struct replay_wait *waits;
	size_t nwaits;
	pid_t gdb_pid;          /* --gdb: the stopped process, else 0 */
	double seconds;
	uint64_t agent_events;  /* events that came through the in-process agent */
	uint64_t stops;         /* waitpid reports of the program's tasks (tracer_stats) */
	unsigned stuck_waits;   /* turns ended at once: asleep where only a stopped thread could wake it */
	uint64_t agent_scripts; /* hand-over scripts (explore through the agent) */
	uint64_t agent_handovers; /* run tokens passed in-process in them */
	uint64_t agent_extras;  /* accesses the recording does not have, in-process */
	/* capture_stderr: the end of what the program wrote to stderr, at
	 * most REPLAY_STDERR_LINES lines and REPLAY_STDERR_BYTES bytes (control
	 * bytes but tab and newline as '?'), NUL-terminated; NULL if nothing.
	 * Owned by the result. */
	char *stderr_tail;
	bool stderr_cut;        /* the program wrote more than stderr_tail */
};

#define REPLAY_STDERR_LINES 40
#define REPLAY_STDERR_BYTES 8192

void replay_result_release(struct replay_result *r);

struct replay;

/* Loads DIR's metadata, trace and schedule and checks them (schedule
 * exists and parses, executable unchanged).  NULL after one clear error;
 * nothing has been run then. */
struct replay *replay_open(const struct replay_opts *opts);
/* capture_stderr: copies all the program wrote to stderr to f (after
 * replay_finish; what no report showed goes where it would have gone). */
void replay_stderr_copy(struct replay *rp, FILE *f);
/* Starts the program. -1 after an error. */
int replay_launch(struct replay *rp);
/* One scheduling decision; false when the run is over. */
bool replay_step(struct replay *rp);
/* Classifies the run (kills what is left of it) into res. */
void replay_finish(struct replay *rp, struct replay_result *res);
void replay_free(struct replay *rp);

const struct trace *replay_trace(const struct replay *rp);
const struct schedule *replay_schedule(const struct replay *rp);

/* Writes what ran as a trace file (for avtrace dump) and the result as
 * JSON; either path may be NULL. */
int replay_write(const struct replay *rp, const struct replay_result *res,
		 const char *trace_path, const char *json_path, const char *json_text_out);

#endif
