/*
 * The features of the tracer behind one interface (struct tracer_feature,
 * tracer_int.h): the hooks of the synchronization functions (and the heap's),
 * the avtrace.h probes, the target's unwinders, the dynamic linker's
 * notification of dlopen, the --watch watchpoints, the agent's fast path,
 * the access breakpoints, the program's own futex calls (--futex: seccomp
 * stops, on_seccomp), the leak check of an ASan build exec'd with an
 * environment of the program's (sanexec.c).  Each plants itself on a new image (at its entry
 * point), on a module mapped later, forgets an old image at exec, and is
 * released with the session; the launch code (tracer.c) goes through this
 * table alone, in its order: the agent before the access breakpoints,
 * whose stubs call into it; the probes before them too, as a program with
 * probes gets none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace_util.h"
#include "trace/log.h"
#include "tracer_int.h"

static int hooks_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t;
	return hooks_plant(tr, why, len);
}

static void hooks_f_plant_module(struct tracer *tr, struct tthread *cur, const struct elfmod *m)
{
	(void)cur;
	bool heap = tr->proc->as.heap_hooked;
	hooks_plant_module(tr, m);
	/* the heap's hooks planted late (the user's code dlopen()ed into a
	 * process of system code alone): the agent's heap path from now on.
	 * Here, not in hooks.c: agent.c already calls into hooks.c */
	if (!heap && tr->proc->as.heap_hooked)
		agent_publish_heap(tr);
	agent_publish_glib(tr); /* GLib's spec may have come with m */
}

static void probes_f_reset(struct tracer *tr)
{
	free(tr->proc->as.probes);
	tr->proc->as.probes = NULL;
	tr->proc->as.nprobes = 0;
}

static int probes_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t, (void)why, (void)len;
	probes_f_reset(tr);
	probes_plant(tr);
	return 0;
}

static void probes_f_plant_module(struct tracer *tr, struct tthread *cur, const struct elfmod *m)
{
	(void)cur;
	probes_plant_module(tr, m);
}

static int unwinders_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t, (void)why, (void)len;
	unwinders_plant(tr);
	return 0;
}

static void unwinders_f_plant_module(struct tracer *tr, struct tthread *cur,
				     const struct elfmod *m)
{
	(void)cur;
	unwinders_plant_module(tr, m);
}

/* Libraries dlopen()ed later may carry probes: stop at the dynamic
 * linker's _dl_debug_state, which it calls after every link-map change. */
static int dl_debug_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t, (void)why, (void)len;
	struct elfmod *ld = modmap_find_name(&tr->proc->as.mods, "ld-linux");
	static const char *const name[] = { "_dl_debug_state" };
	struct elfsym sym;
	int has_symtab;
	uint8_t insn = 0;
	if (!ld || elf_lookup_funcs(ld->path, name, 1, &sym, &has_symtab) != 1 ||
	    ptu_read(tr->proc->pid, ld->bias + sym.value, &insn, 1) < 0)
		return 0;
	if (insn != 0xc3) { /* we emulate exactly a bare ret */
		avt_warn("_dl_debug_state in '%s' is not a bare ret: probes in dlopen()ed libraries are not seen",
			 ld->path);
		return 0;
	}
	bpt_insert_raw(&tr->proc->as.bpts, ld->bias + sym.value, BK_DLDEBUG, 0);
	return 0;
}

static int watch_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	if (watch_setup(tr, why, len) < 0)
		return -1;
	if (watch_arm_thread(tr, t->tid) < 0) {
		snprintf(why, len, "cannot set the debug registers for --watch: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int agent_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t, (void)why, (void)len;
	agent_publish(tr);
	return 0;
}

static int access_f_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)why, (void)len;
	access_plant(tr, t->tid);
	return 0;
}

static void access_f_plant_module(struct tracer *tr, struct tthread *cur, const struct elfmod *m)
{
	if (cur)
		access_plant_module(tr, cur->tid, m);
}

/* ---- hits: each feature's decision for a thread at one of its breakpoints */

struct next nx_request(struct tthread *t, const struct bpt *b, const struct user_regs_struct *r,
		       const struct user_regs_struct *now)
{
	t->priv->resume_pc = bpt_resume_pc(b);
	t->priv->stop_pc = b->addr;
	t->priv->regs = *r;
	t->priv->regs_valid = true;
	if (now)
		t->priv->stop_rip = now->rip;
	return nx_stop(TS_REQ);
}

/* A hooked function's entry (a request, or a heap call recorded on the
 * way), or the return trampoline. */
static struct next hooks_f_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
			       struct user_regs_struct *r, const struct user_regs_struct *now)
{
	if (b->kind == BK_TRAMP) {
		int rc = hooks_return(tr, t, r);
		if (rc < 0) {
			avt_error("T%u returned through the trampoline with no call pending", t->lid);
			return nx(NX_ERROR);
		}
		if (rc == 1) /* a heap call: carry on */
			return nx_regs(nx(NX_RESUME), r);
		return nx_regs(nx_stop(TS_READY), r);
	}
	if (hooks_transparent(b->data))
		hooks_heap_entry(tr, t, b->data, r);
	else if (hooks_request(tr, t, b->data, r))
		return nx_request(t, b, r, now);
	r->rip = bpt_resume_pc(b);
	return nx_regs_changed(r, now);
}

static struct next probes_f_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
				struct user_regs_struct *r, const struct user_regs_struct *now)
{
	probes_request(tr, t, &tr->proc->as.probes[b->data], r);
	return nx_request(t, b, r, now);
}

/* An unwinder's entry: a forced unwind out of a condition wait makes the
 * mutex's re-acquisition its request; any other goes on. */
static struct next unwinders_f_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
				   struct user_regs_struct *r, const struct user_regs_struct *now)
{
	(void)now;
	bool cancelled_wait = hooks_cancel_wait(tr, t);
	stack_unwinding(tr, t);
	if (cancelled_wait) /* the mutex comes back first: a request */
		return nx_request(t, b, r, NULL);
	r->rip = bpt_resume_pc(b);
	return nx_regs(nx(NX_RESUME), r);
}

/* _dl_debug_state, a bare ret: emulated, after a look at the new modules. */
static struct next dl_debug_f_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
				  struct user_regs_struct *r, const struct user_regs_struct *now)
{
	(void)t, (void)b, (void)now;
	uint64_t ret;
	if (ptu_read_u64(tr->proc->pid, r->rsp, &ret) == 0) {
		r->rip = ret;
		r->rsp += 8;
	}
	struct next n = nx_regs(nx(NX_RESUME), r);
	n.modules_changed = true; /* the loop looks (tracer.c): no call up from here */
	return n;
}

static bool watch_f_stray(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			  const struct user_regs_struct *r, struct next *n)
{
	if (!watch_trap(tr, t, s, r))
		return false;
	*n = nx_stop(TS_READY); /* after the access: a scheduling point */
	return true;
}

static struct next access_f_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
				struct user_regs_struct *r, const struct user_regs_struct *now)
{
	if (!access_request(tr, t, b, r))
		return nx_request(t, b, r, now);
	/* an access to its own frames: no scheduling point */
	t->priv->regs = *r;
	access_commit(tr, t);
	struct user_regs_struct go = *r;
	go.rip = bpt_resume_pc(b);
	return now ? nx_regs_changed(&go, now) : nx_regs(nx(NX_RESUME), &go);
}

#define BIT(k) (1u << (k))

static const struct tracer_feature features[] = {
	{ .name = "hooks", .plant = hooks_f_plant, .plant_module = hooks_f_plant_module,
	  .on_hit = hooks_f_hit, .kinds = BIT(BK_HOOK) | BIT(BK_TRAMP) },
	{ .name = "probes", .plant = probes_f_plant, .plant_module = probes_f_plant_module,
	  .exec_reset = probes_f_reset, .release = probes_f_reset,
	  .on_hit = probes_f_hit, .kinds = BIT(BK_PROBE) },
	{ .name = "unwinders", .plant = unwinders_f_plant, .plant_module = unwinders_f_plant_module,
	  .on_hit = unwinders_f_hit, .kinds = BIT(BK_UNWIND) },
	{ .name = "dlopen", .plant = dl_debug_f_plant,
	  .on_hit = dl_debug_f_hit, .kinds = BIT(BK_DLDEBUG) },
	{ .name = "watch", .plant = watch_f_plant, .on_stray_trap = watch_f_stray },
	/* the agent first: access stubs call into it (agent_access_entry) */
	{ .name = "agent", .plant = agent_f_plant, .exec_reset = agent_exec_reset },
	{ .name = "access", .plant = access_f_plant, .plant_module = access_f_plant_module,
	  .release = access_release, .on_hit = access_f_hit, .kinds = BIT(BK_ACCESS) },
	{ .name = "futex", .plant = futex_plant, .exec_reset = futex_exec_reset,
	  .on_seccomp = futex_on_seccomp },
	{ .name = "sanexec", .plant = sanexec_plant, .on_hit = sanexec_hit,
	  .kinds = BIT(BK_EXECVE) },
};

#define NFEATURES (sizeof features / sizeof features[0])

struct next features_on_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
			    struct user_regs_struct *r, const struct user_regs_struct *now)
{
	for (size_t i = 0; i < NFEATURES; i++)
		if (features[i].on_hit && (features[i].kinds & BIT(b->kind)))
			return features[i].on_hit(tr, t, b, r, now);
	return nx(NX_ERROR);
}

bool features_on_stray_trap(struct tracer *tr, struct tthread *t, struct ptu_status *s,
			    const struct user_regs_struct *r, struct next *n)
{
	for (size_t i = 0; i < NFEATURES; i++)
		if (features[i].on_stray_trap && features[i].on_stray_trap(tr, t, s, r, n))
			return true;
	return false;
}

struct next features_on_seccomp(struct tracer *tr, struct tthread *t, struct ptu_status *s)
{
	struct next n;
	for (size_t i = 0; i < NFEATURES; i++)
		if (features[i].on_seccomp && features[i].on_seccomp(tr, t, s, &n))
			return n;
	return nx(NX_LET_GO);
}

int features_plant(struct tracer *tr, struct tthread *t)
{
	char why[512];
	for (size_t i = 0; i < NFEATURES; i++) {
		if (!features[i].plant)
			continue;
		why[0] = 0;
		if (features[i].plant(tr, t, why, sizeof why) < 0) {
			avt_error("%s", why);
			return -1;
		}
	}
	return 0;
}

void features_plant_module(struct tracer *tr, const struct elfmod *m)
{
	struct tthread *cur = tr->current < tr->proc->nthr ? tr->proc->thr[tr->current] : NULL;
	for (size_t i = 0; i < NFEATURES; i++)
		if (features[i].plant_module)
			features[i].plant_module(tr, cur, m);
}

void features_exec_reset(struct tracer *tr)
{
	for (size_t i = 0; i < NFEATURES; i++)
		if (features[i].exec_reset)
			features[i].exec_reset(tr);
}

void features_release(struct tracer *tr)
{
	for (size_t i = 0; i < NFEATURES; i++)
		if (features[i].release)
			features[i].release(tr);
}
