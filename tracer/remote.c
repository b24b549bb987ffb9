#include "remote.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_util.h"

int remote_syscall(pid_t tid, int memfd, uint64_t at, const struct user_regs_struct *saved,
		   long nr, const uint64_t arg[6], uint64_t *ret, int *kept_sig)
{
	static const uint8_t code[3] = { 0x0f, 0x05, 0xcc }; /* syscall; int3 */
	uint8_t orig[3];
	struct user_regs_struct r = *saved;
	int later[8], nlater = 0;
	*kept_sig = 0;
	if (ptu_read(tid, at, orig, sizeof orig) < 0 || ptu_write(memfd, at, code, sizeof code) < 0)
		return -1;
	r.rip = at;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = arg[0];
	r.rsi = arg[1];
	r.rdx = arg[2];
	r.r10 = arg[3];
	r.r8 = arg[4];
	r.r9 = arg[5];
	int rc = -1;
	if (ptu_setregs(tid, &r) < 0 || ptu_resume(tid, 0) != 0)
		goto out;
	for (;;) {
		int st;
		struct ptu_status s;
		if (ptu_wait(tid, &st, __WALL) < 0)
			goto out;
		ptu_decode(st, &s);
		if (!s.stopped)
			goto out;
		if (s.stop == PTU_SIGNAL && s.sig == SIGTRAP)
			break;
		if (s.stop == PTU_SIGNAL) { /* kept for later, not delivered into the call */
			if (!*kept_sig)
				*kept_sig = s.sig;
			else if (s.sig != *kept_sig && nlater < 8)
				later[nlater++] = s.sig;
		}
		ptu_resume(tid, 0);
	}
	if (ptu_getregs(tid, &r) < 0)
		r.rax = (uint64_t)-1;
	*ret = r.rax;
	rc = 0;
out:
	if (ptu_write(memfd, at, orig, sizeof orig) < 0 || ptu_setregs(tid, saved) < 0)
		rc = -1;
	for (int i = 0; i < nlater; i++)
		syscall(SYS_tkill, tid, later[i]);
	return rc;
}

uint64_t remote_mmap(pid_t tid, int memfd, uint64_t at, const struct user_regs_struct *saved,
		     uint64_t hint, uint64_t size, int flags, int *kept_sig)
{
	const uint64_t arg[6] = { hint, size, PROT_READ | PROT_EXEC,
				  (uint64_t)(MAP_PRIVATE | MAP_ANONYMOUS | flags), (uint64_t)-1, 0 };
	uint64_t ret;
	if (remote_syscall(tid, memfd, at, saved, SYS_mmap, arg, &ret, kept_sig) < 0)
		return 0;
	if ((int64_t)ret < 0 && (int64_t)ret > -4096)
		return 0;
	return ret;
}
