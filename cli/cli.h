/*
 * The avtrace command: one function per subcommand, each returning the
 * process exit status (0, 1, 2, 3 as in ARCHITECTURE.md; record returns the
 * target's own status).  Only cli/ decides exit statuses.
 */
#ifndef AVT_CLI_H
#define AVT_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#define EXIT_USAGE 2
/* avtrace test's exit status when no bug was reproduced but that is no
 * clean result: most schedules never ran to their end, or the recording
 * died of a signal that no schedule reproduced. */
#define EXIT_INCONCLUSIVE 3

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int replay_all(const char *dir, unsigned jobs, const char *timeout);
/* Schedules nums[0..n) of dir to replay, jobs at a time, each pinned to
 * its own CPU (replay --timeout timeout).  Results are in
 * DIR/replays/NNNN.json; with text, each replay's text report is
 * DIR/replays/NNNN.txt too (the caller keeps or removes it).  done(ctx, i)
 * is called as replay i has ended, in the order of nums (a replay that
 * ended early waits for those before it). */
struct replay_batch {
	const char *dir;
	const unsigned *nums;
	size_t n;
	unsigned jobs;
	const char *timeout;
	bool text;
	void (*done)(void *ctx, size_t i);
	void *ctx;
};
/* 0 when every replay ended; the signal when SIGINT, SIGTERM or SIGHUP
 * stopped it (the replays under way are killed, done() is not called for
 * them); -1 on error. */
int run_replays(const struct replay_batch *b);
/* A replay worker's messages (fd, from offset 0) exited with status 2:
 * its "cannot write" lines become ours (avt_write_error). */
void cli_worker_errors(int fd);
int cmd_predict(int argc, char **argv);
int cmd_test(int argc, char **argv);
int default_cpu(void);
int agent_choice(int want, const char **lib);
struct record_opts;
struct tracer_stats;
int record_run(const struct record_opts *o, struct tracer_stats *stats);
int summary_table(const char *dir);
int cmd_explore(int argc, char **argv);
int cmd_report(int argc, char **argv);
struct explore_opts;
struct results;
struct explore_start;
/* Starting points of exploration from DIR's predictions (cli/explore.c). */
size_t prediction_starts(const char *dir, size_t max, bool every, struct explore_start **out);
void explore_starts_free(struct explore_start *s, size_t n);
/* How explore_and_report confirms and reports what exploration found. */
struct explore_report {
	const char *timeout;    /* of the check replay (replay --timeout) */
	const char *report_dir; /* copy each bug's report here as
	                           explore-NNNN.txt; NULL: leave it in its run */
	unsigned minimize_cap;  /* candidate replays per bug (cli/minimize.c), 0 none */
	int baseline_status;    /* the recorded run itself failed so (shell
	                           style; 0: it did not): runs failing the same
	                           way are counted apart, not reported */
	const char *baseline_who; /* who fails so (NULL: the recorded run did) */
	struct results *res;    /* the model each confirmed, distinct bug and
	                           the runs' tally go to */
};
/* Explores eo->dir (explore/explore.h), confirms each distinct failure by
 * replaying it and prints one entry per confirmed bug, written to how->res
 * (and its report to reports/) as it is confirmed; a failure that its
 * replay does not show again is counted in res->unconfirmed (unless a
 * deadlock: it may be the scheduler's).  0, or EXIT_USAGE on error. */
int explore_and_report(struct explore_opts *eo, const struct explore_report *how);

/* Minimisation of a reproduced bug's schedule (cli/minimize.c). */
int cmd_minimize(int argc, char **argv);
/* Candidate replays a minimisation tries at most by default (avtrace
 * minimize --max-replays; avtrace test uses it per bug); the replays of the
 * passing neighbours, one per switch left, come on top. */
#define MINIMIZE_DEFAULT_REPLAYS 40
struct min_summary {
	size_t from, switches;       /* switches before and after */
	unsigned replays;            /* candidate replays (and the reference's) */
	unsigned neighbour_replays;
	bool capped;
	double seconds;
};
/* Minimises sched_path, the schedule of reproduced bug x of dir (x: the
 * report's name, NNNN or explore-NNNN), keeping the failure ref_json
 * describes (a replay's JSON; NULL or no failure there: the schedule is
 * replayed first).  Writes dir/reports/x.min.sched, x.min.json (with
 * "switches"), x.min.avt, and rewrites dir/reports/x.txt (if any) to lead
 * with the minimal schedule; print: that report on stdout too.  0 done, 1
 * the schedule does not reproduce a bug, -1 error. */
int minimize_bug(const char *dir, const char *x, const char *sched_path, const char *ref_json,
		 unsigned cap, const char *timeout, bool print, struct min_summary *out);

/* Signals (cli/stop.c): SIGINT, SIGTERM and SIGHUP stop the command
 * (every command but dump, predict and schedule catches them). */
void cli_catch_stop_signals(void);
/* In a worker forked by parent: die with it (PR_SET_PDEATHSIG). */
void cli_worker_dies_with_parent(pid_t parent);

/* avtrace verify (cli/verify.c); verify_describe_reports() writes
 * DIR/reports/X.events.json (each report's events in source terms) while
 * the recorded binary is there; -1 if some could not be written. */
int cmd_verify(int argc, char **argv);
int verify_describe_reports(const char *dir);

/* "avtrace: <cmd>: ..." usage error; returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
