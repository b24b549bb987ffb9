/*
 * The thin layer over ptrace(2) and waitpid(2): every wait status is
 * decoded in one place (ptu_decode; ptu_arrive adds what the stop carries:
 * the event message at once, the siginfo on first use, each fetched once),
 * every resume goes through one function (ptu_resume), which turns ESRCH
 * into "thread gone" instead of an error.
 */
#ifndef AVT_TRACER_PTRACE_UTIL_H
#define AVT_TRACER_PTRACE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/user.h>

/* What a waitpid status means, and how that stop must be resumed. */
enum ptu_stop {
	PTU_EXITED,      /* gone (exit code); nothing to resume */
	PTU_KILLED,      /* gone (signal); nothing to resume */
	PTU_SIGNAL,      /* signal-delivery-stop: resume with the signal to deliver it */
	PTU_EV_CLONE,    /* PTRACE_EVENT_CLONE: new thread in msg; resume with 0 */
	PTU_EV_FORK,     /* PTRACE_EVENT_FORK / VFORK: new process in msg; resume with 0 */
	PTU_EV_EXEC,     /* PTRACE_EVENT_EXEC: former tid in msg; resume with 0 */
	PTU_EV_EXIT,     /* PTRACE_EVENT_EXIT: about to exit; resume with 0 */
	PTU_EV_VFORK_DONE, /* PTRACE_EVENT_VFORK_DONE: the vfork child let go
	                    of the memory; resume with 0 */
	PTU_EV_STOP,     /* PTRACE_EVENT_STOP: interrupt, group-stop or new seized
	                    thread; resume with 0 */
	PTU_OTHER,       /* anything else: resume with 0 */
	PTU_EV_SECCOMP,  /* PTRACE_EVENT_SECCOMP: a system call the seccomp
	                    filter sends to the tracer (futex.c), stopped at
	                    its entry; resume with 0 to run it */
};

struct ptu_status {
	enum ptu_stop stop;
	bool stopped;    /* a ptrace stop (the task waits to be resumed) */
	bool vfork;      /* PTU_EV_FORK: by vfork (the child shares our memory) */
	int sig;         /* signal (PTU_SIGNAL, PTU_KILLED; WSTOPSIG of any stop) */
	int code;        /* exit code (PTU_EXITED) */
	/* filled by ptu_arrive: */
	pid_t pid;
	unsigned long msg;   /* event message (clone, fork: the new tid; exec:
	                        the former tid; exit: the exit status) */
	bool si_fetched, si_ok;
	siginfo_t si;        /* ptu_siginfo() */
};

/* Decodes a waitpid status (pure: no system call). */
void ptu_decode(int wstatus, struct ptu_status *out);
/* A stop of pid arrived with status wstatus: decodes it and fetches the
 * event message of an event stop (clone, fork, exec, exit). */
void ptu_arrive(pid_t pid, int wstatus, struct ptu_status *out);
/* The siginfo of the stop s (fetched on first use, once); NULL when the
 * kernel gives none. */
const siginfo_t *ptu_siginfo(struct ptu_status *s);
const char *ptu_stop_name(enum ptu_stop s);

/* The one resume: continue tid, delivering sig (0 for none).  Returns 0,
 * 1 when the thread is already gone (ESRCH: not an error to callers), or
 * -1 with errno set. */
int ptu_resume(pid_t tid, int sig);
int ptu_interrupt(pid_t tid);
/* waitpid() that retries when the supervisor's tick interrupts it. */
pid_t ptu_wait(pid_t pid, int *status, int flags);

int ptu_getregs(pid_t tid, struct user_regs_struct *r);
int ptu_setregs(pid_t tid, const struct user_regs_struct *r);

/* Memory of a traced process.  Reads use process_vm_readv (fast); writes
 * go through /proc/PID/mem so that read-only text can be patched
 * (copy-on-write, private to the target). */
int ptu_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ptu_write(int memfd, uint64_t addr, const void *buf, size_t len);
int ptu_read_u64(pid_t pid, uint64_t addr, uint64_t *out);
int ptu_open_mem(pid_t pid);

/* Kernel scheduling state of a thread from /proc/PID/task/TID/stat
 * ('R', 'S', 'D', 't', ...), or 0 when it cannot be read. */
char ptu_thread_state(pid_t pid, pid_t tid);
/* A signal mask of the process from /proc/PID/status, field "SigCgt"
 * (caught), "SigIgn" (ignored), ...: bit sig-1 for signal sig; 0 when it
 * cannot be read. */
uint64_t ptu_signal_mask(pid_t pid, const char *field);
/* Whether the thread is in a futex wait that only the process's own
 * threads can end: private, no timeout (/proc/PID/task/TID/syscall). */
bool ptu_thread_futex_untimed(pid_t pid, pid_t tid);
/* Nanoseconds the thread has spent on a CPU (schedstat); 0 if unknown. */
uint64_t ptu_thread_cpu_ns(pid_t pid, pid_t tid);

#endif
