/* The process tree of a recording (docs/process-tree.md): every process
 * the command started, and a recording of each multithreaded one. */
#ifndef AVT_CLI_TREE_H
#define AVT_CLI_TREE_H

#include <stddef.h>

struct record_opts;
struct record_result;

struct tracer_stats;
/* How one process is recorded (record_run, cli/record.c, which calls
 * this: passed down, so that tree.c depends on no caller of its own). */
typedef int (*tree_recorder)(const struct record_opts *o, struct tracer_stats *stats);

/* After the recording of o->argv (in o->dir): each other multithreaded
 * process of res's tree recorded alone by record into DIR/procs/NNNN/ (an
 * exec'd one by its own command, a forked one by its nearest exec'd
 * ancestor's and its fork path), then DIR/tree.json.  The number of
 * process recordings made, or -1 if tree.json cannot be written. */
int tree_record_rest(const struct record_opts *o, const struct record_result *res, tree_recorder record);

/* A recording of the tree, read back from DIR/tree.json. */
struct tree_rec {
	char dir[4200];   /* its directory */
	char name[512];   /* "process 3 (./bank 2)" */
};
/* The process recordings of DIR besides DIR itself (malloc'd array in
 * *out); their number, 0 when there is no tree.json. */
size_t tree_recordings(const char *dir, struct tree_rec **out);

/* Of two processes' exit statuses (0, 1 bug, 2 error, 3 inconclusive),
 * the one the tree ends with: a bug first, then an error, then
 * inconclusive. */
int tree_status(int a, int b);
/* The threads the recording in dir had (its meta.json), 0 if unknown. */
int tree_root_threads(const char *dir);

#endif
