/*
 * The lock model (tracer/model.c), the one place its table changes and is
 * asked: acquisitions, releases, recursion, readers, and "can this thread
 * run?" for requests and waits.  A tracer with no process: the model needs
 * none (no robust mutex here, whose kind it would read).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/tracer_int.h"
#include "unit_util.h"

static struct tracer tr;
static struct process proc;
static struct process *procs[1] = { &proc };
static struct tthread th[3];
static struct tracer_priv_thread priv[3];
static struct tthread *thr[3];

static int hook(const char *name)
{
	for (size_t i = 0; i < n_hook_defs; i++)
		if (!strcmp(hook_defs[i].name, name))
			return (int)i;
	ck_abort_msg("no hook %s", name);
	return -1;
}

static void setup(void)
{
	memset(&tr, 0, sizeof tr);
	memset(&proc, 0, sizeof proc);
	tr.procs = procs;
	tr.nprocs = 1;
	tr.proc = &proc;
	model_init(&proc.model);
	for (uint32_t i = 0; i < 3; i++) {
		memset(&th[i], 0, sizeof th[i]);
		memset(&priv[i], 0, sizeof priv[i]);
		th[i].lid = i;
		th[i].tid = 100 + (int)i;
		th[i].state = TS_READY;
		th[i].priv = &priv[i];
		priv[i].proc = &proc;
		thr[i] = &th[i];
	}
	proc.thr = thr;
	proc.nthr = 3;
}

static void teardown(void)
{
	model_release(&proc.model);
	free(proc.fsmap);
}

/* t stops at a request of hook name on obj */
static void request(struct tthread *t, const char *name, uint64_t obj)
{
	memset(&t->req, 0, sizeof t->req);
	t->req.hook = hook(name);
	t->req.obj = obj;
	t->state = TS_REQ;
}

START_TEST(acquire_release)
{
	bool first;
	ck_assert(!model_acquire(&proc.model, 0x1000, 0, false, &first));
	ck_assert(first);
	ck_assert(model_owns(&proc.model, 0x1000, 0));
	ck_assert_uint_eq(model_holder(&proc.model, 0x1000), 0);
	/* a recursive acquisition, then two releases */
	ck_assert(model_acquire(&proc.model, 0x1000, 0, false, &first));
	ck_assert(!first);
	ck_assert_int_eq(model_release_lock(&proc.model, 0x1000, 0), 1);
	ck_assert_int_eq(model_release_lock(&proc.model, 0x1000, 0), 0);
	ck_assert_uint_eq(model_holder(&proc.model, 0x1000), NO_THREAD);
	/* released again, or by another thread: not an event */
	ck_assert_int_eq(model_release_lock(&proc.model, 0x1000, 0), -1);
	ck_assert_int_eq(model_release_lock(&proc.model, 0x2000, 1), -1);
	/* a later acquisition is not the lock's first */
	model_acquire(&proc.model, 0x1000, 1, false, &first);
	ck_assert(!first);
	ck_assert_uint_eq(model_holder(&proc.model, 0x1000), 1);
}
END_TEST

START_TEST(can_run_lock_requests)
{
	bool first;
	model_acquire(&proc.model, 0x1000, 0, false, &first);
	request(&th[1], "pthread_mutex_lock", 0x1000);
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 0);
	/* a timed lock of a held lock can only time out: last resort */
	request(&th[2], "pthread_mutex_timedlock", 0x1000);
	ck_assert_int_eq(model_can_run(&tr, &th[2]), 2);
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 1); /* ready */
	model_release_lock(&proc.model, 0x1000, 0);
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 1);
	ck_assert_int_eq(model_can_run(&tr, &th[2]), 1);
	/* running, new and dead threads cannot be picked */
	th[0].state = TS_RUNNING;
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 0);
	th[0].state = TS_DEAD;
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 0);
	th[0].state = TS_NEW;
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 0);
}
END_TEST

START_TEST(readers_and_writers)
{
	bool first;
	model_acquire(&proc.model, 0x3000, 0, true, &first);
	request(&th[1], "pthread_rwlock_rdlock", 0x3000);
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 1);
	request(&th[2], "pthread_rwlock_wrlock", 0x3000);
	ck_assert_int_eq(model_can_run(&tr, &th[2]), 0);
	ck_assert_int_eq(model_release_lock(&proc.model, 0x3000, 0), 0);
	ck_assert_int_eq(model_can_run(&tr, &th[2]), 1);
}
END_TEST

START_TEST(join_waits_for_exit)
{
	process_set_fs(&proc, &th[2], 0x7000); /* T2's pthread_t */
	request(&th[0], "pthread_join", 0x7000);
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 0);
	th[2].state = TS_DEAD;
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 1);
	/* glibc gives the pthread_t to a new thread: the join is of T1 now */
	th[1].state = TS_READY;
	process_set_fs(&proc, &th[1], 0x7000);
	ck_assert_uint_eq(th[2].fs_base, 0);
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 0);
	process_set_fs(&proc, &th[1], 0x9000);
	ck_assert_int_eq(model_can_run(&tr, &th[0]), 1); /* no thread has it: nothing to wait for */
}
END_TEST

START_TEST(cond_wait_wakes)
{
	bool first;
	/* T1 waits on a condition with mutex 0x1000, which T0 holds */
	model_acquire(&proc.model, 0x1000, 1, false, &first);
	model_drop_owner(&proc.model, 0x1000, 1);
	ck_assert(model_note_cond(&proc.model, 0x5000));
	ck_assert(!model_note_cond(&proc.model, 0x5000));
	th[1].state = TS_KWAIT;
	th[1].wait = TW_COND;
	th[1].wait_obj = 0x5000;
	priv[1].nrets = 1;
	priv[1].rets[0].obj = 0x5000;
	priv[1].rets[0].obj2 = 0x1000;
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 0); /* not signalled */
	th[1].woken = true;
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 1);
	model_acquire(&proc.model, 0x1000, 0, false, &first);
	ck_assert_int_eq(model_can_run(&tr, &th[1]), 0); /* its mutex is held */
}
END_TEST

START_TEST(offered_and_view)
{
	bool first;
	uint64_t lock = 0;
	uint32_t held = 9;
	model_acquire(&proc.model, 0x1000, 0, false, &first);
	model_acquire(&proc.model, 0x1000, 0, false, &first);
	request(&th[1], "pthread_mutex_lock", 0x1000);
	/* held by self (T0) twice: offered to T1 while T0 gives it up */
	ck_assert(model_lock_offered(&tr, &th[1], 0, &lock, &held));
	ck_assert_uint_eq(lock, 0x1000);
	ck_assert_uint_eq(held, 2);
	/* not when someone else holds it */
	ck_assert(!model_lock_offered(&tr, &th[1], 2, &lock, &held));
	struct tracer_view v;
	memset(&v, 0, sizeof v);
	model_view_locks(&tr, &v);
	ck_assert(v.locks_known);
	ck_assert_uint_eq(v.nlocks, 1);
	ck_assert_uint_eq(v.locks[0].obj, 0x1000);
	ck_assert_uint_eq(v.locks[0].owner, 0);
	ck_assert_uint_eq(v.locks[0].count, 2);
	/* its owner died: the view cannot say (a robust mutex may be taken) */
	th[0].state = TS_DEAD;
	model_view_locks(&tr, &v);
	ck_assert(!v.locks_known);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, acquire_release);
	tcase_add_test(tc, can_run_lock_requests);
	tcase_add_test(tc, readers_and_writers);
	tcase_add_test(tc, join_waits_for_exit);
	tcase_add_test(tc, cond_wait_wakes);
	tcase_add_test(tc, offered_and_view);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
