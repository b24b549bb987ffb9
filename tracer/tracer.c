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

/* The session's first process: the one launched (its pid set then). */
static int add_first_process(struct tracer *tr)
{
	tr->procs = calloc(1, sizeof *tr->procs);
	if (!tr->procs || !(tr->procs[0] = process_new(0)))
		return -1;
	tr->nprocs = 1;
	tr->proc = tr->procs[0];
	return 0;
}

struct tracer *tracer_new(const struct tracer_opts *opts, const struct tracer_sink *sink)
{
	struct tracer *tr = calloc(1, sizeof *tr);
	if (!tr)
		return NULL;
	if (add_first_process(tr) < 0) {
		free(tr->procs);
		free(tr);
		return NULL;
	}
	tr->opts = *opts;
	if (tr->opts.nfork_path) /* its ancestors share its memory map, never its agent */
		tr->opts.agent_lib = NULL;
	if (!tr->opts.slice_ms)
		tr->opts.slice_ms = 10;
	tr->sink = *sink;
	tr->current = NO_THREAD;
	return tr;
}

void tracer_free(struct tracer *tr)
{
	if (!tr)
		return;
	if (tr->proc->alive || tree_live(tr))
		tracer_kill(tr);
	timer_stop();
	free(tr->run);
	free(tr->last);
	features_release(tr);
	agent_free(tr);
	sanitizer_free(tr);
	for (size_t i = 0; i < tr->nprocs; i++)
		process_free(tr->procs[i]);
	free(tr->procs);
	tree_free(&tr->tree);
	free(tr->exe);
	free(tr->named);
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

/* A "#!" script: true, its interpreter's path in interp. */
static bool script_interpreter(const char *path, char *interp, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[4096];
	bool ok = fgets(line, sizeof line, f) && line[0] == '#' && line[1] == '!';
	fclose(f);
	if (!ok)
		return false;
	char *p = line + 2;
	p += strspn(p, " \t");
	size_t n = strcspn(p, " \t\r\n");
	if (!n || n >= len)
		return false;
	memcpy(interp, p, n);
	interp[n] = 0;
	return true;
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
	char interp[4096];
	if (script_interpreter(tr->exe, interp, sizeof interp)) {
		/* a script (a wrapper, a runner): the kernel runs its
		 * interpreter, which is what is traced */
		if (elf_check_exec(interp, &is_static, why, sizeof why) < 0) {
			avt_error("cannot trace '%s': its interpreter '%s': %s", tr->exe, interp, why);
			return -1;
		}
		tr->script = true;
		return 0;
	}
	if (elf_check_exec(tr->exe, &is_static, why, sizeof why) < 0) {
		avt_error("cannot trace '%s': %s", tr->exe, why);
		return -1;
	}
	/* what the user named is the code under test, even a packaged
	 * program in /usr/bin or a test in /usr/libexec, when it starts
	 * threads; a script's interpreter is not, nor a single-threaded
	 * runner (sh -c, make, env, timeout: their children are the code) */
	free(tr->named);
	tr->named = NULL;
	if (elf_starts_threads(tr->exe) && !(tr->named = strdup(tr->exe)))
		return -1;
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
	/* --futex: its futex calls stop for avtrace (futex.c); asked for,
	 * so a filter that cannot be installed is a failure to start */
	if (tr->opts.futex && futex_filter_install() < 0)
		goto fail;
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
		if (ptu_wait(tr->proc->pid, &st, __WALL) < 0)
			return -1;
		struct ptu_status s;
		ptu_decode(st, &s);
		if (s.stop == PTU_EXITED || s.stop == PTU_KILLED) {
			int e = 0;
			if (read(errfd, &e, sizeof e) == sizeof e)
				avt_error("cannot run '%s': %s", tr->exe, strerror(e));
			else
				avt_error("'%s' exited before it started", tr->exe);
			tr->proc->alive = false;
			return -1;
		}
		if (s.stop == PTU_EV_EXEC)
			return 0;
		/* the SIGSTOP group-stop and the SIGCONT that ends it: swallow */
		ptu_resume(tr->proc->pid, 0);
	}
}

/* Maps the scratch page by making the target call mmap(2): `syscall; int3`
 * written over its entry point, run, then the bytes and registers put back. */
static int inject_mmap(struct tracer *tr, struct tthread *t, uint64_t entry,
		       struct user_regs_struct *saved)
{
	int kept;
	uint64_t got = remote_mmap(tr->proc->pid, tr->proc->memfd, entry, saved, 0, BPT_SCRATCH_SIZE, 0, &kept);
	tr_keep_signal(t, kept);
	if (!got)
		return -1;
	tr->proc->as.scratch = got;
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
		m->id = tr->proc->as.next_mod_id++;
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
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		announce_module(tr, &tr->proc->as.mods.m[i]);
}

/* dlopen: modules mapped since we last looked get ids, records and
 * their probes planted (dlclose leaves old ones be: ids stay unique). */
void tr_modules_changed(struct tracer *tr)
{
	struct modmap now;
	if (modmap_load(&now, tr->proc->pid) < 0)
		return;
	for (size_t i = 0; i < now.n; i++) {
		struct elfmod *n = &now.m[i];
		bool known = false;
		for (size_t k = 0; k < tr->proc->as.mods.n && !known; k++)
			known = tr->proc->as.mods.m[k].lo == n->lo && !strcmp(tr->proc->as.mods.m[k].path, n->path);
		if (known)
			continue;
		struct elfmod *grown = realloc(tr->proc->as.mods.m, (tr->proc->as.mods.n + 1) * sizeof *grown);
		if (!grown)
			break;
		tr->proc->as.mods.m = grown;
		struct elfmod *m = &tr->proc->as.mods.m[tr->proc->as.mods.n++];
		*m = *n;
		m->path = strdup(n->path);
		aspace_callers_forget(&tr->proc->as);
		announce_module(tr, m);
		features_plant_module(tr, m);
	}
	modmap_release(&now);
}

/* The new image is at its first instruction: stop it at AT_ENTRY, where
 * the dynamic linker has mapped libc, to plant the hooks. */
int exec_begin(struct tracer *tr)
{
	uint64_t entry = auxv_entry(tr->proc->pid);
	features_exec_reset(tr);
	if (tr->proc->memfd >= 0)
		close(tr->proc->memfd);
	tr->proc->memfd = ptu_open_mem(tr->proc->pid);
	bpt_release(&tr->proc->as.bpts);
	bpt_init(&tr->proc->as.bpts, tr->proc->pid, tr->proc->memfd, 0);
	if (!entry || tr->proc->memfd < 0 || bpt_insert_raw(&tr->proc->as.bpts, entry, BK_ENTRY, 0) < 0) {
		avt_error("cannot stop '%s' at its entry point", tr->exe);
		return -1;
	}
	return 0;
}

int exec_at_entry(struct tracer *tr, struct tthread *t, struct bpt *b,
			 struct user_regs_struct *r)
{
	uint64_t entry = b->addr;
	if (bpt_remove(&tr->proc->as.bpts, entry) < 0)
		return -1;
	r->rip = entry;
	if (inject_mmap(tr, t, entry, r) < 0) {
		avt_error("cannot map the scratch page into '%s'", tr->exe);
		return -1;
	}
	bpt_release(&tr->proc->as.bpts);
	bpt_init(&tr->proc->as.bpts, tr->proc->pid, tr->proc->memfd, tr->proc->as.scratch);
	tr->proc->as.tramp = tr->proc->as.scratch;
	if (bpt_insert_raw(&tr->proc->as.bpts, tr->proc->as.tramp, BK_TRAMP, 0) < 0)
		return -1;
	modmap_release(&tr->proc->as.mods);
	aspace_callers_forget(&tr->proc->as);
	if (modmap_load(&tr->proc->as.mods, tr->proc->pid) < 0)
		return -1;
	announce_modules(tr);
	if (features_plant(tr, t) < 0)
		return -1;
	process_set_fs(tr->proc, t, r->fs_base);
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
		if (ptu_resume(tr->proc->pid, sig) != 0 || ptu_wait(tr->proc->pid, &st, __WALL) < 0)
			return -1;
		sig = 0;
		ptu_decode(st, &s);
		if (s.stop == PTU_KILLED) {
			avt_error("'%s' was killed by %s before reaching its entry point (as a shared library run as a program is)",
				  tr->exe, strsignal(s.sig));
			tr->proc->alive = false;
			return -1;
		}
		if (!s.stopped) {
			avt_error("'%s' exited before reaching its entry point", tr->exe);
			tr->proc->alive = false;
			return -1;
		}
		/* a signal on the way (the loader faulted): delivered, or the
		 * faulting instruction runs again for ever */
		if (s.stop == PTU_SIGNAL && s.sig != SIGTRAP && s.sig != SIGSTOP)
			sig = s.sig;
		if (s.stop != PTU_SIGNAL || s.sig != SIGTRAP || ptu_getregs(tr->proc->pid, &r) < 0)
			continue;
		struct bpt *b = bpt_at_trap(&tr->proc->as.bpts, r.rip - 1);
		if (!b || b->kind != BK_ENTRY)
			continue;
		if (exec_at_entry(tr, t, b, &r) < 0 || ptu_setregs(tr->proc->pid, &r) < 0)
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

const char *tracer_program(const struct tracer *tr)
{
	return tr->named;
}

uint32_t tracer_current(const struct tracer *tr)
{
	return tr->current;
}

int tracer_launch(struct tracer *tr)
{
	if (tracer_check(tr) < 0)
		return -1;
	if (sanitizer_prepare(tr) < 0 ||
	    (tr->opts.agent_lib && !tr->agent && agent_prepare(tr) < 0))
		return -1;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	tracer_pin_cpu(tr->opts.cpu);
	fflush(NULL);
	pid_t self = getpid();
	tr->proc->pid = fork();
	if (tr->proc->pid < 0) {
		avt_error("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (tr->proc->pid == 0)
		child_exec(tr, pfd[1], self);
	close(pfd[1]);
	agent_launched(tr);
	tr->proc->alive = true;
	tree_init(tr, tr->proc->pid);
	int st;
	struct ptu_status s;
	if (waitpid(tr->proc->pid, &st, WUNTRACED) < 0 || (ptu_decode(st, &s), !s.stopped)) {
		avt_error("cannot start '%s'", tr->exe);
		close(pfd[0]);
		tr->proc->alive = false;
		return -1;
	}
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
		    PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    (tr->opts.futex ? PTRACE_O_TRACESECCOMP : 0);
	if (ptrace(PTRACE_SEIZE, tr->proc->pid, 0L, opts) < 0) {
		int e = errno;
		kill(tr->proc->pid, SIGKILL);
		waitpid(tr->proc->pid, &st, 0);
		tr->proc->alive = false;
		close(pfd[0]);
		avt_error("cannot trace '%s': ptrace: %s%s", tr->exe, strerror(e),
			  e == EPERM ? ptrace_hint() : "");
		return -1;
	}
	kill(tr->proc->pid, SIGCONT);
	int rc = wait_exec(tr, pfd[0]);
	close(pfd[0]);
	if (rc < 0)
		return -1;
	if (tr->script) { /* the image is its interpreter's */
		char path[64], exe[4096];
		snprintf(path, sizeof path, "/proc/%d/exe", (int)tr->proc->pid);
		ssize_t n = readlink(path, exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = 0;
			free(tr->exe);
			tr->exe = strdup(exe);
		}
	}
	struct tthread *t0 = thread_add(tr, tr->proc->pid, NO_THREAD);
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
	if (!tr->proc->alive && !tree_live(tr))
		return;
	if (tr->proc->alive)
		kill(tr->proc->pid, SIGKILL);
	tree_kill(tr);
	tree_end(tr);
	int st;
	pid_t p;
	timer_stop();
	/* killed tracees still stop at PTRACE_EVENT_EXIT: let each go */
	while ((p = ptu_wait(-1, &st, __WALL)) > 0) {
		struct ptu_status s;
		ptu_decode(st, &s);
		if (s.stopped)
			ptu_resume(p, 0);
		else
			tracer_reaped_feeder(tr, p, &s);
	}
	tree_forget(tr);
	agent_drain(tr, true); /* what the agent committed before the kill */
	tr->proc->alive = false;
}

void tracer_set_stdin(struct tracer *tr, int fd, pid_t feeder)
{
	tr->opts.stdin_fd = fd;
	tr->feeder = feeder;
	tr->feeder_gone = false;
}

bool tracer_feeder_gone(const struct tracer *tr)
{
	return tr->feeder_gone;
}

bool tracer_reaped_feeder(struct tracer *tr, pid_t pid, const struct ptu_status *s)
{
	if (!tr->feeder || pid != tr->feeder || s->stopped)
		return false;
	tr->feeder_gone = true;
	tr->feeder = 0;
	return true;
}

pid_t tracer_pid(const struct tracer *tr)
{
	return tr->proc->pid;
}

int tracer_exit_status(const struct tracer *tr)
{
	return tr->proc->exit_status;
}

int tracer_exit_signal(const struct tracer *tr)
{
	return tr->proc->exit_signal;
}

const struct tracer_stats *tracer_stats(const struct tracer *tr)
{
	return &tr->stats;
}
