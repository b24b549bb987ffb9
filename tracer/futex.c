/*
 * Futex operations as events (the "futex" feature, features.c), opt-in:
 * --futex (tracer_opts.futex, meta.json "futex"); without it nothing here
 * runs and the program gets no filter.
 *
 * A seccomp filter, installed in the target before its exec
 * (futex_filter_install), sends every futex(2) and futex_waitv(2) call to
 * the tracer (PTRACE_EVENT_SECCOMP, the thread stopped at the call's
 * entry); every other system call runs at full speed, and so do the
 * agent's own waits and wakes of its run token (AVT_AGENT_FUTEX_MARK).
 * The filter is inherited by every process the program starts and cannot
 * be removed: a task with no tracer taking PTRACE_EVENT_SECCOMP gets
 * ENOSYS from futex (the kernel's SECCOMP_RET_TRACE), which glibc's locks
 * abort on.  So every process of the tree stays traced to its end (tree.c:
 * the light ones take the event too, each let go at once; all die with
 * avtrace, PTRACE_O_EXITKILL); docs/futex.md says where it still happens.  A futex call the
 * program makes itself (a hand-written lock, GLib, C++ atomic wait) becomes
 * a request on its futex word: the scheduler commits it when it decides,
 * emitting futex_wait or futex_wake.  Calls libc makes for itself, or
 * from inside a hooked pthread function, are no events: they stay what
 * they were (the hooks model those locks already).
 *
 * A wait the kernel would put to sleep (the word still holds the value it
 * waits on) can only be committed when no other thread can run; once
 * asleep it is set aside as a kernel waiter (TW_FUTEX, or TW_TIMED with a
 * timeout) until a wake on its word marks it woken.
 */
#include <errno.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrace_util.h"
#include "trace/agent_proto.h"
#include "tracer_int.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

/* The kernel's restart codes: a wait interrupted by a stop returns one and
 * runs again when resumed (ERESTART_RESTARTBLOCK through restart_syscall,
 * which the filter does not see; the others re-execute the call itself). */
#define K_ERESTARTSYS 512
#define K_ERESTARTNOINTR 513
#define K_ERESTARTNOHAND 514
#define K_ERESTART_RESTARTBLOCK 516

/* The low 32 bits of system call argument k (x86-64 is little-endian). */
#define ARG_LO(k) (offsetof(struct seccomp_data, args) + 8 * (k))

int futex_filter_install(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 8),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex_waitv, 7, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 5),
		/* the agent's token: a WAIT or WAKE (which ignore val3) with
		 * its mark in val3 runs on */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(5)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AVT_AGENT_FUTEX_MARK, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, FUTEX_CMD_MASK),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, FUTEX_WAKE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	};
	struct sock_fprog prog = { sizeof code / sizeof code[0], code };
	/* as root no no_new_privs is needed, and a set-user-ID program the
	 * target runs keeps its meaning */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : -1;
}

enum futex_class futex_classify(long nr, unsigned op)
{
	if (nr == SYS_futex_waitv)
		return FC_WAIT;
	if (nr != SYS_futex)
		return FC_NONE;
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_WAIT_REQUEUE_PI:
		return FC_WAIT;
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_TRYLOCK_PI:
		return FC_LOCK_PI;
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
	case FUTEX_WAKE_OP:
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
	case FUTEX_CMP_REQUEUE_PI:
	case FUTEX_UNLOCK_PI:
		return FC_WAKE;
	default:
		return FC_NONE;
	}
}

/* Inside a hooked call (a pthread function's own futex)?  The --stacks
 * frames are the program's functions, not hooked calls. */
static bool in_hooked_call(const struct tthread *t)
{
	for (int k = 0; k < t->priv->nrets; k++)
		if (t->priv->rets[k].hook >= 0)
			return true;
	return false;
}

/* Is a call from addr libc's or the dynamic linker's?  (The agent's own
 * never stop: the filter lets them run.) */
static bool internal_at(struct tracer *tr, uint64_t addr)
{
	const struct aspace *as = &tr->proc->as;
	/* (the libraries hooks.c takes for libc's own; not through hooks.c,
	 * which is above the lock model, and the model asks this file) */
	struct elfmod *m = modmap_find(&as->mods, addr);
	if (!m || !strcmp(m->path, tr->exe))
		return false;
	const char *b = strrchr(m->path, '/');
	b = b ? b + 1 : m->path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-linux", 8) ||
	       !strncmp(b, "libpthread", 10);
}

/* Is the call at r the program's own?  *site: where it was made from (the
 * caller of libc's syscall(), or the system call instruction itself,
 * *exact then). */
static bool program_call(struct tracer *tr, const struct user_regs_struct *r, uint64_t *site,
			 bool *exact)
{
	const struct aspace *as = &tr->proc->as;
	uint64_t pc = r->rip - 2; /* the syscall instruction */
	*exact = false;
	if (as->syscall_fn && pc >= as->syscall_fn && pc < as->syscall_fn + as->syscall_fn_size) {
		/* syscall() has no frame of its own: its return address is on top */
		if (ptu_read_u64(tr->proc->pid, r->rsp, site) < 0)
			return false;
		return !internal_at(tr, *site);
	}
	*site = pc;
	*exact = true;
	return !internal_at(tr, pc);
}

/* The futex word and value of a wait request: futex_waitv's first waiter
 * (struct futex_waitv: val, uaddr, flags) stands for all of them. */
static void wait_word(struct tracer *tr, const struct user_regs_struct *r, uint64_t *word,
		      uint64_t *val)
{
	*word = r->rdi;
	*val = (uint32_t)r->rdx;
	if (r->orig_rax == SYS_futex_waitv) {
		uint64_t w[2] = { 0, 0 };
		if (ptu_read(tr->proc->pid, r->rdi, w, sizeof w) == 0) {
			*val = (uint32_t)w[0];
			*word = w[1];
		}
	}
}

static void fill_request(struct tracer *tr, struct tthread *t, const struct user_regs_struct *r,
			 enum futex_class c, uint64_t site, bool exact)
{
	struct treq *q = &t->req;
	memset(q, 0, sizeof *q);
	q->hook = HK_FUTEX;
	q->site = site;
	/* the futex op; futex_waitv has none: 127, no op of futex's */
	q->size = r->orig_rax == SYS_futex ? (uint16_t)r->rsi : 127;
	t->priv->fx.exact = exact;
	if (c == FC_WAKE) {
		q->kind = AVT_EV_FUTEX_WAKE;
		q->obj = r->rdi;
		/* how many it may wake (CMP_REQUEUE_PI and UNLOCK_PI: one) */
		unsigned cmd = (unsigned)r->rsi & FUTEX_CMD_MASK;
		q->obj2 = cmd == FUTEX_UNLOCK_PI || cmd == FUTEX_CMP_REQUEUE_PI ? 1 : (uint32_t)r->rdx;
		/* a second word: requeue's target, wake_op's other (r10: how
		 * many move there, or wake there) */
		bool two = cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE ||
			   cmd == FUTEX_CMP_REQUEUE_PI || cmd == FUTEX_WAKE_OP;
		t->priv->fx.word2 = two ? r->r8 : 0;
		t->priv->fx.n2 = two ? (uint32_t)r->r10 : 0;
	} else {
		q->kind = AVT_EV_FUTEX_WAIT;
		wait_word(tr, r, &q->obj, &q->obj2);
		t->priv->fx.cls = c;
		t->priv->fx.timed = r->r10 != 0;
	}
}

/* A futex call's entry (the seccomp stop): the program's own is a request
 * at the call, remembered where it stands (it resumes into the call). */
bool futex_on_seccomp(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			    struct next *n)
{
	(void)s;
	struct user_regs_struct r;
	if (!tr->opts.futex)
		return false;
	tr->stats.futex_stops++; /* --futex's cost: one ptrace stop each */
	*n = nx(NX_LET_GO); /* no event: as if it had not stopped */
	/* the process is going: nothing more happens (drain_exit) */
	if (tr->exiting || tr->fatal_sig || ptu_getregs(t->tid, &r) < 0)
		return true;
	enum futex_class c = futex_classify((long)r.orig_rax, (unsigned)r.rsi);
	if (t->priv->fx.restart) {
		/* the wait it was interrupted in, run again: no new event; a
		 * wake it had is spent (it goes back to sleep if the word still
		 * says so) */
		t->priv->fx.restart = false;
		t->woken = false;
		return true;
	}
	uint64_t site;
	bool exact;
	if (c == FC_NONE || in_hooked_call(t) || !program_call(tr, &r, &site, &exact))
		return true;
	fill_request(tr, t, &r, c, site, exact);
	t->priv->resume_pc = r.rip; /* it stands where it goes on */
	t->priv->stop_pc = 0;
	t->priv->regs = r;
	t->priv->regs_valid = true;
	t->priv->stop_rip = r.rip;
	*n = nx_stop(TS_REQ);
	return true;
}

void futex_exec_reset(struct tracer *tr)
{
	tr->proc->as.syscall_fn = tr->proc->as.syscall_fn_size = 0;
}

/* libc's syscall(): a futex made through it is its caller's. */
int futex_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t, (void)why, (void)len;
	futex_exec_reset(tr);
	if (!tr->opts.futex)
		return 0;
	struct elfmod *libc = modmap_find_name(&tr->proc->as.mods, "libc.so");
	static const char *const name[] = { "syscall" };
	struct elfsym sym;
	int has_symtab;
	if (libc && elf_lookup_funcs(libc->path, name, 1, &sym, &has_symtab) == 1 && sym.value) {
		tr->proc->as.syscall_fn = libc->bias + sym.value;
		tr->proc->as.syscall_fn_size = sym.size;
	}
	return 0;
}

/* The oldest waiter on word not woken yet, or NULL. */
static struct tthread *oldest_waiter(struct tracer *tr, uint64_t word)
{
	struct tthread *best = NULL;
	for (size_t i = 0; i < tr->proc->nthr; i++) {
		struct tthread *o = tr->proc->thr[i];
		if (o && o->state != TS_DEAD && o->wait == TW_FUTEX && o->priv->fx.in_wait &&
		    o->wait_obj == word && !o->woken && (!best || o->wait_seq < best->wait_seq))
			best = o;
	}
	return best;
}

/* Wakes up to n waiters on word (oldest first, as the kernel's queue of
 * equal priorities), then moves up to nmove others to word2. */
static void wake_word(struct tracer *tr, uint64_t word, uint64_t n, uint64_t word2, uint64_t nmove)
{
	struct tthread *o;
	for (uint64_t k = 0; k < n && (o = oldest_waiter(tr, word)); k++)
		o->woken = true;
	for (uint64_t k = 0; word2 && k < nmove && (o = oldest_waiter(tr, word)); k++)
		o->wait_obj = word2;
}

void futex_commit(struct tracer *tr, struct tthread *t)
{
	struct treq *q = &t->req;
	struct tracer_priv_thread *p = t->priv;
	tr_emit(tr, t, q->kind, q->obj, q->obj2, q->site, p->fx.exact ? AVT_F_SITE_EXACT : 0, q->size);
	if (q->kind == AVT_EV_FUTEX_WAKE) {
		unsigned cmd = q->size & FUTEX_CMD_MASK;
		if (cmd == FUTEX_WAKE_OP) {
			/* the second word's wake is conditional: waking too many
			 * is safe (a woken waiter goes back to sleep) */
			wake_word(tr, q->obj, q->obj2, 0, 0);
			wake_word(tr, p->fx.word2, p->fx.n2, 0, 0);
		} else {
			wake_word(tr, q->obj, q->obj2, p->fx.word2, p->fx.n2);
		}
		return;
	}
	if (!model_futex_sleeps(tr, t))
		return; /* the word changed: it returns at once (EAGAIN) */
	t->wait = TW_FUTEX;
	t->wait_obj = q->obj;
	t->woken = false;
	t->wait_seq = ++tr->wait_seq;
	p->expect_block = true;
	p->fx.in_wait = true;
	p->fx.restart = false;
}

void futex_wait_over(struct tthread *t)
{
	struct tracer_priv_thread *p = t->priv;
	if (!p->fx.in_wait)
		return;
	if (t->wait == TW_FUTEX)
		t->wait = TW_NONE;
	p->expect_block = false;
	p->fx.in_wait = p->fx.restart = false;
}

void futex_stopped(struct tracer *tr, struct tthread *t)
{
	(void)tr;
	struct user_regs_struct r;
	if (!t->priv->fx.in_wait || ptu_getregs(t->tid, &r) < 0)
		return;
	long rv = -(long)r.rax;
	bool inside = futex_classify((long)r.orig_rax, (unsigned)r.rsi) != FC_NONE &&
		      (rv == K_ERESTARTSYS || rv == K_ERESTARTNOINTR || rv == K_ERESTARTNOHAND ||
		       rv == K_ERESTART_RESTARTBLOCK);
	if (!inside) {
		futex_wait_over(t); /* it came back and ran on */
		return;
	}
	/* asleep in it again: a wake it had is spent; it runs the call
	 * again when resumed (restart_syscall for a timed one, unseen) */
	t->woken = false;
	t->priv->fx.restart = rv != K_ERESTART_RESTARTBLOCK;
}
