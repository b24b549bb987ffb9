/*
 * The hooked functions and what each does to the model (enum hop): one
 * table, indexed by hook number, read by hooks.c (planting, requests,
 * commits), model.c, sched.c, the agent and the loop.  Data only: below
 * every file that reads it.
 */
#include "tracer_int.h"

const struct hook_def hook_defs[] = {
	{ "pthread_create", OP_CREATE },
	{ "pthread_join", OP_JOIN },
	{ "pthread_mutex_lock", OP_LOCK },
	{ "pthread_mutex_trylock", OP_TRYLOCK },
	{ "pthread_mutex_timedlock", OP_TIMEDLOCK },
	{ "pthread_mutex_clocklock", OP_TIMEDLOCK },
	{ "pthread_mutex_unlock", OP_UNLOCK },
	{ "pthread_rwlock_rdlock", OP_RDLOCK },
	{ "pthread_rwlock_wrlock", OP_WRLOCK },
	{ "pthread_rwlock_tryrdlock", OP_TRYRDLOCK },
	{ "pthread_rwlock_trywrlock", OP_TRYWRLOCK },
	{ "pthread_rwlock_timedrdlock", OP_TIMEDRDLOCK },
	{ "pthread_rwlock_timedwrlock", OP_TIMEDWRLOCK },
	{ "pthread_rwlock_clockrdlock", OP_TIMEDRDLOCK },
	{ "pthread_rwlock_clockwrlock", OP_TIMEDWRLOCK },
	{ "pthread_rwlock_unlock", OP_RWUNLOCK },
	{ "pthread_spin_lock", OP_SPINLOCK },
	{ "pthread_spin_trylock", OP_SPINTRYLOCK },
	{ "pthread_spin_unlock", OP_SPINUNLOCK },
	{ "pthread_cond_wait", OP_CONDWAIT },
	{ "pthread_cond_timedwait", OP_CONDTIMEDWAIT },
	{ "pthread_cond_clockwait", OP_CONDTIMEDWAIT },
	{ "pthread_cond_signal", OP_SIGNAL },
	{ "pthread_cond_broadcast", OP_BROADCAST },
	{ "pthread_barrier_wait", OP_BARRIER },
	{ "sem_wait", OP_SEMWAIT },
	{ "sem_trywait", OP_SEMTRYWAIT },
	{ "sem_timedwait", OP_SEMTIMEDWAIT },
	{ "sem_clockwait", OP_SEMTIMEDWAIT },
	{ "sem_post", OP_SEMPOST },
	/* C11 <threads.h>: glibc's wrappers call the pthread functions, which
	 * the caller filter then ignores */
	{ "thrd_create", OP_CREATE },
	{ "thrd_join", OP_JOIN },
	{ "mtx_lock", OP_LOCK },
	{ "mtx_trylock", OP_TRYLOCK },
	{ "mtx_timedlock", OP_TIMEDLOCK },
	{ "mtx_unlock", OP_UNLOCK },
	{ "cnd_wait", OP_CONDWAIT },
	{ "cnd_timedwait", OP_CONDTIMEDWAIT },
	{ "cnd_signal", OP_SIGNAL },
	{ "cnd_broadcast", OP_BROADCAST },
	/* process exit: a scheduling point before the exit takes effect
	 * (its event is emitted at exit_group); exit() is called by libc
	 * itself when main returns, so it is not filtered by caller */
	{ "exit", OP_EXIT },
	{ "_exit", OP_EXIT },
	{ "_Exit", OP_EXIT },
	/* sleeping calls: scheduling points, no event (sched.c) */
	{ "nanosleep", OP_SLEEP },
	{ "clock_nanosleep", OP_SLEEP },
	{ "usleep", OP_SLEEP },
	{ "sleep", OP_SLEEP },
	{ "sched_yield", OP_SLEEP },
	{ "poll", OP_SLEEP },
	{ "ppoll", OP_SLEEP },
	{ "select", OP_SLEEP },
	{ "pselect", OP_SLEEP },
	{ "epoll_wait", OP_SLEEP },
	{ "epoll_pwait", OP_SLEEP },
	{ "thrd_sleep", OP_SLEEP },
	{ "thrd_yield", OP_SLEEP },
	{ "malloc", OP_MALLOC },
	{ "calloc", OP_CALLOC },
	{ "realloc", OP_REALLOC },
	{ "free", OP_FREE },
};
const size_t n_hook_defs = sizeof hook_defs / sizeof hook_defs[0];
_Static_assert(sizeof hook_defs / sizeof hook_defs[0] <= sizeof ((struct aspace *)0)->hook_addr /
	       sizeof ((struct aspace *)0)->hook_addr[0], "hook_addr is 64 long");
