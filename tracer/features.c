/*
 * The features of the tracer behind one interface (struct tracer_feature,
 * tracer_int.h): the hooks of the synchronization functions (and the heap's),
 * the avtrace.h probes, the target's unwinders, the dynamic linker's
 * notification of dlopen, the --watch watchpoints, the agent's fast path,
 * the access breakpoints.  Each plants itself on a new image (at its entry
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

static void probes_f_reset(struct tracer *tr)
{
	free(tr->as.probes);
	tr->as.probes = NULL;
	tr->as.nprobes = 0;
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
	struct elfmod *ld = modmap_find_name(&tr->as.mods, "ld-linux");
	static const char *const name[] = { "_dl_debug_state" };
	struct elfsym sym;
	int has_symtab;
	uint8_t insn = 0;
	if (!ld || elf_lookup_funcs(ld->path, name, 1, &sym, &has_symtab) != 1 ||
	    ptu_read(tr->pid, ld->bias + sym.value, &insn, 1) < 0)
		return 0;
	if (insn != 0xc3) { /* we emulate exactly a bare ret */
		avt_warn("_dl_debug_state in '%s' is not a bare ret: probes in dlopen()ed libraries are not seen",
			 ld->path);
		return 0;
	}
	bpt_insert_raw(&tr->as.bpts, ld->bias + sym.value, BK_DLDEBUG, 0);
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

static const struct tracer_feature features[] = {
	{ "hooks", hooks_f_plant, NULL, NULL, NULL },
	{ "probes", probes_f_plant, probes_f_plant_module, probes_f_reset, probes_f_reset },
	{ "unwinders", unwinders_f_plant, unwinders_f_plant_module, NULL, NULL },
	{ "dlopen", dl_debug_f_plant, NULL, NULL, NULL },
	{ "watch", watch_f_plant, NULL, NULL, NULL },
	/* the agent first: access stubs call into it (agent_access_entry) */
	{ "agent", agent_f_plant, NULL, agent_exec_reset, NULL },
	{ "access", access_f_plant, access_f_plant_module, NULL, access_release },
};

int features_plant(struct tracer *tr, struct tthread *t)
{
	char why[512];
	for (size_t i = 0; i < sizeof features / sizeof features[0]; i++) {
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
	struct tthread *cur = tr->current < tr->nthr ? tr->thr[tr->current] : NULL;
	for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
		if (features[i].plant_module)
			features[i].plant_module(tr, cur, m);
}

void features_exec_reset(struct tracer *tr)
{
	for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
		if (features[i].exec_reset)
			features[i].exec_reset(tr);
}

void features_release(struct tracer *tr)
{
	for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
		if (features[i].release)
			features[i].release(tr);
}
