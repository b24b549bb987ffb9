/*
 * Exploration: run a recorded program many times under the replay
 * scheduler with a priority policy (explore/pct.h: PCT, PCT with variable
 * bounding, thread bounding) instead of a fixed schedule, and keep the
 * runs that fail.  docs/explore.md has the algorithms and the layout.
 *
 *     struct explore_opts o = { .dir = "avtrace-out", .runs = 200, .jobs = 2, ... };
 *     struct explore_result r;
 *     if (explore_run(&o, &r) == 0) { ... r.bugs ...; explore_result_release(&r); }
 *
 * Every run is its own process (forked, pinned to one CPU, -j at a time);
 * run i's random choices depend only on (seed, i), so a run is the same
 * whatever -j is.  Each run's actual order is written as a schedule,
 * DIR/explore/runs/NNNN.sched (NNNN = run number, from 0001).  A failing
 * run also becomes a self-contained recording, DIR/explore/runs/NNNN/
 * (meta.json, trace.avt of what ran, schedules/0000.sched its order), so
 * that `avtrace replay -d DIR/explore/runs/NNNN --schedule 0` re-enacts it
 * event by event.  Failures are deduplicated by their kind and the failing
 * thread's backtrace; only the first run of each keeps its directory.
 *
 * Ownership: struct explore_result owns its bugs array; the options'
 * strings stay the caller's.
 */
#ifndef AVT_EXPLORE_EXPLORE_H
#define AVT_EXPLORE_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "explore/pct.h"
#include "trace/trace.h"

/* Time slices (10 ms each) a thread may run without an event before the
 * priority policy takes it to be spinning and drops it (xp_run_yield):
 * long enough for a stretch of computation between events (which must
 * keep its priority: the order of threads is what exploration varies),
 * short enough that a spin-wait on a lower-priority thread costs 0.1 s. */
#define EXPLORE_SPIN_SLICES 10u

/* The policy of `avtrace explore` and `avtrace test` unless told
 * otherwise: the portfolio (SURW, drawing how many objects per run, in
 * every other run; POS and PCT between): SURW alone is the best on most
 * shapes measured by bench/explore, but never finds one a priority
 * scheduler finds in a few runs (docs/explore.md, "Portfolio"). */
#define EXPLORE_DEFAULT_CFG                                                  \
	{ .algo = XP_PORTFOLIO, .depth = 3, .nvars = XP_VARS_RANDOM, .contexts = 1, \
	  .yield_limit = EXPLORE_SPIN_SLICES }

struct explore_progress {
	unsigned done, runs;    /* runs finished, runs in all (at most) */
	unsigned failing;       /* runs that failed */
	unsigned bugs;          /* distinct failures */
	double seconds;         /* since the first run started */
	double time_s;          /* the time budget, or 0 */
};

/* The runs bound of an exploration that its time budget ends. */
#define EXPLORE_MAX_RUNS 1000000u

/* Why an exploration stopped starting runs (explore_result.stop). */
enum explore_stop {
	EXPLORE_STOP_RUNS,      /* the runs budget was spent */
	EXPLORE_STOP_TIME,      /* the time budget was spent */
	EXPLORE_STOP_BUG,       /* a run failed (stop_at_bug) */
	EXPLORE_STOP_ERROR,     /* a run could not be started */
	EXPLORE_STOP_SIGNAL,    /* SIGINT, SIGTERM or SIGHUP (tracer_interrupted):
	                           the runs in flight were killed, not counted */
};

struct explore_opts {
	const char *dir;        /* the preparatory recording: meta.json, trace.avt */
	struct xp_config cfg;   /* algorithm and bounds; explore_run() fills in
	                           nthreads_est, k_est and vars from the recording
	                           when they are 0 / NULL */
	uint64_t seed;
	unsigned runs;
	unsigned first_run;     /* number of the first run (runs are numbered
	                           first_run + 1 ..): a caller that explores in
	                           several rounds keeps run numbers unique */
	unsigned jobs;          /* runs at a time, each on its own CPU */
	double time_s;          /* 0, or no run starts once this many seconds
	                           have passed since the first (the runs in
	                           flight finish); with runs, whichever ends
	                           first.  Which runs ran then depends on the
	                           clock; each run still depends only on
	                           (seed, its number) */
	unsigned min_runs;      /* the time budget ends no exploration before
	                           this many runs (the same runs, decision for
	                           decision, whatever the machine's speed) */
	double timeout_s;       /* a run longer than this is abandoned */
	const char *oracle;     /* as replay --oracle */
	bool stop_at_bug;       /* stop starting runs once one failed */
	int stop_except;        /* ... but not for a run that exited with this
	                           shell-style status (128+N: signal N; 0:
	                           none): the program fails so on its own
	                           (cli/test.c), no finding to stop at */
	bool no_agent;          /* runs on ptrace alone, even if the recording
	                           was made with the agent */
	/* starting points (predictions that replayed INFEASIBLE or PASS, or
	 * every prediction): run i follows the i-th as far as it can, then
	 * its policy decides (explore/policy.h) */
	const struct explore_start *starts;
	size_t nstarts;
	void (*progress)(void *ctx, const struct explore_progress *p);
	void *progress_ctx;
};

/* A starting point: a schedule file's run steps; with the threads of the
 * prediction's pattern, only their order is kept and the other threads
 * are placed at random (xp_guide_add_prediction). */
struct explore_start {
	char *sched;
	uint32_t *pattern; /* NULL: follow the schedule as it is */
	size_t npattern;
};

struct explore_bug {
	unsigned run;           /* first run that failed this way (the lowest
	                           number: runs - first_run is runs-to-bug) */
	unsigned hits;          /* runs that failed this way */
	int signal;             /* fatal signal, or 0 */
	int exit_status;        /* shell style, or -1 */
	uint32_t thread;        /* failing thread */
	char key[512];          /* the dedupe key */
	char dir[4200];         /* DIR/explore/runs/NNNN */
	char choices[256];      /* the run's random choices (xp_run_describe) */
};

struct explore_result {
	unsigned done;          /* runs finished */
	enum explore_stop stop; /* why no more runs were started */
	unsigned counts[5];     /* by enum replay_outcome */
	struct explore_bug *bugs;
	size_t nbugs;
	double seconds;
	uint64_t events;        /* events of the finished runs */
	uint64_t agent_events;  /* of them, made in-process (the agent) */
	uint64_t stops;         /* the runs' ptrace stops (waitpid reports) */
	uint64_t agent_scripts;   /* hand-over scripts run in-process (docs/agent.md) */
	uint64_t agent_handovers; /* run tokens passed between threads in them */
	uint64_t agent_extras;    /* accesses the recording does not have, in-process */
	uint64_t stuck_waits;   /* turns ended as their thread fell asleep where
	                           only a stopped thread could wake it */
	char error[256];        /* the first run that ended in an error: why */
};

/* The variables PCTVB chooses from: every address read or written and
 * every lock, condition, semaphore and barrier of t, with the number of
 * its events (the estimate of accesses per run).  A malloc'ed array in
 * *out; -1 after avt_error(). */
int explore_vars(const struct trace *t, struct xp_var **out, size_t *n);

/* Runs the exploration.  0 (whatever the runs found), or -1 after an
 * avt_error() (no recording, cannot write DIR/explore). */
int explore_run(const struct explore_opts *o, struct explore_result *res);
void explore_result_release(struct explore_result *r);

/* "pct", "pctvb", "tb", "pos", "surw", "guided". */
const char *explore_algo_name(enum xp_algo a);

#endif
