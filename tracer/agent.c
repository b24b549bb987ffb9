/*
 * The supervisor's side of the in-process agent (docs/agent.md,
 * trace/agent_proto.h, agent/avtrace_agent.c).
 *
 * With tracer_opts.agent_lib set, the tracer creates the shared region
 * (a memfd the target inherits), starts the target with the agent in
 * LD_PRELOAD and the descriptor in AVTRACE_AGENT_FD, publishes the
 * unhooked entry points at each image's entry stop, and drains the ring
 * at every ptrace stop: each record becomes the event the ptrace hook
 * would have emitted at that point (hooks_acquire / hooks_release, the
 * same caller filter), so sequence numbers, per-thread indexes, sites and
 * the lock model are exactly those of the ptrace path.  Threads are still
 * serialized by ptrace: one runs at a time, so the ring's order is the
 * order the operations took effect.
 *
 * Ownership: struct agent belongs to struct tracer (tr->agent) and owns
 * its mapping and the environment it built.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrace_util.h"
#include "tracer_int.h"
#include "trace/agent_proto.h"

/* Preemptions put off because the thread was inside a fast path, in a
 * row, before one is taken anyway (a signal handler that longjmp()ed out
 * of a hook would otherwise leave the thread unpreemptible). */
#define MAX_DEFERRALS 200

_Static_assert(TRACER_EXPECT_EXTRAS == AVT_EXPECT_EXTRAS, "one flag, two names");

/* Threads a hand-over script may name besides the one granted. */
#define AGENT_MAX_PARTS 16

/* The memfd's lowest descriptor number in the target (see agent_prepare). */
#define AGENT_FD_MIN 100

struct agent {
	struct avt_agent_hdr *hdr;
	size_t len;
	int fd;              /* the memfd until the target has it */
	char **envp;         /* the target's environment */
	unsigned deferrals;
	uint64_t deferred, forced; /* preemptions put off; taken after MAX_DEFERRALS */
	uint64_t foreign;    /* records of tids not in the traced process */
	bool active;         /* this image's fast path is on (agent_publish) */
	bool expect_set;     /* the sink's allow() set expectations */
	uint32_t nsites;     /* access-site table entries in use */
	const struct tthread *granting; /* in agent_grant: the thread granted */
	struct tthread *parts[AGENT_MAX_PARTS]; /* a script's other threads */
	size_t nparts;       /* set by the sink's expectations */
	bool script;         /* a script is on (agent_script_end ends it) */
	int park_hook[2];    /* hook indexes of pthread_mutex_lock, _unlock */
	bool park_hooks;     /* park_hook[] looked up */
};

const char *tracer_agent_lib_default(void)
{
	static char found[PATH_MAX];
	const char *env = getenv("AVTRACE_AGENT_LIB");
	if (env && *env)
		return env;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	/* the build tree (next to avtrace), then an installed tree */
	static const char *const rel[] = { "/libavtrace-agent.so", "/../lib/avtrace/libavtrace-agent.so" };
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char path[4200];
		snprintf(path, sizeof path, "%s%s", self, rel[i]);
		if (access(path, R_OK) == 0 && realpath(path, found))
			return found;
	}
	return NULL;
}

static char *envstr(const char *name, const char *a, const char *sep, const char *b)
{
	size_t len = strlen(name) + 1 + strlen(a) + strlen(sep) + strlen(b) + 1;
	char *s = malloc(len);
	BUG_ON(!s);
	snprintf(s, len, "%s=%s%s%s", name, a, sep, b);
	return s;
}

/* Does the LD_PRELOAD list (':' or ' ' separated) hold lib already?  (A
 * replay's environment is the recording's, the agent in it.) */
static bool preloads(const char *list, const char *lib)
{
	size_t n = strlen(lib);
	for (const char *p = list; (p = strstr(p, lib)); p++)
		if ((p == list || p[-1] == ':' || p[-1] == ' ') &&
		    (p[n] == 0 || p[n] == ':' || p[n] == ' '))
			return true;
	return false;
}

/* LD_PRELOAD with the agent before the old list, and before the agent a
 * sanitizer runtime that must be the first library (sanitizer.c), if
 * any. */
static char *preload_str(const char *first, const char *lib, const char *old)
{
	char *tail = envstr("LD_PRELOAD", lib, *old ? ":" : "", old);
	if (!first)
		return tail;
	char *s = envstr("LD_PRELOAD", first, ":", tail + 11);
	free(tail);
	return s;
}

/* The target's environment: the one it would get, with the agent first in
 * LD_PRELOAD (unless it is there already) and the memfd's number in
 * AVTRACE_AGENT_FD, each in its place: a replay's environment then has
 * the recording's strings in the recording's order, so the initial stack
 * is laid out the same. */
static char **build_env(char *const *base, const char *lib, const char *first, int fd)
{
	size_t n = 0;
	while (base && base[n])
		n++;
	char **env = calloc(n + 3, sizeof *env);
	BUG_ON(!env);
	size_t k = 0;
	bool preload = false, has_fd = false;
	char num[16];
	snprintf(num, sizeof num, "%d", fd);
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(base[i], "LD_PRELOAD=", 11) && !preload) {
			const char *old = base[i] + 11;
			env[k++] = preloads(old, lib) ? strdup(base[i]) : preload_str(first, lib, old);
			preload = true;
		} else if (!strncmp(base[i], AVT_AGENT_ENV_FD "=", sizeof AVT_AGENT_ENV_FD)) {
			if (has_fd)
				continue;
			env[k++] = envstr(AVT_AGENT_ENV_FD, num, "", "");
			has_fd = true;
		} else {
			env[k++] = strdup(base[i]);
		}
		BUG_ON(!env[k - 1]);
	}
	if (!preload)
		env[k++] = preload_str(first, lib, "");
	if (!has_fd)
		env[k++] = envstr(AVT_AGENT_ENV_FD, num, "", "");
	env[k] = NULL;
	return env;
}

int agent_prepare(struct tracer *tr)
{
	const char *lib = tr->opts.agent_lib;
	if (access(lib, R_OK) < 0) {
		avt_error("cannot use the agent library '%s': %s", lib, strerror(errno));
		return -1;
	}
	if (strchr(lib, ':') || strchr(lib, ' ')) {
		avt_error("cannot preload the agent library '%s': LD_PRELOAD cannot hold ':' or ' '", lib);
		return -1;
	}
	struct agent *a = calloc(1, sizeof *a);
	BUG_ON(!a);
	a->fd = -1;
	uint32_t nslots = AVT_AGENT_DEFAULT_SLOTS;
	a->len = avt_agent_region_size(nslots, AVT_AGENT_DEFAULT_SITES);
	/* no MFD_CLOEXEC: the target inherits it, across its own execs too */
	a->fd = memfd_create(AVT_AGENT_MEMFD_NAME, 0);
	/* at a number of three digits whatever avtrace has open: the
	 * environment string, hence the target's initial stack, has the same
	 * length in a recording and in its replays */
	if (a->fd >= 0 && a->fd < AGENT_FD_MIN) {
		int hi = fcntl(a->fd, F_DUPFD, AGENT_FD_MIN);
		if (hi >= 0 && hi < 1000) {
			close(a->fd);
			a->fd = hi;
		} else if (hi >= 0) {
			close(hi);
		}
	}
	if (a->fd < 0 || ftruncate(a->fd, (off_t)a->len) < 0) {
		avt_error("cannot create the agent's shared memory: %s", strerror(errno));
		goto fail;
	}
	void *p = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (p == MAP_FAILED) {
		avt_error("cannot map the agent's shared memory: %s", strerror(errno));
		goto fail;
	}
	a->hdr = p;
	avt_agent_init(a->hdr, nslots, AVT_AGENT_DEFAULT_SITES);
	extern char **environ;
	a->envp = build_env(tr->opts.envp ? tr->opts.envp : environ, lib, sanitizer_first(tr), a->fd);
	tr->opts.envp = a->envp;
	tr->agent = a;
	return 0;
fail:
	if (a->fd >= 0)
		close(a->fd);
	free(a);
	return -1;
}

void agent_launched(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (a && a->hdr)
		atomic_store(&a->hdr->want_pid, (int32_t)tr->proc->pid);
	if (a && a->fd >= 0) {
		close(a->fd); /* the target has its copy; the mapping stays */
		a->fd = -1;
	}
}

void agent_free(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a)
		return;
	avt_debug("agent: %llu preemptions put off (%llu taken after %d), ring full %llu times, %llu nested calls, %llu foreign records",
		  (unsigned long long)a->deferred, (unsigned long long)a->forced, MAX_DEFERRALS,
		  (unsigned long long)atomic_load(&a->hdr->full), (unsigned long long)atomic_load(&a->hdr->nested),
		  (unsigned long long)a->foreign);
	if (a->fd >= 0)
		close(a->fd);
	if (a->hdr)
		munmap(a->hdr, a->len);
	for (char **e = a->envp; e && *e; e++)
		free(*e);
	free(a->envp);
	free(a);
	tr->agent = NULL;
}

char *const *tracer_envp(const struct tracer *tr)
{
	return tr->opts.envp;
}

/* A new image is starting: its agent must not use the old one's entry
 * points, and has nothing until this image's hooks are planted. */
void agent_exec_reset(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a)
		return;
	atomic_store(&a->hdr->enabled, 0);
	for (int i = 0; i < AVT_RAW_COUNT; i++)
		atomic_store(&a->hdr->raw[i], 0);
	a->active = false;
	a->nsites = 0; /* the old image's stubs are gone with it */
	/* and its threads: a script's others died in the exec */
	atomic_store(&a->hdr->script, 0);
	a->script = false;
	a->nparts = 0;
	atomic_store(&a->hdr->park_entry[0], 0);
	atomic_store(&a->hdr->park_entry[1], 0);
	/* the new image's agent writes its own entry, if it has an agent:
	 * the old one's address means nothing there */
	atomic_store(&a->hdr->access_entry, 0);
}

static uint64_t raw_entry(struct tracer *tr, const char *name)
{
	for (size_t i = 0; i < n_hook_defs; i++) {
		if (strcmp(hook_defs[i].name, name) || !tr->proc->as.hook_addr[i])
			continue;
		struct bpt *b = bpt_find(&tr->proc->as.bpts, tr->proc->as.hook_addr[i]);
		/* the out-of-line copy of its first instruction, then a jump
		 * back into it: the function without the int3 */
		if (!b || b->kind != BK_HOOK || !b->slot)
			return 0;
		return b->jump ? b->slot + 1 : b->slot; /* past the jump form's int3 */
	}
	return 0;
}

/* The unhooked entry each raw[] slot publishes. */
static const char *const raw_names[AVT_RAW_COUNT] = {
	[AVT_RAW_MUTEX_TRYLOCK] = "pthread_mutex_trylock",
	[AVT_RAW_MUTEX_UNLOCK] = "pthread_mutex_unlock",
	[AVT_RAW_RW_TRYRDLOCK] = "pthread_rwlock_tryrdlock",
	[AVT_RAW_RW_TRYWRLOCK] = "pthread_rwlock_trywrlock",
	[AVT_RAW_RW_UNLOCK] = "pthread_rwlock_unlock",
	[AVT_RAW_SPIN_TRYLOCK] = "pthread_spin_trylock",
	[AVT_RAW_SPIN_UNLOCK] = "pthread_spin_unlock",
	[AVT_RAW_COND_SIGNAL] = "pthread_cond_signal",
	[AVT_RAW_COND_BROADCAST] = "pthread_cond_broadcast",
	[AVT_RAW_MALLOC] = "malloc",
	[AVT_RAW_CALLOC] = "calloc",
	[AVT_RAW_REALLOC] = "realloc",
	[AVT_RAW_FREE] = "free",
	[AVT_RAW_CREATE] = "pthread_create",
	[AVT_RAW_JOIN] = "pthread_join",
	[AVT_RAW_GMUTEX_TRYLOCK] = "g_mutex_trylock",
	[AVT_RAW_GMUTEX_UNLOCK] = "g_mutex_unlock",
};

/* Does hook name mean op on argument 1 (flags: the HF_* beyond HF_SPEC
 * it has), and is it planted? */
static bool spec_is(struct tracer *tr, const char *name, enum hop op, unsigned flags)
{
	for (size_t i = n_builtin_hooks; i < n_hook_defs; i++) {
		const struct hook_def *d = &hook_defs[i];
		if (!strcmp(d->name, name))
			return d->op == op && d->flags == (HF_SPEC | flags) && d->arg == 0 &&
			       d->bit_arg < 0 && tr->proc->as.hook_addr[i];
	}
	return false;
}

/* GMutex in-process (agent/avtrace_agent.c): the spec in force gives
 * g_mutex_lock, _trylock and _unlock GLib's meaning (a user's spec may
 * give them another), all three are hooked (the agent's slow path is
 * g_mutex_lock's hook), and futex calls are not events (--futex: the
 * wake inside g_mutex_unlock would be seen outside its spec call). */
static bool gmutex_spec(struct tracer *tr)
{
	return !tr->opts.futex && spec_is(tr, "g_mutex_lock", OP_LOCK, 0) &&
	       spec_is(tr, "g_mutex_trylock", OP_TRYLOCK, HF_OK_NONZERO) &&
	       spec_is(tr, "g_mutex_unlock", OP_UNLOCK, 0);
}

/* GMutex's entries when gmutex_spec says so, else 0 (both or neither). */
static void gmutex_entries(struct tracer *tr, uint64_t *e)
{
	bool ok = gmutex_spec(tr);
	e[AVT_RAW_GMUTEX_TRYLOCK] = ok ? raw_entry(tr, raw_names[AVT_RAW_GMUTEX_TRYLOCK]) : 0;
	e[AVT_RAW_GMUTEX_UNLOCK] = ok ? raw_entry(tr, raw_names[AVT_RAW_GMUTEX_UNLOCK]) : 0;
	if (!e[AVT_RAW_GMUTEX_TRYLOCK] || !e[AVT_RAW_GMUTEX_UNLOCK])
		e[AVT_RAW_GMUTEX_TRYLOCK] = e[AVT_RAW_GMUTEX_UNLOCK] = 0;
}

/* At the entry stop, hooks planted: the fast path may start.  A family
 * whose functions are not both hooked (a static binary, a libc without
 * them) keeps its slots 0: the agent sends those calls down the ptrace
 * path. */
void agent_publish(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a)
		return;
	uint64_t e[AVT_RAW_COUNT] = { 0 };
	for (int i = 0; i < AVT_RAW_COUNT; i++)
		if (raw_names[i])
			e[i] = raw_entry(tr, raw_names[i]);
	if (!e[AVT_RAW_MUTEX_TRYLOCK] || !e[AVT_RAW_MUTEX_UNLOCK] || tr->opts.stack_depth) {
		avt_debug("agent: no fast path in this image (trylock 0x%llx, unlock 0x%llx)",
			  (unsigned long long)e[AVT_RAW_MUTEX_TRYLOCK],
			  (unsigned long long)e[AVT_RAW_MUTEX_UNLOCK]);
		return;
	}
	/* a lock without its unlock in-process (or the reverse) would leave
	 * the model and libc apart: both or neither */
	if (!e[AVT_RAW_RW_TRYRDLOCK] || !e[AVT_RAW_RW_TRYWRLOCK] || !e[AVT_RAW_RW_UNLOCK])
		e[AVT_RAW_RW_TRYRDLOCK] = e[AVT_RAW_RW_TRYWRLOCK] = e[AVT_RAW_RW_UNLOCK] = 0;
	if (!e[AVT_RAW_SPIN_TRYLOCK] || !e[AVT_RAW_SPIN_UNLOCK])
		e[AVT_RAW_SPIN_TRYLOCK] = e[AVT_RAW_SPIN_UNLOCK] = 0;
	gmutex_entries(tr, e);
	for (int i = 0; i < AVT_RAW_COUNT; i++)
		atomic_store(&a->hdr->raw[i], e[i]);
	atomic_store(&a->hdr->enabled, 1);
	a->active = true;
}

/* The heap's hooks were planted late (the user's code dlopen()ed into a
 * process of system code alone, hooks.c): the agent may make the heap's
 * calls from now on, as it makes them from the start elsewhere. */
void agent_publish_heap(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a || !a->active)
		return;
	for (int i = AVT_RAW_MALLOC; i <= AVT_RAW_FREE; i++)
		atomic_store(&a->hdr->raw[i], raw_entry(tr, raw_names[i]));
}

/* libglib was loaded late (dlopen): its GMutex in-process from now on. */
void agent_publish_glib(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a || !a->active)
		return;
	uint64_t e[AVT_RAW_COUNT] = { 0 };
	gmutex_entries(tr, e);
	atomic_store(&a->hdr->raw[AVT_RAW_GMUTEX_TRYLOCK], e[AVT_RAW_GMUTEX_TRYLOCK]);
	atomic_store(&a->hdr->raw[AVT_RAW_GMUTEX_UNLOCK], e[AVT_RAW_GMUTEX_UNLOCK]);
}

/* Where t, stopped at its request, can be sent to wait for its turn in a
 * script, and the event's kind (see agent_park_kind); 0 if nowhere. */
static uint64_t park_at(struct tracer *tr, const struct tthread *t, uint16_t *kind)
{
	struct agent *a = tr->agent;
	*kind = 0;
	if (!a || !a->active || t->state != TS_REQ || !t->started || t->req.never || t->req.hook == -1 ||
	    !t->priv->regs_valid || t->priv->pending_sig)
		return 0;
	if (t->req.hook == HK_ACCESS)
		return tr->agent_acc.park_at ? tr->agent_acc.park_at(tr, t, kind) : 0;
	if (t->req.hook < 0)
		return 0;
	if (!a->park_hooks) {
		a->park_hooks = true;
		a->park_hook[0] = a->park_hook[1] = -1;
		for (int i = 0; i < (int)n_hook_defs; i++) {
			if (!strcmp(hook_defs[i].name, "pthread_mutex_lock"))
				a->park_hook[0] = i;
			else if (!strcmp(hook_defs[i].name, "pthread_mutex_unlock"))
				a->park_hook[1] = i;
		}
	}
	int which = t->req.hook == a->park_hook[0] ? 0 : t->req.hook == a->park_hook[1] ? 1 : -1;
	uint16_t want = which == 0 ? AVT_EV_ACQUIRE : AVT_EV_RELEASE;
	if (which < 0 || t->req.kind != want)
		return 0;
	*kind = want;
	return atomic_load(&a->hdr->park_entry[which]);
}

uint16_t agent_park_kind(struct tracer *tr, const struct tthread *t)
{
	uint16_t kind;
	return park_at(tr, t, &kind) ? kind : 0;
}

size_t tracer_agent_expect(struct tracer *tr, const struct tracer_expect *ev, size_t n)
{
	struct agent *a = tr->agent;
	if (!a)
		return 0;
	if (n > AVT_AGENT_MAX_EXPECT)
		n = AVT_AGENT_MAX_EXPECT;
	struct avt_agent_expect *e = avt_agent_expects(a->hdr);
	const struct tthread *g = a->granting;
	size_t k = 0;
	a->nparts = 0;
	for (; k < n; k++) {
		uint64_t site = ev[k].site_off;
		if (ev[k].site_mod != AVT_MOD_NONE) {
			const struct elfmod *m = NULL;
			for (size_t i = 0; i < tr->proc->as.mods.n && !m; i++)
				if (tr->proc->as.mods.m[i].id == (int)ev[k].site_mod)
					m = &tr->proc->as.mods.m[i];
			if (!m)
				break; /* a module not loaded (yet): expect no further */
			site += m->bias;
		}
		const struct tthread *t = g && ev[k].lid != g->lid ? tracer_thread(tr, ev[k].lid) : g;
		if (!t)
			break;
		size_t p = 0;
		while (t != g && p < a->nparts && a->parts[p] != t)
			p++;
		if (t != g && p == a->nparts) {
			/* a thread's first event in the script: the very request
			 * it is stopped at, which the agent can take */
			if (p == AGENT_MAX_PARTS || agent_park_kind(tr, t) != ev[k].kind ||
			    t->req.obj != ev[k].obj || t->req.site != site)
				break;
			a->parts[a->nparts++] = tracer_thread(tr, t->lid);
		}
		e[k] = (struct avt_agent_expect){ ev[k].obj, site, ev[k].kind, ev[k].flags,
						  t ? (uint32_t)t->tid : 0, (uint16_t)ev[k].lid, ev[k].reads,
						  { 0 } };
	}
	atomic_store(&a->hdr->expect_n, (uint32_t)k);
	a->expect_set = true;
	return k;
}

/* The script's threads but the one granted wait for their turn in the
 * agent: each is set to go from libc's function, where it stopped, to the
 * agent's (the same call: arguments and return address as they are); the
 * loop resumes them (loop.c, resume_thread), never this file. */
static void script_begin(struct tracer *tr)
{
	struct agent *a = tr->agent;
	atomic_store(&a->hdr->script, 1);
	a->script = true;
	tr->stats.agent_scripts++;
	for (size_t i = 0; i < a->nparts; i++) {
		struct tthread *t = a->parts[i];
		struct user_regs_struct r = t->priv->regs;
		uint16_t kind;
		r.rip = park_at(tr, t, &kind);
		if (ptu_setregs(t->tid, &r) < 0)
			avt_debug("setregs T%u: %s", t->lid, strerror(errno));
		t->priv->regs_valid = false;
		t->priv->resume_pc = 0;
		t->state = TS_RUNNING;
		tr->stats.agent_parked++;
	}
}

bool agent_script_on(const struct tracer *tr)
{
	return tr->agent && tr->agent->script;
}

struct tthread *agent_script_holder(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a || !a->script)
		return NULL;
	uint32_t tid = atomic_load(&a->hdr->run_tid);
	return tid ? tr_by_tid(tr, (pid_t)tid) : NULL;
}

size_t agent_script_parts(struct tracer *tr, struct tthread **parts, size_t max)
{
	struct agent *a = tr->agent;
	size_t n = 0;
	if (!a || !a->script)
		return 0;
	if (a->granting && n < max)
		parts[n++] = tr_by_tid(tr, a->granting->tid);
	for (size_t i = 0; i < a->nparts && n < max; i++)
		parts[n++] = a->parts[i];
	return n;
}

uint32_t agent_script_end(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a || !a->script)
		return 0;
	struct avt_agent_hdr *h = a->hdr;
	atomic_store(&h->script, 0);
	atomic_store(&h->budget, 0);
	uint32_t holder = atomic_exchange(&h->run_tid, 0);
	atomic_store(&h->expect_n, 0);
	syscall(SYS_futex, (uint32_t *)&h->run_tid, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	a->script = false;
	return holder;
}

bool agent_value_fault(struct tracer *tr, struct tthread *t)
{
	struct agent *a = tr->agent;
	struct user_regs_struct r;
	if (!a || !a->hdr)
		return false;
	uint64_t lo = atomic_load(&a->hdr->value_lo), hi = atomic_load(&a->hdr->value_hi);
	if (!lo || ptu_getregs(t->tid, &r) < 0 || r.rip < lo || r.rip >= hi)
		return false;
	r.rip = hi;
	if (ptu_setregs(t->tid, &r) < 0)
		return false;
	avt_debug("T%u: the agent's load of a read's value faulted: no value, the instruction next",
		  t->lid);
	return true;
}

uint64_t agent_access_entry(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a || !a->active || a->nsites >= a->hdr->nsites)
		return 0;
	return atomic_load(&a->hdr->access_entry);
}

int agent_access_site(struct tracer *tr, uint64_t pc, uint16_t kind, uint16_t size,
		      uint16_t flags, int32_t left, uint64_t rec_lids, bool store)
{
	struct agent *a = tr->agent;
	if (!a || a->nsites >= a->hdr->nsites)
		return -1;
	struct avt_agent_site *s = &avt_agent_sites(a->hdr)[a->nsites];
	s->pc = pc;
	s->size = size;
	s->flags = flags;
	s->kind = kind;
	s->store = store;
	s->rec_lids = rec_lids;
	atomic_store(&s->left, left);
	return (int)a->nsites++;
}

void agent_access_left(struct tracer *tr, int idx, int32_t left)
{
	struct agent *a = tr->agent;
	if (a && idx >= 0 && (uint32_t)idx < a->nsites)
		atomic_store(&avt_agent_sites(a->hdr)[idx].left, left);
}

int32_t agent_access_left_now(struct tracer *tr, int idx)
{
	struct agent *a = tr->agent;
	if (!a || idx < 0 || (uint32_t)idx >= a->nsites)
		return 0;
	return atomic_load(&avt_agent_sites(a->hdr)[idx].left);
}

/* A call's record (avt_agent_commit_alloc): the heap's records of the
 * call, after the events drained before it; pthread_create's site. */
static void heap_record(struct tracer *tr, struct tthread *t, const struct avt_event *ev)
{
	static const enum hop ops[] = { OP_MALLOC, OP_CALLOC, OP_REALLOC, OP_FREE };
	if (ev->tindex == AVT_RAW_CREATE) {
		hooks_create_call(tr, t, ev->site_off, ev->obj2, ev->obj, ev->seq);
		return;
	}
	if (ev->tindex < AVT_RAW_MALLOC || ev->tindex > AVT_RAW_FREE) {
		tr->agent->foreign++;
		return;
	}
	tr->stats.agent_heap += hooks_heap_call(tr, t, ops[ev->tindex - AVT_RAW_MALLOC], ev->obj,
						ev->seq, ev->obj2, ev->site_off);
}

/* One record: the event the ptrace hook would have emitted. */
static void apply(struct tracer *tr, const struct avt_event *ev)
{
	struct agent *a = tr->agent;
	if (ev->kind == AVT_EV_NONE)
		return;
	struct tthread *t = tr_by_tid(tr, (pid_t)ev->thread);
	if (!t) {
		a->foreign++;
		return;
	}
	uint64_t before = tr->seq;
	if (ev->flags & AVT_F_ACCESS_BPT) {
		if (tr->agent_acc.event)
			tr->agent_acc.event(tr, t, ev);
		tr->stats.agent_events += tr->seq - before;
		return;
	}
	if (ev->flags & AVT_AGENT_F_ALLOC) {
		heap_record(tr, t, ev);
		return;
	}
	if (ev->kind == AVT_EV_JOIN) {
		/* its own filter: a wrapper's join (g_thread_join) is the
		 * wrapper's event, not a nested call */
		hooks_join_call(tr, t, ev->obj, ev->site_off, ev->obj2);
		tr->stats.agent_events += tr->seq - before;
		return;
	}
	/* a spec's call (GMutex) is filtered as its ptrace hook filters it:
	 * libc may call it (a callback's tail call), a spec's call may not */
	if (ev->tindex == AVT_AGENT_T_SPEC ? hooks_nested_call(tr, t, ev->site_off) :
	    hooks_internal_caller(tr, t, ev->site_off))
		return;
	switch (ev->kind) {
	case AVT_EV_ACQUIRE:
	case AVT_EV_RD_ACQUIRE:
	case AVT_EV_WR_ACQUIRE:
		hooks_acquire(tr, t, ev->obj, (enum avt_kind)ev->kind, 0, ev->site_off, 0);
		break;
	case AVT_EV_RELEASE:
		hooks_release(tr, t, ev->obj, ev->site_off);
		break;
	case AVT_EV_SIGNAL:
	case AVT_EV_BROADCAST:
		hooks_signal(tr, t, ev->obj, (enum avt_kind)ev->kind, ev->site_off);
		break;
	case AVT_EV_TRYLOCK_FAIL:
		tr_emit(tr, t, AVT_EV_TRYLOCK_FAIL, ev->obj, 0, ev->site_off, 0, 0);
		break;
	default:
		a->foreign++;
		return;
	}
	tr->stats.agent_events += tr->seq - before;
}

void agent_drain(struct tracer *tr, bool final)
{
	struct agent *a = tr->agent;
	if (!a)
		return;
	struct avt_event ev;
	while (avt_agent_take(a->hdr, &ev, final))
		apply(tr, &ev);
	tr->stats.agent_handovers = atomic_load_explicit(&a->hdr->handovers, memory_order_relaxed);
	tr->stats.agent_extras = atomic_load_explicit(&a->hdr->extras, memory_order_relaxed);
	tr->stats.agent_yields = atomic_load_explicit(&a->hdr->yields, memory_order_relaxed);
}

/* Can record ev become its event while its thread runs on?  Its event
 * must depend on nothing but the records before it and state that changes
 * only at a stop (the model, a thread's spec frames, the modules): the
 * locks', the condition variables' and the heap's.  Not an access (its
 * site's hits left are written back for the agent to spend, and would
 * overwrite what it spent since; a disarm writes the running code), nor a
 * create or join (an interceptor's site is read from the thread's stack). */
static bool drains_running(const struct avt_event *ev)
{
	if (ev->flags & AVT_F_ACCESS_BPT)
		return false;
	if (ev->flags & AVT_AGENT_F_ALLOC)
		return ev->tindex >= AVT_RAW_MALLOC && ev->tindex <= AVT_RAW_FREE;
	return ev->kind != AVT_EV_JOIN;
}

/* The supervisor's work per record overlaps the program's run (the second
 * CPU), where a drain at the next stop adds the two up.  Up to the head
 * seen on entry: a holder that commits faster than this takes must still
 * be watched at every tick (its slice, a SIGINT).  The records left (the
 * rest, or one drains_running refuses, and all after it) wait for the
 * next stop, so the ring's order is kept. */
void agent_drain_running(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a || a->script)
		return;
	struct avt_agent_hdr *h = a->hdr;
	uint64_t end = atomic_load_explicit(&h->head, memory_order_acquire);
	struct avt_event ev;
	while (atomic_load_explicit(&h->tail, memory_order_relaxed) != end && avt_agent_peek(h, &ev) &&
	       drains_running(&ev)) {
		avt_agent_pop(h);
		apply(tr, &ev);
		tr->stats.agent_drained_running++;
	}
}

/* May the token's holder t take a sched_yield in-process, and while it
 * holds which lock?  The yield's stop would end t's turn, and the pick
 * there gives it to t again when no other thread can run: each is gone or
 * stopped at a request the model refuses (a join of a thread that lives,
 * a lock held).  Only t runs till its next stop, so that stays so unless
 * t's own events free one: t releasing a lock one of them waits for.  So
 * the answer is the one lock of t's that others wait for (held once: the
 * agent sees its release), AVT_AGENT_YIELD_ANY when they wait for none of
 * t's, or 0 (no yield in-process): a thread ready, starting or in a
 * kernel wait (which a condition's signal in-process could end), waits
 * on two locks of t's, or a sink that may pick another (a replay counts
 * a yield as a scheduling point, explore may draw there). */
static uint64_t yield_lock(struct tracer *tr, const struct tthread *t, uint64_t budget)
{
	if (!t || !budget || !tr->sink.keeps_yielder || tr->agent->expect_set || tr->agent->nparts)
		return 0;
	uint64_t obj = AVT_AGENT_YIELD_ANY;
	/* the threads alive (and some just dead): a program that started
	 * thousands costs each grant those it has now */
	for (size_t i = 0; i < tr->proc->nlive; i++) {
		const struct tthread *o = tr->proc->live[i];
		if (!o || o == t || o->state == TS_DEAD)
			continue;
		if (o->state != TS_REQ || o->req.never || o->req.hook < 0 || model_can_commit(tr, o) != 0)
			return 0;
		enum hop op = hook_defs[o->req.hook].op;
		if (op == OP_JOIN)
			continue;
		if ((op != OP_LOCK && op != OP_SPINLOCK) || o->req.kind != AVT_EV_ACQUIRE)
			return 0;
		const struct mlock *l = model_find(&tr->proc->model, o->req.obj);
		if (!l || l->readers)
			return 0;
		if (l->owner != t->lid)
			continue; /* a stopped thread's: held till it runs */
		if ((obj != AVT_AGENT_YIELD_ANY && obj != o->req.obj) || l->count > 1)
			return 0;
		obj = o->req.obj;
	}
	return obj;
}

void agent_grant(struct tracer *tr, const struct tthread *t)
{
	struct agent *a = tr->agent;
	if (!a)
		return;
	uint64_t budget = 0;
	(void)agent_script_end(tr); /* (the loop ends one before any grant) */
	a->expect_set = false;
	a->nparts = 0;
	a->granting = t;
	atomic_fetch_add(&a->hdr->gen, 1);
	if (t)
		budget = tr->sink.allow ? tr->sink.allow(tr->sink.ctx, tr, t) : AVT_AGENT_UNLIMITED;
	if (!a->expect_set)
		atomic_store(&a->hdr->expect_n, 0);
	atomic_store(&a->hdr->expect_pos, 0);
	uint64_t yobj = yield_lock(tr, t, budget);
	atomic_store(&a->hdr->yield_held, yobj != 0);
	atomic_store(&a->hdr->yield_obj, yobj);
	avt_agent_grant(a->hdr, t ? (uint32_t)t->tid : 0, budget);
	if (a->nparts)
		script_begin(tr);
}

void agent_detach(struct tracer *tr)
{
	struct agent *a = tr->agent;
	if (!a)
		return;
	agent_grant(tr, NULL);
	atomic_store(&a->hdr->enabled, 0);
}

bool agent_busy(struct tracer *tr, const struct tthread *t)
{
	struct agent *a = tr->agent;
	if (!a || atomic_load(&a->hdr->busy) != (uint32_t)t->tid || a->deferrals >= MAX_DEFERRALS) {
		if (a && a->deferrals >= MAX_DEFERRALS)
			a->forced++;
		if (a)
			a->deferrals = 0;
		return false;
	}
	a->deferrals++;
	a->deferred++;
	return true;
}
