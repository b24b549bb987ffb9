/*
 * The one remote-system-call injector: a stopped thread of the target is
 * made to run one system call (`syscall; int3` written at a given address,
 * its registers set, run to the int3, everything put back).  A signal that
 * arrives meanwhile is kept, for the caller to deliver at the thread's next
 * resume, never dropped.  Built on ptrace_util.c alone.
 */
#ifndef AVT_TRACER_REMOTE_H
#define AVT_TRACER_REMOTE_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* Runs system call nr(arg[0..5]) in thread tid, stopped, whose registers
 * are *saved: the code goes at `at` (its bytes are put back after), then
 * *saved is restored.  *ret: the call's return value (a -errno too).
 * *kept_sig: a signal that stopped the thread meanwhile (0: none); more
 * than one is queued again to the thread (tgkill) to stop it once more.
 * Returns 0, or -1 when the thread could not be made to run it. */
int remote_syscall(pid_t tid, int memfd, uint64_t at, const struct user_regs_struct *saved,
		   long nr, const uint64_t arg[6], uint64_t *ret, int *kept_sig);

/* mmap(hint, size, r-x, MAP_PRIVATE | MAP_ANONYMOUS | flags) through
 * remote_syscall: the address, or 0. */
uint64_t remote_mmap(pid_t tid, int memfd, uint64_t at, const struct user_regs_struct *saved,
		     uint64_t hint, uint64_t size, int flags, int *kept_sig);

#endif
