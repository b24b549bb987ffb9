/* The process tree: every process the recorded program starts, followed
 * lightly (tree.h).  A light process costs a stop at each fork, exec and
 * thread creation of it, and nothing else: no breakpoints, no exit stop. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_util.h"
#include "trace/log.h"
#include "tracer_int.h"

/* Light processes report forks, execs and thread creations; no exit
 * stop (its status comes with its end) and they die with avtrace. */
#define LIGHT_OPTS                                                                   \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | \
	 PTRACE_O_TRACEVFORK)

static int node_add(struct tree *t, pid_t pid, int parent, unsigned ordinal, bool vfork)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 16;
		struct tracer_proc *n = realloc(t->nodes, ncap * sizeof *n);
		BUG_ON(!n);
		t->nodes = n;
		t->cap = ncap;
	}
	struct tracer_proc *p = &t->nodes[t->n];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->parent = parent;
	p->ordinal = ordinal;
	p->vfork = vfork;
	p->alive = true;
	p->threads = p->max_threads = 1;
	return (int)t->n++;
}

static void tid_add(struct tree *t, pid_t tid, int node)
{
	if (t->ntids == t->captids) {
		size_t ncap = t->captids ? t->captids * 2 : 16;
		struct tree_thread *n = realloc(t->tids, ncap * sizeof *n);
		BUG_ON(!n);
		t->tids = n;
		t->captids = ncap;
	}
	t->tids[t->ntids++] = (struct tree_thread){ tid, node };
}

static int tid_find(const struct tree *t, pid_t tid)
{
	for (size_t i = 0; i < t->ntids; i++)
		if (t->tids[i].tid == tid)
			return (int)i;
	return -1;
}

static void tid_drop(struct tree *t, size_t i)
{
	t->tids[i] = t->tids[--t->ntids];
}

int tree_init(struct tracer *tr, pid_t pid)
{
	struct tree *t = &tr->tree;
	t->focus = node_add(t, pid, -1, 0, false);
	t->nodes[t->focus].execd = false; /* its command is the session's */
	return 0;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void node_clear(struct tracer_proc *p)
{
	strv_free(p->argv);
	strv_free(p->env);
	free(p->exe);
	free(p->cwd);
	p->argv = p->env = NULL;
	p->exe = p->cwd = NULL;
}

void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		node_clear(&t->nodes[i]);
	free(t->nodes);
	free(t->tids);
	memset(t, 0, sizeof *t);
}

/* A /proc file of NUL-separated strings as a NULL-terminated vector. */
static char **proc_strv(pid_t pid, const char *what)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			char *n = realloc(buf, cap);
			BUG_ON(!n);
			buf = n;
		}
		size_t k = fread(buf + len, 1, cap - len - 1, f);
		len += k;
		if (!k)
			break;
	}
	fclose(f);
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += !buf[i];
	char **v = calloc(n + 2, sizeof *v);
	BUG_ON(!v);
	size_t k = 0;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
		buf[len] = 0;
		v[k++] = strdup(buf + i);
	}
	free(buf);
	return v;
}

static char *proc_link(pid_t pid, const char *what)
{
	char path[64], to[4096];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	ssize_t n = readlink(path, to, sizeof to - 1);
	if (n < 0)
		return NULL;
	to[n] = 0;
	return strdup(to);
}

/* The environment as the program had it, without what avtrace added for
 * its agent (a run of the process alone adds it again). */
static void env_clean(char **env, const char *agent_lib)
{
	size_t k = 0;
	for (size_t i = 0; env && env[i]; i++) {
		char *e = env[i];
		if (!strncmp(e, "AVTRACE_AGENT_FD=", 17)) {
			free(e);
			continue;
		}
		if (agent_lib && !strncmp(e, "LD_PRELOAD=", 11)) {
			/* drop the agent from the list; the list may be all it held */
			char out[8192] = "LD_PRELOAD=";
			char *save = NULL, *copy = strdup(e + 11);
			BUG_ON(!copy);
			for (char *tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
				if (!strcmp(tok, agent_lib))
					continue;
				if (out[11])
					strncat(out, ":", sizeof out - strlen(out) - 1);
				strncat(out, tok, sizeof out - strlen(out) - 1);
			}
			free(copy);
			free(e);
			if (!out[11])
				continue;
			e = strdup(out);
			BUG_ON(!e);
		}
		env[k++] = e;
	}
	if (env)
		env[k] = NULL;
}

/* Blanks the agent's path out of LD_PRELOAD in the environment of a light
 * process that has just exec'd (its new stack, before the dynamic linker
 * reads it): the agent serves the focus alone, and loading it into every
 * program a script runs would cost each one the library's mapping and
 * relocation (a third more for a short program).  The path's characters
 * become ':', which the dynamic linker skips, so the strings keep their
 * length and place; the environment recorded (node_exec) is the one
 * before. */
static void unpreload(pid_t pid, const char *agent_lib)
{
	errno = 0;
	long sp = ptrace(PTRACE_PEEKUSER, pid, (void *)offsetof(struct user_regs_struct, rsp), 0L);
	uint64_t argc, ptr;
	size_t alen = strlen(agent_lib);
	if (errno || ptu_read_u64(pid, (uint64_t)sp, &argc) < 0 || argc > 1u << 20)
		return;
	for (uint64_t at = (uint64_t)sp + 8 * (argc + 2);; at += 8) {
		char val[8192];
		if (ptu_read_u64(pid, at, &ptr) < 0 || !ptr)
			return;
		if (ptu_read(pid, ptr, val, 11) < 0 || memcmp(val, "LD_PRELOAD=", 11))
			continue;
		/* the value, read a page's rest at a time (never past a page
		 * that may be the stack's last) */
		size_t n = 0;
		for (;;) {
			uint64_t a = ptr + 11 + n;
			size_t k = 4096 - (a & 4095);
			if (k > sizeof val - 1 - n)
				k = sizeof val - 1 - n;
			if (!k || ptu_read(pid, a, val + n, k) < 0)
				return;
			char *z = memchr(val + n, 0, k);
			if (z) {
				n = (size_t)(z - val);
				break;
			}
			n += k;
		}
		val[n] = 0;
		bool hit = false;
		for (char *tok = val; (tok = strstr(tok, agent_lib)); tok += alen)
			if ((tok == val || tok[-1] == ':' || tok[-1] == ' ') &&
			    (!tok[alen] || tok[alen] == ':' || tok[alen] == ' ')) {
				memset(tok, ':', alen);
				hit = true;
			}
		struct iovec l = { val, n }, r = { (void *)(uintptr_t)(ptr + 11), n };
		if (hit && process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)n)
			avt_debug("tree: %d: cannot take the agent out of LD_PRELOAD: %s", (int)pid,
				  strerror(errno));
		return;
	}
}

/* What a process exec'd: its own command from now on. */
static void node_exec(struct tracer *tr, struct tracer_proc *p)
{
	node_clear(p);
	p->execd = true;
	p->cwd = proc_link(p->pid, "cwd");
	p->argv = proc_strv(p->pid, "cmdline");
	if (tr->opts.agent_lib)
		unpreload(p->pid, tr->opts.agent_lib);
	p->forks = 0;
	p->threads = p->max_threads = 1;
}

/* The rest of what an exec'd process's recording needs, read when it may
 * need one: at its first thread or child (a forked child's recording runs
 * its nearest exec'd ancestor's command).  Most processes of a script do
 * neither, and skip the reads.  The image is still the exec's, and the
 * environment's strings where the exec put them (unpreload's colons are
 * dropped with the agent by env_clean). */
static void node_details(struct tracer *tr, struct tracer_proc *p)
{
	if (!p->execd || p->exe)
		return;
	p->exe = proc_link(p->pid, "exe");
	p->env = proc_strv(p->pid, "environ");
	env_clean(p->env, tr->opts.agent_lib);
}

void tree_focus_exec(struct tracer *tr)
{
	struct tree *t = &tr->tree;
	if (t->n)
		t->nodes[t->focus].forks = 0;
}

/* A new light process (in its first stop, waited for): its options, then
 * on its way. */
static void light_start(struct tracer *tr, pid_t child, int node)
{
	tid_add(&tr->tree, child, node);
	/* --futex: it has the filter, whose stops it must take (each let go
	 * in tree_on_stop): untraced for them, its futex would fail */
	long opts = LIGHT_OPTS | (tr->opts.futex ? PTRACE_O_TRACESECCOMP : 0);
	if (ptrace(PTRACE_SETOPTIONS, child, 0L, opts) < 0)
		avt_debug("tree: %d: cannot set its options: %s", (int)child, strerror(errno));
	ptu_resume(child, 0);
}

/* The fork path's next process: the focus becomes child, whose memory
 * is a copy of the focus's (breakpoints included), and the old focus,
 * its original code given back, runs free.  Only a focus that never had
 * a second thread can hand over: its one thread becomes the child's. */
/* The old focus of a fork path runs free from now on.  Under --futex it
 * has the filter, whose futex calls fail with ENOSYS once nobody traces
 * it: it stays a light process instead (killed at tree_end all the same,
 * reaped by the tree's drain). */
static void let_go(struct tracer *tr, pid_t pid, int node)
{
	if (!tr->opts.futex) {
		ptrace(PTRACE_DETACH, pid, 0L, 0L);
		return;
	}
	tid_add(&tr->tree, pid, node);
	if (ptrace(PTRACE_SETOPTIONS, pid, 0L, (long)(LIGHT_OPTS | PTRACE_O_TRACESECCOMP)) < 0)
		avt_debug("tree: %d: cannot set its options: %s", (int)pid, strerror(errno));
	ptu_resume(pid, 0);
}

static int take_fork(struct tracer *tr, pid_t child, int node)
{
	struct process *pr = tr->proc;
	if (pr->nthr != 1) {
		avt_warn("cannot follow the fork path through a process that had %zu threads", pr->nthr);
		return -1;
	}
	int fd = ptu_open_mem(child);
	if (fd < 0)
		return -1;
	bpt_restore_all(&pr->as.bpts, pr->memfd);
	struct tthread *t = pr->thr[0];
	let_go(tr, pr->pid, tr->tree.focus);
	close(pr->memfd);
	pr->memfd = fd;
	pr->pid = child;
	pr->as.bpts.pid = child;
	pr->as.bpts.memfd = fd;
	t->tid = child;
	t->started = false; /* its START is the child's */
	model_release(&pr->model);
	model_init(&pr->model);
	tr->tree.nodes[tr->tree.focus].alive = false; /* not followed any more */
	if (tr->tree.nancestors < sizeof tr->tree.ancestors / sizeof tr->tree.ancestors[0])
		tr->tree.ancestors[tr->tree.nancestors++] = tr->tree.nodes[tr->tree.focus].pid;
	tr->tree.focus = node;
	tr->tree.path_at++;
	return 0;
}

static bool take_orphan(struct tracer *tr, pid_t tid)
{
	for (int i = 0; i < tr->norphans; i++)
		if (tr->orphans[i] == tid) {
			tr->orphans[i] = tr->orphans[--tr->norphans];
			return true;
		}
	return false;
}

void tree_wait_first_stop(struct tracer *tr, pid_t tid)
{
	if (take_orphan(tr, tid))
		return;
	int st;
	ptu_wait(tid, &st, __WALL);
}

bool tree_focus_fork(struct tracer *tr, pid_t child, bool vfork)
{
	struct tree *t = &tr->tree;
	tree_wait_first_stop(tr, child);
	struct tracer_proc *f = &t->nodes[t->focus];
	unsigned ord = ++f->forks;
	int node = node_add(t, child, t->focus, ord, vfork);
	if (t->path_at < tr->opts.nfork_path && tr->opts.fork_path[t->path_at] == ord &&
	    take_fork(tr, child, node) == 0)
		return true;
	if (!vfork) {
		/* it inherited our int3s: give it its original code back */
		int fd = ptu_open_mem(child);
		if (fd >= 0) {
			bpt_restore_all(&tr->proc->as.bpts, fd);
			close(fd);
		}
	}
	light_start(tr, child, node);
	return false;
}

bool tree_muted(const struct tracer *tr)
{
	return tr->tree.path_at < tr->opts.nfork_path;
}

bool tree_owns(const struct tracer *tr, pid_t tid)
{
	return tr->tree.ntids && tid_find(&tr->tree, tid) >= 0;
}

size_t tree_live(const struct tracer *tr)
{
	return tr->tree.ntids;
}

static bool thread_of(pid_t pid, pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	pid_t tgid = -1;
	if (!f)
		return false;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid == pid;
}

/* A light process created a task: a thread of its own, or a process. */
static void light_created(struct tracer *tr, int node, pid_t task, bool process, bool vfork)
{
	struct tree *t = &tr->tree;
	tree_wait_first_stop(tr, task);
	struct tracer_proc *p = &t->nodes[node];
	node_details(tr, p);
	if (!process && thread_of(p->pid, task)) {
		p->threads++;
		p->max_threads++;
		tid_add(t, task, node);
		ptu_resume(task, 0);
		return;
	}
	unsigned ord = ++p->forks;
	int child = node_add(t, task, node, ord, vfork);
	light_start(tr, task, child);
}

/* An exec in a light process: every other thread of it is gone, the
 * execing one has the leader's tid now. */
static void light_exec(struct tracer *tr, int node)
{
	struct tree *t = &tr->tree;
	struct tracer_proc *p = &t->nodes[node];
	for (size_t i = 0; i < t->ntids;)
		if (t->tids[i].node == node && t->tids[i].tid != p->pid)
			tid_drop(t, i);
		else
			i++;
	if (tid_find(t, p->pid) < 0)
		tid_add(t, p->pid, node);
	node_exec(tr, p);
}

static void light_gone(struct tracer *tr, size_t i, const struct ptu_status *s)
{
	struct tree *t = &tr->tree;
	int node = t->tids[i].node;
	struct tracer_proc *p = &t->nodes[node];
	pid_t tid = t->tids[i].tid;
	tid_drop(t, i);
	if (p->threads)
		p->threads--;
	if (tid == p->pid) {
		p->alive = false;
		p->exit_status = s->stop == PTU_KILLED ? 128 + s->sig : s->code;
	}
}

/* A vfork child of the focus runs in the focus's memory, breakpoints
 * included (the focus is held meanwhile): at one of them it goes on as
 * the focus's threads do, from the breakpoint's resume point, with no
 * event.  A return trampoline is the focus's own: not taken. */
static bool vfork_child_trap(struct tracer *tr, int node, pid_t tid)
{
	const struct tracer_proc *p = &tr->tree.nodes[node];
	if (!p->vfork || p->execd || p->parent != tr->tree.focus)
		return false;
	struct user_regs_struct r;
	if (ptu_getregs(tid, &r) < 0)
		return false;
	struct bpt *b = bpt_at_trap(&tr->proc->as.bpts, r.rip - 1);
	if (!b || b->kind == BK_TRAMP)
		return false;
	r.rip = bpt_resume_pc(b);
	return ptu_setregs(tid, &r) == 0;
}

void tree_on_stop(struct tracer *tr, pid_t tid, struct ptu_status *s)
{
	struct tree *t = &tr->tree;
	int i = tid_find(t, tid);
	if (i < 0)
		return;
	int node = t->tids[i].node;
	switch (s->stop) {
	case PTU_EXITED:
	case PTU_KILLED:
		light_gone(tr, (size_t)i, s);
		return;
	case PTU_EV_CLONE:
		light_created(tr, node, (pid_t)s->msg, false, false);
		break;
	case PTU_EV_FORK:
		light_created(tr, node, (pid_t)s->msg, true, s->vfork);
		break;
	case PTU_EV_EXEC:
		light_exec(tr, node);
		break;
	case PTU_SIGNAL:
		ptu_resume(tid, s->sig == SIGTRAP && vfork_child_trap(tr, node, tid) ? 0 : s->sig);
		return;
	default:
		break;
	}
	ptu_resume(tid, 0);
}

void tree_kill(struct tracer *tr)
{
	struct tree *t = &tr->tree;
	for (size_t i = 0; i < t->ntids && t->nodes; i++)
		if (t->nodes[t->tids[i].node].pid == t->tids[i].tid)
			kill(t->tids[i].tid, SIGKILL);
}

void tree_forget(struct tracer *tr)
{
	tr->tree.ntids = 0;
}

void tree_end(struct tracer *tr)
{
	struct tree *t = &tr->tree;
	for (size_t i = 0; i < t->nancestors; i++)
		kill(t->ancestors[i], SIGKILL);
	/* the launched one is avtrace's child; one kept traced (let_go) is
	 * reaped with the tree's other light processes */
	if (t->nancestors && !tree_owns(tr, t->ancestors[0]))
		waitpid(t->ancestors[0], NULL, 0);
	t->nancestors = 0;
}

size_t tracer_nprocs(const struct tracer *tr)
{
	return tr->tree.n;
}

const struct tracer_proc *tracer_proc(const struct tracer *tr, size_t i)
{
	if (i >= tr->tree.n)
		return NULL;
	struct tracer_proc *p = &tr->tree.nodes[i];
	if ((int)i == tr->tree.focus) {
		p->max_threads = tr->stats.threads;
		p->alive = tr->proc->alive;
		p->exit_status = tr->proc->exit_status;
	}
	return p;
}

size_t tracer_focus(const struct tracer *tr)
{
	return (size_t)tr->tree.focus;
}

struct tracer_proc *tracer_take_tree(struct tracer *tr, size_t *n, size_t *focus)
{
	struct tree *t = &tr->tree;
	*n = t->n;
	*focus = (size_t)t->focus;
	if (t->n)
		tracer_proc(tr, (size_t)t->focus); /* its counts, from the session */
	struct tracer_proc *p = t->nodes;
	t->nodes = NULL;
	t->n = t->cap = 0;
	t->ntids = 0; /* (all gone by now: the session ended) */
	return p;
}

void tracer_procs_free(struct tracer_proc *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		node_clear(&p[i]);
	free(p);
}
