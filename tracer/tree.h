/* The process tree (tree.c): every process the recorded program starts,
 * followed lightly.
 *
 * The session records one process, the focus (tracer.proc): the one
 * launched, or the one a fork path leads to (tracer_opts.fork_path).
 * Every other process of the tree is traced only to see it fork, exec,
 * create threads and exit: its memory has none of our breakpoints (a
 * forked copy of the focus gets the original code back), its stops are
 * fork/vfork/clone/exec events and signals, each resumed at once.  What
 * the tree saw (tracer_proc) tells the caller which processes became
 * multithreaded and how to start each again alone: by its exec'd command,
 * or by its nearest exec'd ancestor's command and the fork ordinals down
 * to it. */
#ifndef AVTRACE_TREE_H
#define AVTRACE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;
struct ptu_status;

struct tree_thread {
	pid_t tid;
	int node; /* index in tree.nodes */
};

struct tree {
	struct tracer_proc *nodes;
	size_t n, cap;
	struct tree_thread *tids; /* threads of the light processes */
	size_t ntids, captids;
	int focus;                /* the focus's node */
	size_t path_at;           /* fork path entries taken so far */
	pid_t ancestors[16];      /* the fork path's, let go (run free) */
	size_t nancestors;
};

/* The root node (the launched process, pid). */
int tree_init(struct tracer *tr, pid_t pid);
void tree_free(struct tree *t);
/* Waits for a new task's first stop, unless it came already (an orphan:
 * before the event that announces it; PTRACE-NOTES pitfall 5). */
void tree_wait_first_stop(struct tracer *tr, pid_t tid);
/* The focus forked (or cloned a process): child (its first stop not
 * waited for yet) joins the tree, lightly, or becomes the focus when the
 * fork path says so: true then (the focus's thread is the child's now;
 * its watchpoints are the caller's to set). vfork: it shares the
 * focus's memory. */
bool tree_focus_fork(struct tracer *tr, pid_t child, bool vfork);
/* The focus exec'd: its fork ordinals count again from 0. */
void tree_focus_exec(struct tracer *tr);
/* Is tid a thread of a light process? */
bool tree_owns(const struct tracer *tr, pid_t tid);
/* A stop (or the end) of one of them: handled and resumed here. */
void tree_on_stop(struct tracer *tr, pid_t tid, struct ptu_status *s);
/* Threads of light processes still alive. */
size_t tree_live(const struct tracer *tr);
/* SIGKILL to every light process (the session is being killed). */
void tree_kill(struct tracer *tr);
/* They are all gone (reaped by tracer_kill). */
void tree_forget(struct tracer *tr);
/* The recorded process is gone: the fork path's ancestors, which ran
 * free only to start it, are killed (and the launched one reaped). */
void tree_end(struct tracer *tr);
/* The fork path is not all taken yet: the focus's events are not the
 * recording's. */
bool tree_muted(const struct tracer *tr);

#endif
