#include "ptrace_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

void ptu_decode(int st, struct ptu_status *out)
{
	memset(out, 0, sizeof *out);
	if (WIFEXITED(st)) {
		out->stop = PTU_EXITED;
		out->code = WEXITSTATUS(st);
		return;
	}
	if (WIFSIGNALED(st)) {
		out->stop = PTU_KILLED;
		out->sig = WTERMSIG(st);
		return;
	}
	if (!WIFSTOPPED(st)) {
		out->stop = PTU_OTHER;
		return;
	}
	out->stopped = true;
	out->sig = WSTOPSIG(st);
	switch (st >> 16) {
	case 0:
		out->stop = PTU_SIGNAL;
		return;
	case PTRACE_EVENT_CLONE:
		out->stop = PTU_EV_CLONE;
		return;
	case PTRACE_EVENT_VFORK:
		out->vfork = true;
		/* fall through */
	case PTRACE_EVENT_FORK:
		out->stop = PTU_EV_FORK;
		return;
	case PTRACE_EVENT_EXEC:
		out->stop = PTU_EV_EXEC;
		return;
	case PTRACE_EVENT_EXIT:
		out->stop = PTU_EV_EXIT;
		return;
	case PTRACE_EVENT_VFORK_DONE:
		out->stop = PTU_EV_VFORK_DONE;
		return;
	case PTRACE_EVENT_STOP:
		out->stop = PTU_EV_STOP;
		return;
	case PTRACE_EVENT_SECCOMP:
		out->stop = PTU_EV_SECCOMP;
		return;
	default:
		out->stop = PTU_OTHER;
		return;
	}
}

void ptu_arrive(pid_t pid, int st, struct ptu_status *out)
{
	ptu_decode(st, out);
	out->pid = pid;
	switch (out->stop) {
	case PTU_EV_CLONE:
	case PTU_EV_FORK:
	case PTU_EV_EXEC:
	case PTU_EV_EXIT:
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0L, &out->msg) < 0)
			out->msg = 0;
		break;
	default:
		break;
	}
}

const siginfo_t *ptu_siginfo(struct ptu_status *s)
{
	if (!s->si_fetched) {
		s->si_fetched = true;
		memset(&s->si, 0, sizeof s->si);
		s->si_ok = ptrace(PTRACE_GETSIGINFO, s->pid, 0L, &s->si) == 0;
	}
	return s->si_ok ? &s->si : NULL;
}

const char *ptu_stop_name(enum ptu_stop s)
{
	static const char *const names[] = {
		"exited", "killed", "signal", "clone", "fork", "exec", "exit", "vfork-done", "stop", "other",
		"seccomp",
	};
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

int ptu_resume(pid_t tid, int sig)
{
	if (ptrace(PTRACE_CONT, tid, 0L, (long)sig) == 0)
		return 0;
	return errno == ESRCH ? 1 : -1;
}

int ptu_interrupt(pid_t tid)
{
	return ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0 ? -1 : 0;
}

pid_t ptu_wait(pid_t pid, int *status, int flags)
{
	pid_t p;
	while ((p = waitpid(pid, status, flags)) < 0 && errno == EINTR)
		;
	return p;
}

int ptu_getregs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0L, r) < 0 ? -1 : 0;
}

int ptu_setregs(pid_t tid, const struct user_regs_struct *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0L, r) < 0 ? -1 : 0;
}

int ptu_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	/* process_vm_readv refuses pages without read permission; ptrace's
	 * forced access does not. */
	for (size_t i = 0; i < len; i += sizeof(long)) {
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)(addr + i), 0L);
		if (errno)
			return -1;
		memcpy((char *)buf + i, &w, len - i < sizeof w ? len - i : sizeof w);
	}
	return 0;
}

int ptu_read_u64(pid_t pid, uint64_t addr, uint64_t *out)
{
	return ptu_read(pid, addr, out, sizeof *out);
}

int ptu_open_mem(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

int ptu_write(int memfd, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(memfd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -1;
}

/* Reads /proc/PID/task/TID/NAME into buf (NUL-terminated); its length,
 * or -1. */
static ssize_t read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

uint64_t ptu_thread_cpu_ns(pid_t pid, pid_t tid)
{
	char buf[128];
	return read_task_file(pid, tid, "schedstat", buf, sizeof buf) < 0 ? 0 : strtoull(buf, NULL, 10);
}

bool ptu_thread_futex_untimed(pid_t pid, pid_t tid)
{
	char buf[256];
	if (read_task_file(pid, tid, "syscall", buf, sizeof buf) < 0)
		return false;
	/* "NR arg0 ... arg5 sp pc" while in a system call */
	char *p = buf, *end;
	unsigned long long v[4];
	for (int i = 0; i < 4; i++) {
		v[i] = strtoull(p, &end, 0);
		if (end == p)
			return false;
		p = end;
	}
	unsigned cmd = (unsigned)v[2] & ~(unsigned)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
	return v[0] == SYS_futex && (v[2] & FUTEX_PRIVATE_FLAG) &&
	       (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) && strtoull(p, NULL, 0) == 0;
}

char ptu_thread_state(pid_t pid, pid_t tid)
{
	char buf[512];
	if (read_task_file(pid, tid, "stat", buf, sizeof buf) < 0)
		return 0;
	/* comm may contain spaces and parentheses: the state follows the last ')' */
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

uint64_t ptu_signal_mask(pid_t pid, const char *field)
{
	char path[64], line[256];
	uint64_t mask = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = strlen(field);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':')
			mask = strtoull(line + n + 1, NULL, 16);
	fclose(f);
	return mask;
}
