/*
 * The hooked functions and what each does to the model (enum hop): one
 * table, indexed by hook number, read by hooks.c (planting, requests,
 * commits), model.c, sched.c, the agent and the loop.  Data only: below
 * every file that reads it.
 */
#include <string.h>

#include "syncspec.h"
#include "tracer_int.h"

#define BUILTIN_HOOKS \
	{ .name = "pthread_create", .op = OP_CREATE }, \
	{ .name = "pthread_join", .op = OP_JOIN }, \
	/* ld.so takes its TLS lock through these at every thread's start \
	 * (dl_load_tls_lock), C11's mtx_lock and mtx_unlock call them: \
	 * calls that are no event, gated (hooks.c, gate_internal) */ \
	{ .name = "pthread_mutex_lock", .op = OP_LOCK, .flags = HF_GATED }, \
	{ .name = "pthread_mutex_trylock", .op = OP_TRYLOCK }, \
	{ .name = "pthread_mutex_timedlock", .op = OP_TIMEDLOCK }, \
	{ .name = "pthread_mutex_clocklock", .op = OP_TIMEDLOCK }, \
	{ .name = "pthread_mutex_unlock", .op = OP_UNLOCK, .flags = HF_GATED }, \
	{ .name = "pthread_rwlock_rdlock", .op = OP_RDLOCK }, \
	{ .name = "pthread_rwlock_wrlock", .op = OP_WRLOCK }, \
	{ .name = "pthread_rwlock_tryrdlock", .op = OP_TRYRDLOCK }, \
	{ .name = "pthread_rwlock_trywrlock", .op = OP_TRYWRLOCK }, \
	{ .name = "pthread_rwlock_timedrdlock", .op = OP_TIMEDRDLOCK }, \
	{ .name = "pthread_rwlock_timedwrlock", .op = OP_TIMEDWRLOCK }, \
	{ .name = "pthread_rwlock_clockrdlock", .op = OP_TIMEDRDLOCK }, \
	{ .name = "pthread_rwlock_clockwrlock", .op = OP_TIMEDWRLOCK }, \
	{ .name = "pthread_rwlock_unlock", .op = OP_RWUNLOCK }, \
	{ .name = "pthread_spin_lock", .op = OP_SPINLOCK }, \
	{ .name = "pthread_spin_trylock", .op = OP_SPINTRYLOCK }, \
	{ .name = "pthread_spin_unlock", .op = OP_SPINUNLOCK }, \
	{ .name = "pthread_cond_wait", .op = OP_CONDWAIT }, \
	{ .name = "pthread_cond_timedwait", .op = OP_CONDTIMEDWAIT }, \
	{ .name = "pthread_cond_clockwait", .op = OP_CONDTIMEDWAIT }, \
	{ .name = "pthread_cond_signal", .op = OP_SIGNAL }, \
	{ .name = "pthread_cond_broadcast", .op = OP_BROADCAST }, \
	{ .name = "pthread_barrier_wait", .op = OP_BARRIER }, \
	{ .name = "sem_wait", .op = OP_SEMWAIT }, \
	{ .name = "sem_trywait", .op = OP_SEMTRYWAIT }, \
	{ .name = "sem_timedwait", .op = OP_SEMTIMEDWAIT }, \
	{ .name = "sem_clockwait", .op = OP_SEMTIMEDWAIT }, \
	{ .name = "sem_post", .op = OP_SEMPOST }, \
	/* C11 <threads.h>: glibc's wrappers call the pthread functions, which \
	 * the caller filter then ignores */ \
	{ .name = "thrd_create", .op = OP_CREATE }, \
	{ .name = "thrd_join", .op = OP_JOIN }, \
	{ .name = "mtx_lock", .op = OP_LOCK }, \
	{ .name = "mtx_trylock", .op = OP_TRYLOCK }, \
	{ .name = "mtx_timedlock", .op = OP_TIMEDLOCK }, \
	{ .name = "mtx_unlock", .op = OP_UNLOCK }, \
	{ .name = "cnd_wait", .op = OP_CONDWAIT }, \
	{ .name = "cnd_timedwait", .op = OP_CONDTIMEDWAIT }, \
	{ .name = "cnd_signal", .op = OP_SIGNAL }, \
	{ .name = "cnd_broadcast", .op = OP_BROADCAST }, \
	/* process exit: a scheduling point before the exit takes effect \
	 * (its event is emitted at exit_group); exit() is called by libc \
	 * itself when main returns, so it is not filtered by caller */ \
	{ .name = "exit", .op = OP_EXIT }, \
	{ .name = "_exit", .op = OP_EXIT }, \
	{ .name = "_Exit", .op = OP_EXIT }, \
	/* sleeping calls: scheduling points, no event (sched.c) */ \
	{ .name = "nanosleep", .op = OP_SLEEP }, \
	{ .name = "clock_nanosleep", .op = OP_SLEEP }, \
	{ .name = "usleep", .op = OP_SLEEP }, \
	{ .name = "sleep", .op = OP_SLEEP }, \
	{ .name = "sched_yield", .op = OP_SLEEP }, \
	{ .name = "poll", .op = OP_SLEEP }, \
	{ .name = "ppoll", .op = OP_SLEEP }, \
	{ .name = "select", .op = OP_SLEEP }, \
	{ .name = "pselect", .op = OP_SLEEP }, \
	{ .name = "epoll_wait", .op = OP_SLEEP }, \
	{ .name = "epoll_pwait", .op = OP_SLEEP }, \
	{ .name = "thrd_sleep", .op = OP_SLEEP }, \
	{ .name = "thrd_yield", .op = OP_SLEEP }, \
	{ .name = "malloc", .op = OP_MALLOC }, \
	{ .name = "calloc", .op = OP_CALLOC }, \
	{ .name = "realloc", .op = OP_REALLOC }, \
	{ .name = "free", .op = OP_FREE }, \
	/* end */

static const struct hook_def builtin[] = { BUILTIN_HOOKS };

/* The built-in hooks first, then those of the sessions' sync specs
 * (hooks_add_spec in hooks.c), appended as a session plants them: the
 * same specs in every session of a process (they come from its options),
 * so the table only grows, and a hook's number never changes. */
struct hook_def hook_defs[HOOK_MAX] = { BUILTIN_HOOKS };
size_t n_hook_defs = sizeof builtin / sizeof builtin[0];
const size_t n_builtin_hooks = sizeof builtin / sizeof builtin[0];

_Static_assert(sizeof builtin / sizeof builtin[0] < HOOK_MAX, "room for the specs' hooks");

bool syncspec_builtin_name(const char *name)
{
	for (size_t i = 0; i < n_builtin_hooks; i++)
		if (!strcmp(builtin[i].name, name))
			return true;
	return false;
}
