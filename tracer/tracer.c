/*
 * Launching the target and the serialized event loop (see tracer.h for the
 * model of requests, commits and steps).
 *
 * Timing: a 1 ms interval timer interrupts the supervisor's waitpid() so it
 * can notice a running thread that spins (preempted after the slice) or
 * sleeps in the kernel on something the model does not know (set aside as
 * an unknown kernel wait).  Nothing else in the fast path costs a syscall
 * beyond the ptrace stop itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "cfi.h"
#include "ptrace_util.h"
#include "remote.h"
#include "symbolizer/sym.h"
#include "trace/log.h"
#include "tracer_int.h"

#define TICK_US 1000

static volatile sig_atomic_t ticks;
static volatile sig_atomic_t interrupt_sig;

void tracer_interrupt_all(int sig)
{
	interrupt_sig = sig;
}

int tracer_interrupted(void)
{
	return interrupt_sig;
}

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

static void timer_start(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_tick; /* no SA_RESTART: the tick must interrupt waitpid */
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, TICK_US }, { 0, TICK_US } };
	setitimer(ITIMER_REAL, &it, NULL);
}

void timer_stop(void)
{
	struct itimerval it;
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
}

struct tracer *tracer_new(const struct tracer_opts *opts, const struct tracer_sink *sink)
{
	struct tracer *tr = calloc(1, sizeof *tr);
	if (!tr)
		return NULL;
	tr->opts = *opts;
	if (!tr->opts.slice_ms)
		tr->opts.slice_ms = 10;
	tr->sink = *sink;
	tr->memfd = -1;
	tr->current = NO_THREAD;
	model_init(&tr->model);
	return tr;
}

static void free_threads(struct tracer *tr)
{
	for (size_t i = 0; i < tr->nthr; i++) {
		if (tr->thr[i])
			free(tr->thr[i]->priv);
		free(tr->thr[i]);
	}
	free(tr->thr);
	tr->thr = NULL;
	tr->nthr = tr->capthr = 0;
}

void tracer_free(struct tracer *tr)
{
	if (!tr)
		return;
	if (tr->alive)
		tracer_kill(tr);
	timer_stop();
	free_threads(tr);
	free(tr->run);
	free(tr->last);
	features_release(tr);
	sym_free(tr->as.sym);
	cfi_cache_free(tr->as.cfi);
	aspace_release(&tr->as);
	model_release(&tr->model);
	agent_free(tr);
	if (tr->memfd >= 0)
		close(tr->memfd);
	free(tr->exe);
	free(tr);
}

/* ---- launch */

static int resolve_exe(struct tracer *tr)
{
	const char *prog = tr->opts.argv[0];
	if (strchr(prog, '/')) {
		/* relative to where the program will run (a replay: the
		 * recording's directory), not to where avtrace was started */
		char joined[8192];
		if (prog[0] != '/' && tr->opts.cwd) {
			snprintf(joined, sizeof joined, "%s/%s", tr->opts.cwd, prog);
			prog = joined;
		}
		tr->exe = realpath(prog, NULL);
		if (!tr->exe) {
			avt_error("cannot run '%s': %s", prog, strerror(errno));
			return -1;
		}
		return 0;
	}
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *e = strchrnul(p, ':');
		snprintf(buf, sizeof buf, "%.*s/%s", (int)(e - p), p, prog);
		if (access(buf, X_OK) == 0) {
			tr->exe = realpath(buf, NULL);
			return tr->exe ? 0 : -1;
		}
		p = *e ? e + 1 : e;
	}
	avt_error("cannot run '%s': not found in PATH", prog);
	return -1;
}

static int check_exe(struct tracer *tr)
{
	struct stat st;
	char why[128];
	int is_static;
	if (stat(tr->exe, &st) < 0) {
		avt_error("cannot run '%s': %s", tr->exe, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		avt_error("cannot run '%s': not a regular file", tr->exe);
		return -1;
	}
	if (access(tr->exe, X_OK) < 0) {
		avt_error("cannot run '%s': not executable", tr->exe);
		return -1;
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		avt_error("refusing to trace '%s': it is set-user/group-ID (ptrace would drop its privileges and must not be used on it)", tr->exe);
		return -1;
	}
	if (elf_check_exec(tr->exe, &is_static, why, sizeof why) < 0) {
		avt_error("cannot trace '%s': %s", tr->exe, why);
		return -1;
	}
	return 0;
}

static void child_exec(struct tracer *tr, int errfd, pid_t parent)
{
	if (tr->opts.cwd && chdir(tr->opts.cwd) < 0)
		goto fail;
	personality(ADDR_NO_RANDOMIZE);
	/* a stopped process whose group becomes orphaned gets SIGHUP+SIGCONT
	 * when avtrace exits; in a session of its own that never happens */
	if (tr->opts.own_session)
		setsid();
	if (tr->opts.stdout_fd >= 0)
		dup2(tr->opts.stdout_fd, 1);
	if (tr->opts.stdin_fd > 0)
		dup2(tr->opts.stdin_fd, 0);
	if (tr->opts.stderr_fd > 0)
		dup2(tr->opts.stderr_fd, 2);
	if (tr->opts.stdin_path) {
		int in = open(tr->opts.stdin_path, O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0)
			goto fail;
	}
	if (tr->opts.quiet_target) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/* until avtrace has seized it (PTRACE_O_EXITKILL from then on), the
	 * stopped child would outlive an avtrace killed now: stopped for
	 * ever, under avtrace's own name */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	raise(SIGSTOP);
	prctl(PR_SET_PDEATHSIG, 0); /* PROG's own state, as without avtrace */
	if (tr->opts.envp)
		execve(tr->exe, tr->opts.argv, tr->opts.envp);
	else
		execv(tr->exe, tr->opts.argv);
fail:;
	int e = errno;
	if (write(errfd, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

static const char *ptrace_hint(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope == 3)
		return " (kernel.yama.ptrace_scope is 3: ptrace is disabled until reboot)";
	if (scope >= 1)
		return " (kernel.yama.ptrace_scope restricts ptrace; try 'sysctl kernel.yama.ptrace_scope=0' or run as root)";
	return " (is avtrace running inside a container or sandbox that forbids ptrace?)";
}

static int wait_exec(struct tracer *tr, int errfd)
{
	for (;;) {
		int st;
		if (ptu_wait(tr->pid, &st, __WALL) < 0)
			return -1;
		struct ptu_status s;
		ptu_decode(st, &s);
		if (s.stop == PTU_EXITED || s.stop == PTU_KILLED) {
			int e = 0;
			if (read(errfd, &e, sizeof e) == sizeof e)
				avt_error("cannot run '%s': %s", tr->exe, strerror(e));
			else
				avt_error("'%s' exited before it started", tr->exe);
			tr->alive = false;
			return -1;
		}
		if (s.stop == PTU_EV_EXEC)
			return 0;
		/* the SIGSTOP group-stop and the SIGCONT that ends it: swallow */
		ptu_resume(tr->pid, 0);
	}
}

/* Maps the scratch page by making the target call mmap(2): `syscall; int3`
 * written over its entry point, run, then the bytes and registers put back. */
static int inject_mmap(struct tracer *tr, struct tthread *t, uint64_t entry,
		       struct user_regs_struct *saved)
{
	int kept;
	uint64_t got = remote_mmap(tr->pid, tr->memfd, entry, saved, 0, BPT_SCRATCH_SIZE, 0, &kept);
	tr_keep_signal(t, kept);
	if (!got)
		return -1;
	tr->as.scratch = got;
	return 0;
}

static uint64_t auxv_entry(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_auxv_t a;
	uint64_t entry = 0;
	while (read(fd, &a, sizeof a) == sizeof a && a.a_type != AT_NULL)
		if (a.a_type == AT_ENTRY)
			entry = a.a_un.a_val;
	close(fd);
	return entry;
}

static void announce_module(struct tracer *tr, struct elfmod *m)
{
	{
		m->id = tr->as.next_mod_id++;
		struct avt_module_rec rec;
		memset(&rec, 0, sizeof rec);
		rec.base = m->bias;
		rec.lo = m->lo;
		rec.hi = m->hi;
		rec.id = (uint16_t)m->id;
		rec.build_id_len = m->build_id_len;
		memcpy(rec.build_id, m->build_id, sizeof rec.build_id);
		if (tr->sink.module)
			tr->sink.module(tr->sink.ctx, tr, &rec, m->path);
	}
}

static void announce_modules(struct tracer *tr)
{
	for (size_t i = 0; i < tr->as.mods.n; i++)
		announce_module(tr, &tr->as.mods.m[i]);
}

/* dlopen: modules mapped since we last looked get ids, records and
 * their probes planted (dlclose leaves old ones be: ids stay unique). */
void tr_modules_changed(struct tracer *tr)
{
	struct modmap now;
	if (modmap_load(&now, tr->pid) < 0)
		return;
	for (size_t i = 0; i < now.n; i++) {
		struct elfmod *n = &now.m[i];
		bool known = false;
		for (size_t k = 0; k < tr->as.mods.n && !known; k++)
			known = tr->as.mods.m[k].lo == n->lo && !strcmp(tr->as.mods.m[k].path, n->path);
		if (known)
			continue;
		struct elfmod *grown = realloc(tr->as.mods.m, (tr->as.mods.n + 1) * sizeof *grown);
		if (!grown)
			break;
		tr->as.mods.m = grown;
		struct elfmod *m = &tr->as.mods.m[tr->as.mods.n++];
		*m = *n;
		m->path = strdup(n->path);
		announce_module(tr, m);
		features_plant_module(tr, m);
	}
	modmap_release(&now);
}

/* The new image is at its first instruction: stop it at AT_ENTRY, where
 * the dynamic linker has mapped libc, to plant the hooks. */
int exec_begin(struct tracer *tr)
{
	uint64_t entry = auxv_entry(tr->pid);
	features_exec_reset(tr);
	if (tr->memfd >= 0)
		close(tr->memfd);
	tr->memfd = ptu_open_mem(tr->pid);
	bpt_release(&tr->as.bpts);
	bpt_init(&tr->as.bpts, tr->pid, tr->memfd, 0);
	if (!entry || tr->memfd < 0 || bpt_insert_raw(&tr->as.bpts, entry, BK_ENTRY, 0) < 0) {
		avt_error("cannot stop '%s' at its entry point", tr->exe);
		return -1;
	}
	return 0;
}

int exec_at_entry(struct tracer *tr, struct tthread *t, struct bpt *b,
			 struct user_regs_struct *r)
{
	uint64_t entry = b->addr;
	if (bpt_remove(&tr->as.bpts, entry) < 0)
		return -1;
	r->rip = entry;
	if (inject_mmap(tr, t, entry, r) < 0) {
		avt_error("cannot map the scratch page into '%s'", tr->exe);
		return -1;
	}
	bpt_release(&tr->as.bpts);
	bpt_init(&tr->as.bpts, tr->pid, tr->memfd, tr->as.scratch);
	tr->as.tramp = tr->as.scratch;
	if (bpt_insert_raw(&tr->as.bpts, tr->as.tramp, BK_TRAMP, 0) < 0)
		return -1;
	modmap_release(&tr->as.mods);
	if (modmap_load(&tr->as.mods, tr->pid) < 0)
		return -1;
	announce_modules(tr);
	if (features_plant(tr, t) < 0)
		return -1;
	t->fs_base = r->fs_base;
	return 0;
}

/* Runs the fresh image to its entry point and plants the hooks there, so
 * that every setup failure is reported by tracer_launch itself. */
static int run_to_entry(struct tracer *tr, struct tthread *t)
{
	int sig = 0;
	for (;;) {
		int st;
		struct user_regs_struct r;
		struct ptu_status s;
		if (ptu_resume(tr->pid, sig) != 0 || ptu_wait(tr->pid, &st, __WALL) < 0)
			return -1;
		sig = 0;
		ptu_decode(st, &s);
		if (s.stop == PTU_KILLED) {
			avt_error("'%s' was killed by %s before reaching its entry point (as a shared library run as a program is)",
				  tr->exe, strsignal(s.sig));
			tr->alive = false;
			return -1;
		}
		if (!s.stopped) {
			avt_error("'%s' exited before reaching its entry point", tr->exe);
			tr->alive = false;
			return -1;
		}
		/* a signal on the way (the loader faulted): delivered, or the
		 * faulting instruction runs again for ever */
		if (s.stop == PTU_SIGNAL && s.sig != SIGTRAP && s.sig != SIGSTOP)
			sig = s.sig;
		if (s.stop != PTU_SIGNAL || s.sig != SIGTRAP || ptu_getregs(tr->pid, &r) < 0)
			continue;
		struct bpt *b = bpt_at_trap(&tr->as.bpts, r.rip - 1);
		if (!b || b->kind != BK_ENTRY)
			continue;
		if (exec_at_entry(tr, t, b, &r) < 0 || ptu_setregs(tr->pid, &r) < 0)
			return -1;
		return 0;
	}
}

int tracer_check(struct tracer *tr)
{
	if (tr->exe)
		return 0;
	if (resolve_exe(tr) < 0 || check_exe(tr) < 0) {
		free(tr->exe);
		tr->exe = NULL;
		return -1;
	}
	return 0;
}

const char *tracer_exe(const struct tracer *tr)
{
	return tr->exe;
}

uint32_t tracer_current(const struct tracer *tr)
{
	return tr->current;
}

int tracer_launch(struct tracer *tr)
{
	if (tracer_check(tr) < 0)
		return -1;
	if (tr->opts.agent_lib && !tr->agent && agent_prepare(tr) < 0)
		return -1;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	tracer_pin_cpu(tr->opts.cpu);
	fflush(NULL);
	pid_t self = getpid();
	tr->pid = fork();
	if (tr->pid < 0) {
		avt_error("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (tr->pid == 0)
		child_exec(tr, pfd[1], self);
	close(pfd[1]);
	agent_launched(tr);
	tr->alive = true;
	int st;
	struct ptu_status s;
	if (waitpid(tr->pid, &st, WUNTRACED) < 0 || (ptu_decode(st, &s), !s.stopped)) {
		avt_error("cannot start '%s'", tr->exe);
		close(pfd[0]);
		tr->alive = false;
		return -1;
	}
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
		    PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	if (ptrace(PTRACE_SEIZE, tr->pid, 0L, opts) < 0) {
		int e = errno;
		kill(tr->pid, SIGKILL);
		waitpid(tr->pid, &st, 0);
		tr->alive = false;
		close(pfd[0]);
		avt_error("cannot trace '%s': ptrace: %s%s", tr->exe, strerror(e),
			  e == EPERM ? ptrace_hint() : "");
		return -1;
	}
	kill(tr->pid, SIGCONT);
	int rc = wait_exec(tr, pfd[0]);
	close(pfd[0]);
	if (rc < 0)
		return -1;
	struct tthread *t0 = thread_add(tr, tr->pid, NO_THREAD);
	t0->state = TS_READY;
	if (exec_begin(tr) < 0 || run_to_entry(tr, t0) < 0) {
		tracer_kill(tr);
		return -1;
	}
	tr->launched = true;
	timer_start();
	return 0;
}

void tracer_kill(struct tracer *tr)
{
	if (!tr->alive)
		return;
	kill(tr->pid, SIGKILL);
	int st;
	pid_t p;
	timer_stop();
	/* killed tracees still stop at PTRACE_EVENT_EXIT: let each go */
	while ((p = ptu_wait(-1, &st, __WALL)) > 0) {
		struct ptu_status s;
		ptu_decode(st, &s);
		if (s.stopped)
			ptu_resume(p, 0);
	}
	agent_drain(tr, true); /* what the agent committed before the kill */
	tr->alive = false;
}

void tracer_set_stdin(struct tracer *tr, int fd)
{
	tr->opts.stdin_fd = fd;
}

pid_t tracer_pid(const struct tracer *tr)
{
	return tr->pid;
}

int tracer_exit_status(const struct tracer *tr)
{
	return tr->exit_status;
}

int tracer_exit_signal(const struct tracer *tr)
{
	return tr->exit_signal;
}

const struct tracer_stats *tracer_stats(const struct tracer *tr)
{
	return &tr->stats;
}
