/*
 * What each hooked synchronization function means.
 *
 * An int3 sits on the first instruction of each function in the loaded libc
 * (or in a static executable's own symbol table).  At the entry stop the
 * thread's request is built from its arguments (hooks_request); when the
 * sink picks the thread, the request is committed (hooks_commit): the model
 * is updated and the event emitted.  Calls whose outcome matters (try/timed
 * locks, condition waits, barriers, semaphore waits) get their return
 * address swapped for a trampoline in the scratch page, and the event is
 * emitted when they return (hooks_return).
 *
 * Calls made by libc itself (the C11 wrappers calling their pthread
 * versions, the dynamic linker's recursive locks) are filtered out by the
 * caller's address: they are neither events nor part of the model.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/gate.h"
#include "ptrace_util.h"
#include "syncspec.h"
#include "trace/log.h"
#include "tracer_int.h"


/* Functions a program must have for us to hook anything at all. */
static bool hook_required(size_t i)
{
	return hook_defs[i].op == OP_LOCK && !strcmp(hook_defs[i].name, "pthread_mutex_lock");
}

static void find_interceptors(struct tracer *tr);
/* ---- sync specs (syncspec.c, docs/sync-spec.md): more rows of the table */

static enum hop spec_hop(enum sync_op op, unsigned *flags)
{
	switch (op) {
	case SYNC_ACQUIRE: return OP_LOCK;
	case SYNC_TRY_ACQUIRE: return OP_TRYLOCK;
	case SYNC_RELEASE: return OP_UNLOCK;
	case SYNC_READ_ACQUIRE: return OP_RDLOCK;
	case SYNC_READ_TRY_ACQUIRE: return OP_TRYRDLOCK;
	case SYNC_WRITE_ACQUIRE: return OP_WRLOCK;
	case SYNC_WRITE_TRY_ACQUIRE: return OP_TRYWRLOCK;
	case SYNC_READ_RELEASE:
	case SYNC_WRITE_RELEASE: return OP_RWUNLOCK;
	case SYNC_WAIT: return OP_CONDWAIT;
	case SYNC_TIMED_WAIT: return OP_CONDTIMEDWAIT;
	case SYNC_SIGNAL: return OP_SIGNAL;
	case SYNC_BROADCAST: return OP_BROADCAST;
	case SYNC_ONCE: *flags |= HF_ONCE; return OP_LOCK;
	case SYNC_ONCE_ENTER: *flags |= HF_ONCE_ENTER; return OP_LOCK;
	case SYNC_ONCE_LEAVE: return OP_UNLOCK;
	case SYNC_THREAD_CREATE: *flags |= HF_WRAP; return OP_CREATE;
	case SYNC_THREAD_JOIN: *flags |= HF_WRAP; return OP_JOIN;
	}
	return OP_UNLOCK;
}

static int find_hook(const char *name)
{
	for (size_t i = 0; i < n_hook_defs; i++)
		if (!strcmp(hook_defs[i].name, name))
			return (int)i;
	return -1;
}

/* Appends the functions of spec text (named name) to the hook table; a
 * function already in it keeps its first meaning (the user's spec is
 * added before GLib's: it overrides it). */
static int add_spec(const char *text, const char *name, char *why, size_t whylen)
{
	struct sync_spec s;
	if (syncspec_parse(text, name, &s, why, whylen) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < s.n && rc == 0; i++) {
		const struct sync_func *f = &s.f[i];
		if (find_hook(f->name) >= 0)
			continue;
		struct hook_def *d = &hook_defs[n_hook_defs];
		unsigned flags = HF_SPEC | (f->recursive ? HF_RECURSIVE : 0) |
				 (f->ok_nonzero ? HF_OK_NONZERO : 0);
		enum hop op = spec_hop(f->op, &flags);
		char *nm = n_hook_defs < HOOK_MAX ? strdup(f->name) : NULL;
		char *lib = nm ? strdup(f->lib) : NULL;
		if (!lib) {
			free(nm);
			snprintf(why, whylen, "%s: too many functions in the sync specs (at most %d in all)",
				 name, HOOK_MAX - (int)n_builtin_hooks);
			rc = -1;
			break;
		}
		*d = (struct hook_def){ nm, op, flags, lib, f->arg, f->lock_arg, f->bit_arg };
		n_hook_defs++;
	}
	syncspec_free(&s);
	return rc;
}

static bool lib_matches(const struct hook_def *d, const struct elfmod *m, const char *exe)
{
	if (!*d->lib)
		return true;
	const char *b = strrchr(m->path, '/');
	b = b ? b + 1 : m->path;
	return strcmp(m->path, exe) && !strncmp(b, d->lib, strlen(d->lib));
}

/* The specs' functions not planted yet that module m has. */
static void plant_spec_in(struct tracer *tr, const struct elfmod *m)
{
	const char *names[HOOK_MAX];
	int idx[HOOK_MAX];
	size_t n = 0;
	for (size_t i = n_builtin_hooks; i < n_hook_defs; i++)
		if (!tr->proc->as.hook_addr[i] && lib_matches(&hook_defs[i], m, tr->exe)) {
			idx[n] = (int)i;
			names[n++] = hook_defs[i].name;
		}
	struct elfsym syms[HOOK_MAX];
	int has_symtab;
	if (!n || m->path[0] != '/' || elf_lookup_funcs(m->path, names, n, syms, &has_symtab) <= 0)
		return;
	for (size_t k = 0; k < n; k++) {
		if (!syms[k].value)
			continue;
		uint64_t addr = m->bias + syms[k].value;
		char w[160];
		if (!bpt_find(&tr->proc->as.bpts, addr) &&
		    bpt_insert_entry(&tr->proc->as.bpts, addr, syms[k].size, BK_HOOK, idx[k], w, sizeof w) < 0) {
			avt_warn("cannot hook %s in '%s': %s", names[k], m->path, w);
			continue;
		}
		tr->proc->as.hook_addr[idx[k]] = addr;
		tr->proc->as.hook_size[idx[k]] = syms[k].size;
		aspace_callers_forget(&tr->proc->as);
		avt_debug("sync spec: %s hooked in '%s'", names[k], m->path);
	}
}

#define GLIB_NAME "libglib-2.0.so"

/* The user's spec, then GLib's when libglib is loaded; the program's
 * functions first, then the libraries'. */
static int plant_specs(struct tracer *tr, char *why, size_t whylen)
{
	if (tr->opts.sync_spec &&
	    add_spec(tr->opts.sync_spec, tr->opts.sync_spec_name ? tr->opts.sync_spec_name : "sync spec",
		     why, whylen) < 0)
		return -1;
	if (modmap_find_name(&tr->proc->as.mods, GLIB_NAME) &&
	    add_spec(syncspec_glib, "GLib's sync spec", why, whylen) < 0)
		return -1;
	for (size_t i = n_builtin_hooks; i < n_hook_defs; i++)
		tr->proc->as.hook_addr[i] = 0;
	aspace_callers_forget(&tr->proc->as);
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		if (!strcmp(tr->proc->as.mods.m[i].path, tr->exe))
			plant_spec_in(tr, &tr->proc->as.mods.m[i]);
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		if (strcmp(tr->proc->as.mods.m[i].path, tr->exe))
			plant_spec_in(tr, &tr->proc->as.mods.m[i]);
	return 0;
}

/* Does the process run code of the user's (tracer_user_code)?  The heap's
 * hooks name the blocks that code reads and writes; a process of system
 * code alone (the shell of a script, a test runner from /usr/bin) would
 * stop twice for every malloc for nothing, so it gets them when the
 * user's code is mapped (hooks_plant_module), if ever. */
static bool user_module(const struct tracer *tr, const struct elfmod *m)
{
	return m->xhi && tracer_user_code(tr, m->path);
}

static bool has_user_code(const struct tracer *tr)
{
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		if (user_module(tr, &tr->proc->as.mods.m[i]))
			return true;
	return false;
}

/* Hook i, the function sym of module where. */
static int hook_one(struct tracer *tr, int i, const struct elfmod *where, const struct elfsym *sym,
		    char *why, size_t whylen)
{
	uint64_t addr = where->bias + sym->value;
	tr->proc->as.hook_addr[i] = addr;
	tr->proc->as.hook_size[i] = sym->size;
	aspace_callers_forget(&tr->proc->as);
	if (bpt_find(&tr->proc->as.bpts, addr))
		return 0; /* an alias of a hooked function */
	char w[160];
	if (bpt_insert_entry(&tr->proc->as.bpts, addr, sym->size, BK_HOOK, i, w, sizeof w) < 0) {
		snprintf(why, whylen, "cannot hook %s in '%s': %s", hook_defs[i].name, where->path, w);
		return -1;
	}
	return 0;
}

static void gate_internal(struct tracer *tr, int i);

/* The user's code was mapped late (dlopen) into a process that had none:
 * the heap's hooks from now on (blocks allocated before have no name). */
static void hook_heap_late(struct tracer *tr, const struct elfmod *m)
{
	if (tr->opts.no_heap || tr->proc->as.heap_hooked || !user_module(tr, m))
		return;
	struct elfmod *lib = modmap_find_name(&tr->proc->as.mods, "libc.so");
	if (!lib)
		return; /* static: the executable, planted with it */
	const char *names[HOOK_MAX];
	struct elfsym syms[HOOK_MAX];
	size_t idx[HOOK_MAX], n = 0;
	int has_symtab;
	for (size_t i = 0; i < n_builtin_hooks; i++)
		if (hop_is_heap(hook_defs[i].op)) {
			idx[n] = i;
			names[n++] = hook_defs[i].name;
		}
	if (elf_lookup_funcs(lib->path, names, n, syms, &has_symtab) < 0)
		return;
	tr->proc->as.heap_hooked = true;
	char why[256];
	for (size_t k = 0; k < n; k++)
		if (syms[k].value && hook_one(tr, (int)idx[k], lib, &syms[k], why, sizeof why) < 0)
			avt_warn("%s", why);
		else if (syms[k].value)
			gate_internal(tr, (int)idx[k]);
}

void hooks_plant_module(struct tracer *tr, const struct elfmod *m)
{
	hook_heap_late(tr, m);
	const char *b = strrchr(m->path, '/');
	b = b ? b + 1 : m->path;
	char why[256];
	if (!strncmp(b, GLIB_NAME, strlen(GLIB_NAME)) &&
	    add_spec(syncspec_glib, "GLib's sync spec", why, sizeof why) < 0)
		avt_warn("%s", why);
	plant_spec_in(tr, m);
}

int hooks_plant(struct tracer *tr, char *why, size_t whylen)
{
	struct elfmod *lib = modmap_find_name(&tr->proc->as.mods, "libc.so");
	if (!lib)
		lib = modmap_find_name(&tr->proc->as.mods, "libc-");
	struct elfmod *where = lib;
	if (!lib) {
		/* statically linked: the pthread functions are in the executable */
		for (size_t i = 0; i < tr->proc->as.mods.n; i++)
			if (!strcmp(tr->proc->as.mods.m[i].path, tr->exe))
				where = &tr->proc->as.mods.m[i];
	}
	if (!where) {
		snprintf(why, whylen, "cannot find libc or the executable in the target's memory map");
		return -1;
	}
	const char *names[HOOK_MAX];
	struct elfsym syms[HOOK_MAX];
	int has_symtab;
	for (size_t i = 0; i < n_builtin_hooks; i++)
		names[i] = hook_defs[i].name;
	int found = elf_lookup_funcs(where->path, names, n_builtin_hooks, syms, &has_symtab);
	if (found < 0) {
		snprintf(why, whylen, "cannot read symbols of '%s'", where->path);
		return -1;
	}
	if (!lib && !has_symtab) {
		snprintf(why, whylen, "'%s' is statically linked and stripped: no symbol table to find the pthread functions in", tr->exe);
		return -1;
	}
	tr->proc->as.heap_hooked = !tr->opts.no_heap && has_user_code(tr);
	aspace_callers_forget(&tr->proc->as);
	for (size_t i = 0; i < n_builtin_hooks; i++) {
		tr->proc->as.hook_addr[i] = 0;
		if (hop_is_heap(hook_defs[i].op) && !tr->proc->as.heap_hooked)
			continue;
		if (!syms[i].value) {
			if (hook_required(i) && !lib)
				avt_debug("no %s in '%s': program does not use it", names[i], where->path);
			continue;
		}
		if (hook_one(tr, (int)i, where, &syms[i], why, whylen) < 0)
			return -1;
		if ((hop_is_heap(hook_defs[i].op) || (hook_defs[i].flags & HF_GATED)) && lib)
			gate_internal(tr, (int)i);
	}
	if (tr->san.asan)
		find_interceptors(tr);
	return plant_specs(tr, why, whylen);
}

/* A sanitizer's interceptor of a hooked function (__interceptor_X, in
 * libasan.so or linked into the program by clang) calls libc's X on the
 * program's behalf: that call is the program's, at the interceptor's
 * caller.  Where they are: found once the runtime is loaded. */
static void find_interceptors(struct tracer *tr)
{
	struct sanitizer *s = &tr->san;
	char buf[64][48];
	const char *names[64];
	struct elfsym syms[64];
	int has_symtab;
	size_t n = n_hook_defs < 64 ? n_hook_defs : 64; /* the built-in hooks come first */
	s->nicpt = 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(buf[i], sizeof buf[i], "__interceptor_%s", hook_defs[i].name);
		names[i] = buf[i];
	}
	for (size_t k = 0; k < tr->proc->as.mods.n; k++) {
		const struct elfmod *m = &tr->proc->as.mods.m[k];
		if ((strcmp(m->path, tr->exe) && !sanitizer_runtime(m->path)) ||
		    elf_lookup_funcs(m->path, names, n, syms, &has_symtab) <= 0)
			continue;
		for (size_t i = 0; i < n && s->nicpt < 128; i++)
			if (syms[i].value) {
				s->icpt[s->nicpt].lo = m->bias + syms[i].value;
				s->icpt[s->nicpt++].hi = m->bias + syms[i].value + syms[i].size;
			}
	}
}

static bool in_interceptor(const struct tracer *tr, uint64_t ret)
{
	for (size_t i = 0; i < tr->san.nicpt; i++)
		if (ret > tr->san.icpt[i].lo && ret < tr->san.icpt[i].hi)
			return true;
	return false;
}

/* The site of a call that returns to ret with the frame pointer rbp at the
 * hooked function's entry: ret, or, from an interceptor (built with frame
 * pointers: rbp is its frame), its own return address. */
static uint64_t interceptor_site(struct tracer *tr, uint64_t ret, uint64_t rbp)
{
	uint64_t up;
	if (!in_interceptor(tr, ret) || ptu_read_u64(tr->proc->pid, rbp + 8, &up) < 0 || !up ||
	    in_interceptor(tr, up))
		return ret;
	return up;
}

/* t starts a thread with arg at a create hook's entry (return address
 * ret, frame pointer rbp, stack pointer sp).  From a sanitizer's
 * interceptor, arg is the runtime's own record (ASan's AsanThread, made
 * with mmap), and the program's argument is in no register any more: the
 * caller's frame and those above it escape, from its stack pointer at
 * the call (the interceptor's frame + 16).  That is more than the
 * program's &e, never less: without it an ASan build's main shared e
 * with the thread it started and its accesses were no events (bench/asan,
 * acc_stackobj). */
static void create_arg(struct tracer *tr, struct tthread *t, uint64_t ret, uint64_t rbp,
		       uint64_t arg, uint64_t sp)
{
	thread_start_arg(t, arg, sp);
	if (in_interceptor(tr, ret) && rbp)
		thread_start_arg(t, rbp + 16, sp);
}

/* libc, its dynamic linker or libpthread (not the program itself): a call
 * from there is libc's own (internal_caller; the heap hooks' gates). */
static bool libc_module(const struct tracer *tr, const struct elfmod *m)
{
	if (!m->path || !strcmp(m->path, tr->exe))
		return false;
	const char *b = strrchr(m->path, '/');
	b = b ? b + 1 : m->path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-linux", 8) ||
	       !strncmp(b, "libpthread", 10);
}

/* Is the call coming from libc/the dynamic linker, from a sanitizer's
 * runtime library (not its interceptors: the program's calls), or from
 * inside another hooked function (a static binary's C11 wrappers)? */
static bool internal_caller_now(struct tracer *tr, uint64_t ret)
{
	struct elfmod *m = modmap_find(&tr->proc->as.mods, ret);
	if (m && strcmp(m->path, tr->exe)) {
		if (sanitizer_runtime(m->path) && !in_interceptor(tr, ret))
			return true;
		if (libc_module(tr, m))
			return true;
	}
	for (size_t i = 0; i < n_hook_defs; i++)
		if (tr->proc->as.hook_addr[i] && ret > tr->proc->as.hook_addr[i] &&
		    ret < tr->proc->as.hook_addr[i] + tr->proc->as.hook_size[i])
			return true;
	return false;
}

/* internal_caller_now, remembered by return address (every event the
 * agent passes on asks it) */
static bool internal_caller(struct tracer *tr, uint64_t ret)
{
	_Static_assert(sizeof tr->proc->as.caller_memo / sizeof tr->proc->as.caller_memo[0] == 1024,
		       "the memo's index is 10 bits");
	struct caller_memo *c = &tr->proc->as.caller_memo[(ret * 0x9e3779b97f4a7c15ull) >> 54];
	if (ret && c->ret == ret)
		return c->internal;
	bool internal = internal_caller_now(tr, ret);
	c->ret = ret;
	c->internal = internal;
	return internal;
}

/* Hook i's calls that the hooks would only resume (from libc or its
 * dynamic linker: internal_caller; free(NULL)) pass its gate with no
 * ptrace stop (decode/gate.h).  The heap hooks: a thread's start and exit
 * make about 20 such calls (its TLS); the HF_GATED lock hooks: ld.so's TLS
 * lock, twice at every thread's creation.  A program of many short
 * threads spent most of its recording on them.  Only those hooks: a gate
 * takes GATE_SIZE bytes of the scratch page the access sites' slots and
 * stubs need too.  A hook that is not in the jump form, or a full scratch
 * page, keeps its plain stop at every call. */
static void gate_internal(struct tracer *tr, int i)
{
	struct aspace *as = &tr->proc->as;
	struct bpt *b = bpt_find(&as->bpts, as->hook_addr[i]);
	if (!b || !b->jump || b->kind != BK_HOOK || b->data != i)
		return;
	struct gate_range r[GATE_MAX_RANGES];
	size_t n = 0;
	for (size_t k = 0; k < as->mods.n && n < GATE_MAX_RANGES; k++)
		if (as->mods.m[k].xhi > as->mods.m[k].xlo && libc_module(tr, &as->mods.m[k]))
			r[n++] = (struct gate_range){ as->mods.m[k].xlo, as->mods.m[k].xhi };
	uint8_t code[GATE_SIZE];
	uint64_t at = bpt_scratch_alloc(&as->bpts, GATE_SIZE);
	size_t len = at ? gate_encode(code, at, r, n, hook_defs[i].op == OP_FREE, b->slot + 1, b->slot) : 0;
	/* the gate first, then the hook's jump to it */
	if (len && ptu_write(tr->proc->memfd, at, code, len) == 0 &&
	    bpt_jump_to(&as->bpts, b->addr, at) == 0)
		avt_debug("%s: calls from libc pass a gate", hook_defs[i].name);
}

/* The innermost call of a spec's function t is in (by its return frame:
 * every such call has one, hooks_commit), or NULL. */
static const struct retframe *spec_frame(const struct tthread *t)
{
	for (int k = t->priv->nrets; k-- > 0;) {
		const struct retframe *f = &t->priv->rets[k];
		if (f->hook >= 0 && (hook_defs[f->hook].flags & HF_SPEC))
			return f;
	}
	return NULL;
}

/* A hooked call from inside a spec's function (g_cond_wait relocking its
 * GMutex, g_rec_mutex_lock's pthread_mutex_lock, even as a tail call
 * whose return address is the trampoline): a part of the outer call, no
 * event of its own.  A `once` call runs the program's callback: only the
 * calls of the spec's library itself are its own there. */
static bool nested_call(struct tracer *tr, const struct tthread *t, uint64_t ret)
{
	const struct retframe *f = spec_frame(t);
	if (!f)
		return false;
	if (!(hook_defs[f->hook].flags & HF_ONCE) || ret == tr->proc->as.tramp)
		return true;
	return modmap_find(&tr->proc->as.mods, ret) ==
	       modmap_find(&tr->proc->as.mods, tr->proc->as.hook_addr[f->hook]);
}

/* The pthread call inside a spec's thread-create or thread-join wrapper
 * (g_thread_new's pthread_create): the event, at the wrapper's site. */
static const struct retframe *wrapper_of(const struct tthread *t, int h)
{
	const struct retframe *f = spec_frame(t);
	if (!f || !(hook_defs[f->hook].flags & HF_WRAP) || (hook_defs[h].flags & HF_SPEC) ||
	    hook_defs[f->hook].op != hook_defs[h].op)
		return NULL;
	return f;
}

/* Integer argument k (0-based) of a call stopped at its entry. */
static uint64_t call_arg(const struct user_regs_struct *r, unsigned k)
{
	const uint64_t a[6] = { r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9 };
	return k < 6 ? a[k] : 0;
}

/* The objects of a spec's call: the argument it names, a bit lock's byte. */
static void spec_objects(const struct hook_def *d, const struct user_regs_struct *r, struct treq *q)
{
	q->obj = call_arg(r, d->arg);
	if (d->bit_arg >= 0)
		q->obj += (uint32_t)call_arg(r, (unsigned)d->bit_arg) / 8;
	q->obj2 = call_arg(r, d->arg2);
}

/* glibc's pthread_mutex_t: __data.__kind at offset 16, type in its low bits. */
static int mutex_type(struct tracer *tr, uint64_t m)
{
	int32_t kind = 0;
	if (ptu_read(tr->proc->pid, m + 16, &kind, sizeof kind) < 0)
		return 0;
	return kind & 3;
}
#define MUTEX_RECURSIVE 1
#define MUTEX_ERRORCHECK 2

/* Is t's call of hook h (returning to *ret) an event, and at which site
 * (*ret, changed for a wrapper's pthread call)?  False: internal. */
static bool call_site(struct tracer *tr, struct tthread *t, int h, uint64_t *ret)
{
	const struct retframe *wrap = wrapper_of(t, h);
	if (wrap) {
		*ret = wrap->site;
		return true;
	}
	if (hook_defs[h].op == OP_EXIT)
		/* main's return calls exit() from libc; libc's own _exit after
		 * an exit() already seen is not a new point */
		return !(t->priv->exit_req || (strcmp(hook_defs[h].name, "exit") && internal_caller(tr, *ret)));
	/* libc calls no spec's function of its own: a return address in
	 * libc, or in a hooked function's body, is a tail call's (libglib's
	 * `jmp g_mutex_unlock` at the end of a callback libc called): the
	 * frames alone tell what a spec's call is in */
	return !(nested_call(tr, t, *ret) || (!(hook_defs[h].flags & HF_SPEC) && internal_caller(tr, *ret)));
}

/* The return address in slot, as the program put it there: --stacks
 * swaps a user frame's for the trampoline (stack.c, watch_return), and a
 * call the frame's function ends in by a tail call (libglib's `jmp
 * g_mutex_unlock` at the end of g_set_prgname) returns through that slot:
 * its site is where the frame returns, as without --stacks.  A spec's
 * own frame keeps the trampoline (nested_call: a tail call in it). */
static uint64_t program_ret(const struct tthread *t, uint64_t slot, uint64_t ret)
{
	for (int k = t->priv->nrets; k-- > 0;)
		if (t->priv->rets[k].sp == slot)
			return t->priv->rets[k].hook == HK_FRAME ? t->priv->rets[k].ret : ret;
	return ret;
}

bool hooks_request(struct tracer *tr, struct tthread *t, int h, struct user_regs_struct *r)
{
	uint64_t ret;
	if (ptu_read_u64(tr->proc->pid, r->rsp, &ret) < 0)
		return false;
	if (ret == tr->proc->as.tramp)
		ret = program_ret(t, r->rsp, ret);
	if (!call_site(tr, t, h, &ret))
		return false;
	const struct hook_def *d = &hook_defs[h];
	struct treq *q = &t->req;
	memset(q, 0, sizeof *q);
	q->hook = h;
	q->site = interceptor_site(tr, ret, r->rbp);
	q->obj = r->rdi;
	if (d->flags & HF_SPEC)
		spec_objects(d, r, q);
	switch (d->op) {
	case OP_CONDWAIT:
	case OP_CONDTIMEDWAIT:
		if (!(d->flags & HF_SPEC))
			q->obj2 = r->rsi;
		q->kind = AVT_EV_WAIT;
		break;
	case OP_LOCK:
	case OP_SPINLOCK: {
		q->kind = AVT_EV_ACQUIRE;
		if (model_owns(&tr->proc->model, q->obj, t->lid)) {
			/* a spec says what its lock is; glibc's mutex says it itself */
			int type = d->flags & HF_SPEC ? (d->flags & HF_RECURSIVE ? MUTEX_RECURSIVE : 0) :
				   d->op == OP_LOCK ? mutex_type(tr, q->obj) : 0;
			if (type == MUTEX_ERRORCHECK)
				q->kind = AVT_EV_NONE; /* returns EDEADLK */
			else if (type != MUTEX_RECURSIVE)
				q->never = true;       /* the thread deadlocks on itself */
		}
		break;
	}
	case OP_UNLOCK:
	case OP_SPINUNLOCK:
	case OP_RWUNLOCK:
		q->kind = AVT_EV_RELEASE;
		break;
	case OP_RDLOCK:
		q->kind = AVT_EV_RD_ACQUIRE;
		break;
	case OP_WRLOCK:
		q->kind = AVT_EV_WR_ACQUIRE;
		break;
	case OP_SIGNAL:
		q->kind = AVT_EV_SIGNAL;
		break;
	case OP_BROADCAST:
		q->kind = AVT_EV_BROADCAST;
		break;
	case OP_SEMPOST:
		q->kind = AVT_EV_SEM_POST;
		break;
	case OP_JOIN:
		q->kind = AVT_EV_JOIN;
		break;
	case OP_EXIT:
		/* other threads may run before the process ends (sched.c) */
		q->kind = AVT_EV_NONE;
		t->priv->exit_req = true;
		t->preempted = true;
		break;
	case OP_SLEEP:
		/* the thread offers the CPU: its turn ends here (sched.c) */
		q->kind = AVT_EV_NONE;
		q->obj = sched_sleep_ns(tr, h, r);
		t->preempted = true;
		break;
	case OP_BARRIER:
		/* the arrival orders a barrier (the last one releases the rest),
		 * so it is the event, and a schedule places it */
		q->kind = AVT_EV_BARRIER;
		break;
	default:
		/* create, try/timed locks, sem waits: emitted later */
		q->kind = AVT_EV_NONE;
		break;
	}
	return true;
}

static int push_frame(struct tracer *tr, struct tthread *t, struct user_regs_struct *r,
		      int hook, uint64_t obj, uint64_t obj2, uint64_t site)
{
	struct tracer_priv_thread *p = t->priv;
	if (p->nrets == MAX_RETFRAMES)
		return -1;
	struct retframe *f = &p->rets[p->nrets];
	if (ptu_read_u64(tr->proc->pid, r->rsp, &f->ret) < 0 ||
	    ptu_write(tr->proc->memfd, r->rsp, &tr->proc->as.tramp, sizeof tr->proc->as.tramp) < 0)
		return -1;
	f->sp = r->rsp;
	f->hook = hook;
	f->obj = obj;
	f->obj2 = obj2;
	f->site = site;
	p->nrets++;
	return 0;
}

static void emit_alloc(struct tracer *tr, struct tthread *t, enum avt_alloc_kind kind,
		       uint64_t addr, uint64_t size, uint64_t site)
{
	struct avt_alloc_rec a;
	memset(&a, 0, sizeof a);
	a.after_seq = tr->seq;
	a.addr = addr;
	a.size = size;
	a.thread = t->lid;
	a.kind = (uint16_t)kind;
	tr->stats.heap_blocks += kind != AVT_ALLOC_FREE;
	tracer_site(tr, site, &a.site_mod, &a.site_off);
	if (tr->sink.alloc)
		tr->sink.alloc(tr->sink.ctx, tr, &a);
}

bool hooks_transparent(int h)
{
	return hop_is_heap(hook_defs[h].op) || (hook_defs[h].flags & HF_WRAP);
}

void hooks_heap_entry(struct tracer *tr, struct tthread *t, int h, struct user_regs_struct *r)
{
	uint64_t ret;
	if (ptu_read_u64(tr->proc->pid, r->rsp, &ret) < 0 || internal_caller(tr, ret))
		return;
	if (hook_defs[h].flags & HF_WRAP) {
		/* its pthread call takes this site (wrapper_of) */
		if (!nested_call(tr, t, ret))
			push_frame(tr, t, r, h, 0, 0, ret);
		return;
	}
	switch (hook_defs[h].op) {
	case OP_FREE:
		if (r->rdi)
			emit_alloc(tr, t, AVT_ALLOC_FREE, r->rdi, 0, ret);
		return;
	case OP_MALLOC:
		push_frame(tr, t, r, h, r->rdi, 0, ret);
		return;
	case OP_CALLOC:
		push_frame(tr, t, r, h, r->rdi * r->rsi, 0, ret);
		return;
	case OP_REALLOC:
		push_frame(tr, t, r, h, r->rsi, r->rdi, ret);
		return;
	default:
		return;
	}
}

/* The request's call: its return comes back through the trampoline. */
static int push_ret(struct tracer *tr, struct tthread *t, struct user_regs_struct *r)
{
	return push_frame(tr, t, r, t->req.hook, t->req.obj, t->req.obj2, t->req.site);
}

static struct tthread *thread_by_fs(struct tracer *tr, uint64_t fs)
{
	return process_by_fs(tr->proc, fs);
}

static void wake_waiters(struct tracer *tr, enum twait w, uint64_t obj, bool all)
{
	struct tthread *best = NULL;
	for (size_t i = 0; i < tr->proc->nthr; i++) {
		struct tthread *o = tr->proc->thr[i];
		if (!o || o->state == TS_DEAD || o->wait_obj != obj || o->woken)
			continue;
		if (o->wait != w && !(w == TW_COND && o->wait == TW_TIMED))
			continue;
		if (all)
			o->woken = true;
		else if (!best || o->wait_seq < best->wait_seq)
			best = o;
	}
	if (best)
		best->woken = true;
}

static void begin_wait(struct tracer *tr, struct tthread *t, enum twait w, uint64_t obj)
{
	t->wait = w;
	t->wait_obj = obj;
	t->woken = false;
	t->wait_seq = ++tr->wait_seq;
	t->priv->expect_block = true;
}

static void acquire(struct tracer *tr, struct tthread *t, uint64_t obj, enum avt_kind kind,
		    uint64_t obj2, uint64_t site, uint16_t flags)
{
	bool first;
	if (model_acquire(&tr->proc->model, obj, t->lid, kind == AVT_EV_RD_ACQUIRE, &first))
		flags |= AVT_F_RECURSIVE;
	tr->stats.mutexes += first;
	tr_emit(tr, t, kind, obj, obj2, site, flags, 0);
}

static void release(struct tracer *tr, struct tthread *t, uint64_t obj, uint64_t site)
{
	/* unlocking what was never locked, or not by t: not an event */
	int held = model_release_lock(&tr->proc->model, obj, t->lid);
	if (held < 0)
		return;
	tr_emit(tr, t, AVT_EV_RELEASE, obj, 0, site, held ? AVT_F_RECURSIVE : 0, 0);
}

static int commit_op(struct tracer *tr, struct tthread *t, struct user_regs_struct *r)
{
	struct treq *q = &t->req;
	switch (hook_defs[q->hook].op) {
	case OP_CREATE: {
		t->priv->create_site = q->site;
		uint64_t ret = 0;
		if (ptu_read_u64(tr->proc->pid, r->rsp, &ret) == 0 && ret == tr->proc->as.tramp)
			ret = program_ret(t, r->rsp, ret);
		/* the start routine's argument: pthread_create's 4th, thrd_create's 3rd */
		if (hook_defs[q->hook].name && !strcmp(hook_defs[q->hook].name, "pthread_create"))
			create_arg(tr, t, ret, r->rbp, r->rcx, r->rsp);
		else if (hook_defs[q->hook].name && !strcmp(hook_defs[q->hook].name, "thrd_create"))
			create_arg(tr, t, ret, r->rbp, r->rdx, r->rsp);
		return 0;
	}
	case OP_JOIN: {
		struct tthread *c = thread_by_fs(tr, q->obj);
		tr_emit(tr, t, AVT_EV_JOIN, c ? c->lid : UINT32_MAX, 0, q->site, 0, 0);
		return 0;
	}
	case OP_LOCK:
	case OP_SPINLOCK:
	case OP_WRLOCK:
	case OP_RDLOCK:
		if (q->kind != AVT_EV_NONE)
			acquire(tr, t, q->obj, q->kind, 0, q->site, 0);
		return 0;
	case OP_UNLOCK:
	case OP_SPINUNLOCK:
	case OP_RWUNLOCK:
		release(tr, t, q->obj, q->site);
		return 0;
	case OP_CONDWAIT:
	case OP_CONDTIMEDWAIT: {
		tr_emit(tr, t, AVT_EV_WAIT, q->obj, q->obj2, q->site, 0, 0);
		model_drop_owner(&tr->proc->model, q->obj2, t->lid);
		tr->stats.condvars += model_note_cond(&tr->proc->model, q->obj);
		begin_wait(tr, t, hook_defs[q->hook].op == OP_CONDWAIT ? TW_COND : TW_TIMED, q->obj);
		return push_ret(tr, t, r);
	}
	case OP_SIGNAL:
	case OP_BROADCAST:
		hooks_signal(tr, t, q->obj, q->kind, q->site);
		return 0;
	case OP_SEMPOST:
		tr_emit(tr, t, AVT_EV_SEM_POST, q->obj, 0, q->site, 0, 0);
		wake_waiters(tr, TW_SEM, q->obj, true);
		return 0;
	case OP_BARRIER:
		tr_emit(tr, t, AVT_EV_BARRIER, q->obj, 0, q->site, 0, 0);
		begin_wait(tr, t, TW_BARRIER, q->obj);
		return push_ret(tr, t, r);
	case OP_EXIT:
		return 0; /* it never returns */
	case OP_SLEEP:
		if (q->obj == 0)
			return 0; /* sched_yield, a zero sleep: never blocks */
		/* it may sleep in the kernel: a last resort then, never held
		 * for ever; its return ends the wait */
		begin_wait(tr, t, TW_SLEEP, 0);
		t->priv->sync_sleep = tr->opts.sync_sleeps && q->obj <= 1000000000ull;
		return push_ret(tr, t, r);
	case OP_SEMWAIT:
	case OP_SEMTIMEDWAIT:
		begin_wait(tr, t, hook_defs[q->hook].op == OP_SEMWAIT ? TW_SEM : TW_TIMED, q->obj);
		return push_ret(tr, t, r);
	default: /* try and timed locks, sem_trywait */
		return push_ret(tr, t, r);
	}
}

/* Did the commit since frame `before` watch the call's own return (a
 * frame of a hook at the call's return slot)?  The event's stack
 * (--stacks) watches the returns of the user frames above it too. */
static bool own_frame_pushed(const struct tthread *t, int before, uint64_t slot)
{
	for (int k = before; k < t->priv->nrets; k++)
		if (t->priv->rets[k].hook != HK_FRAME && t->priv->rets[k].sp == slot)
			return true;
	return false;
}

/* Every call of a spec's function has its return frame: the calls it
 * makes are its own (nested_call), until it returns.  (Counting frames
 * took --stacks' frames, pushed by the call's event, for its own: with
 * --stacks the GMutex that g_once_init_enter takes inside was an event
 * of its own, recorded but never replayed, and every replay of GLib's
 * thread-pool test diverged at its 8th event.) */
int hooks_commit(struct tracer *tr, struct tthread *t, struct user_regs_struct *r)
{
	int before = t->priv->nrets;
	uint64_t slot = r->rsp;
	int rc = commit_op(tr, t, r);
	if (rc == 0 && (hook_defs[t->req.hook].flags & HF_SPEC) && !own_frame_pushed(t, before, slot))
		rc = push_ret(tr, t, r);
	return rc;
}

/* Did a try-lock (or a timed wait) of hook d succeed (wake) with rv? */
static bool call_ok(const struct hook_def *d, int64_t rv)
{
	if (d->flags & HF_SPEC)
		return d->flags & HF_OK_NONZERO ? (int32_t)rv != 0 : (int32_t)rv == 0;
	/* EOWNERDEAD: a robust mutex whose owner died, taken */
	return rv == 0 || rv == EOWNERDEAD;
}

/* The return of a spec's call whose return means nothing more than its
 * end (1: no scheduling point), or that releases a `once` (0). */
static int spec_return(struct tracer *tr, struct tthread *t, const struct retframe *f, int64_t rv)
{
	const struct hook_def *d = &hook_defs[f->hook];
	if ((d->flags & HF_ONCE) || ((d->flags & HF_ONCE_ENTER) && (int32_t)rv == 0)) {
		release(tr, t, f->obj, f->site);
		return 0;
	}
	return 1;
}

/* The return of an allocating call (op) of size with rv; realloc's old
 * block: the records. */
static void heap_returned(struct tracer *tr, struct tthread *t, enum hop op, uint64_t rv,
			  uint64_t size, uint64_t old, uint64_t site)
{
	/* realloc that moved (or freed) the block: the old one is gone */
	if (op == OP_REALLOC && old && rv != old)
		emit_alloc(tr, t, AVT_ALLOC_FREE, old, 0, site);
	if (rv)
		emit_alloc(tr, t, op == OP_MALLOC ? AVT_ALLOC_MALLOC :
			   op == OP_CALLOC ? AVT_ALLOC_CALLOC : AVT_ALLOC_REALLOC, rv, size, site);
}

/* The agent's record of a heap call: what hooks_heap_entry and the
 * call's return through the trampoline make of it, by the same filter
 * (the caller's address only: the heap's calls are never nested in a
 * spec's).  False: libc's call, or ld.so's, not the program's. */
bool hooks_heap_call(struct tracer *tr, struct tthread *t, enum hop op, uint64_t rv,
		     uint64_t size, uint64_t old, uint64_t site)
{
	if (internal_caller(tr, site))
		return false;
	if (op == OP_FREE) {
		if (rv)
			emit_alloc(tr, t, AVT_ALLOC_FREE, rv, 0, site);
		return true;
	}
	heap_returned(tr, t, op, rv, size, old, site);
	return true;
}

/* The built-in hook of op (its first: pthread_create, pthread_join), or -1. */
static int builtin_hook(enum hop op)
{
	for (size_t i = 0; i < n_builtin_hooks; i++)
		if (hook_defs[i].op == op)
			return (int)i;
	return -1;
}

void hooks_create_call(struct tracer *tr, struct tthread *t, uint64_t ret, uint64_t rbp,
		       uint64_t arg, uint64_t sp)
{
	int h = builtin_hook(OP_CREATE);
	/* the filter and the site of hooks_request, the commit of commit_op */
	if (h >= 0 && call_site(tr, t, h, &ret)) {
		t->priv->create_site = interceptor_site(tr, ret, rbp);
		create_arg(tr, t, ret, rbp, arg, sp);
	}
}

void hooks_join_call(struct tracer *tr, struct tthread *t, uint64_t th, uint64_t ret, uint64_t rbp)
{
	int h = builtin_hook(OP_JOIN);
	if (h < 0 || !call_site(tr, t, h, &ret))
		return;
	struct tthread *c = thread_by_fs(tr, th);
	tr_emit(tr, t, AVT_EV_JOIN, c ? c->lid : UINT32_MAX, 0, interceptor_site(tr, ret, rbp), 0, 0);
}

int hooks_return(struct tracer *tr, struct tthread *t, struct user_regs_struct *r)
{
	struct tracer_priv_thread *p = t->priv;
	if (!p->nrets)
		return -1;
	/* longjmp or the like skipped frames: drop those below the stack */
	while (p->nrets > 1 && p->rets[p->nrets - 1].sp + 8 < r->rsp)
		p->nrets--;
	struct retframe f = p->rets[--p->nrets];
	r->rip = f.ret;
	if (f.hook == HK_FRAME) {
		stack_frame_returned(t, f.sp);
		return 1;
	}
	int64_t rv = (int64_t)r->rax;
	uint16_t tflag = 0;
	enum hop op = hook_defs[f.hook].op;
	if (hop_is_heap(op)) {
		heap_returned(tr, t, op, (uint64_t)rv, f.obj, f.obj2, f.site);
		return 1;
	}
	if (hook_defs[f.hook].flags & HF_WRAP)
		return 1;
	t->wait = TW_NONE;
	p->expect_block = false;
	p->sync_sleep = false;
	switch (op) {
	case OP_TRYLOCK:
	case OP_TIMEDLOCK:
	case OP_SPINTRYLOCK:
	case OP_TRYWRLOCK:
	case OP_TIMEDWRLOCK:
	case OP_TRYRDLOCK:
	case OP_TIMEDRDLOCK: {
		bool rd = op == OP_TRYRDLOCK || op == OP_TIMEDRDLOCK;
		bool wr = op == OP_TRYWRLOCK || op == OP_TIMEDWRLOCK;
		if (call_ok(&hook_defs[f.hook], rv))
			acquire(tr, t, f.obj, rd ? AVT_EV_RD_ACQUIRE : wr ? AVT_EV_WR_ACQUIRE : AVT_EV_ACQUIRE,
				0, f.site, 0);
		else
			tr_emit(tr, t, AVT_EV_TRYLOCK_FAIL, f.obj, 0, f.site,
				op == OP_TIMEDLOCK || op == OP_TIMEDWRLOCK || op == OP_TIMEDRDLOCK ?
				AVT_F_TIMED_OUT : 0, 0);
		return 0;
	}
	case OP_CONDWAIT:
	case OP_CONDTIMEDWAIT:
		/* glibc returns ETIMEDOUT; C11's cnd_timedwait thrd_timedout (4);
		 * a spec says which */
		if (op == OP_CONDTIMEDWAIT &&
		    (hook_defs[f.hook].flags & HF_SPEC ? !call_ok(&hook_defs[f.hook], rv) :
		     rv == ETIMEDOUT || rv == 4))
			tflag = AVT_F_TIMED_OUT;
		acquire(tr, t, f.obj2, AVT_EV_ACQUIRE, f.obj, f.site, AVT_F_COND_WAKE | tflag);
		return 0;
	case OP_BARRIER:
		/* it got through: so did everyone waiting on that barrier */
		wake_waiters(tr, TW_BARRIER, f.obj, true);
		return 0;
	case OP_SEMWAIT:
	case OP_SEMTIMEDWAIT:
	case OP_SEMTRYWAIT:
		if (rv == 0)
			tr_emit(tr, t, AVT_EV_SEM_WAIT, f.obj, 0, f.site, 0, 0);
		return 0;
	default:
		return hook_defs[f.hook].flags & HF_SPEC ? spec_return(tr, t, &f, rv) : 0;
	}
}

/* t entered the unwinder (pthread_cancel's or pthread_exit's forced
 * unwind) inside a condition wait: glibc's cleanup of the wait takes the
 * mutex back before any handler of the program runs (a cancelled
 * pthread_cond_wait returns, so to speak, with the mutex held).  That
 * acquire becomes t's request, at the wait's call site, so the model
 * commits it only when the mutex is free and the handler's unlock is the
 * release of a lock t holds.  Returns false when t is in no such wait. */
bool hooks_cancel_wait(struct tracer *tr, struct tthread *t)
{
	struct tracer_priv_thread *p = t->priv;
	int lock = -1;
	for (size_t i = 0; i < n_hook_defs && lock < 0; i++)
		if (!strcmp(hook_defs[i].name, "pthread_mutex_lock"))
			lock = (int)i;
	for (int k = p->nrets; k-- > 0;) {
		const struct retframe *f = &p->rets[k];
		if (f->hook < 0 || hop_is_heap(hook_defs[f->hook].op))
			continue;
		enum hop op = hook_defs[f->hook].op;
		if ((op != OP_CONDWAIT && op != OP_CONDTIMEDWAIT) || lock < 0 || !f->obj2)
			return false;
		struct treq *q = &t->req;
		memset(q, 0, sizeof *q);
		q->hook = lock;
		q->kind = AVT_EV_ACQUIRE;
		q->obj = f->obj2;
		q->site = f->site;
		return true;
	}
	return false;
}

/* The same steps for a call the in-process agent took (agent.c). */
void hooks_acquire(struct tracer *tr, struct tthread *t, uint64_t obj, enum avt_kind kind,
		   uint64_t obj2, uint64_t site, uint16_t flags)
{
	acquire(tr, t, obj, kind, obj2, site, flags);
}

void hooks_release(struct tracer *tr, struct tthread *t, uint64_t obj, uint64_t site)
{
	release(tr, t, obj, site);
}

/* A condition variable signalled or broadcast (kind): the event, and the
 * waiters it wakes in the model.  Also for the agent's records. */
void hooks_signal(struct tracer *tr, struct tthread *t, uint64_t obj, enum avt_kind kind,
		  uint64_t site)
{
	tr->stats.condvars += model_note_cond(&tr->proc->model, obj);
	tr_emit(tr, t, kind, obj, 0, site, 0, 0);
	wake_waiters(tr, TW_COND, obj, kind == AVT_EV_BROADCAST);
}

bool hooks_nested_call(struct tracer *tr, struct tthread *t, uint64_t ret)
{
	return nested_call(tr, t, ret);
}

bool hooks_internal_caller(struct tracer *tr, struct tthread *t, uint64_t ret)
{
	return internal_caller(tr, ret) || nested_call(tr, t, ret);
}
