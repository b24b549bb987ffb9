/*
 * The agent's shared-memory protocol (trace/agent_proto.h), without
 * ptrace: region validation, ticket order across wrap-around, a full ring
 * refusing claims, an uncommitted slot holding the ordinary drain and
 * skipped by the final one, concurrent producers, and a producer process
 * SIGKILLed at whatever point it reached: everything it committed is
 * drained, in order.  Then the agent library itself (agent_fix, run with
 * LD_PRELOAD and no tracer): what it commits for lock, trylock, unlock,
 * recursive and error-checking mutexes and a forked child.
 */
#include <stdbool.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/agent_proto.h"
#include "unit_util.h"

static struct avt_agent_hdr *region(uint32_t nslots, size_t *len)
{
	*len = avt_agent_region_size(nslots, 16);
	void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	avt_agent_init(p, nslots, 16);
	return p;
}

static void put(struct avt_agent_hdr *h, uint64_t obj)
{
	int64_t t = avt_agent_claim(h, 0);
	ck_assert_int_ge(t, 0);
	avt_agent_commit(h, (uint64_t)t, AVT_EV_ACQUIRE, obj, 0x1000 + obj, 7);
}

START_TEST(test_valid)
{
	size_t len;
	struct avt_agent_hdr *h = region(16, &len);
	ck_assert(avt_agent_valid(h, len));
	ck_assert(!avt_agent_valid(h, len - 1));        /* slots past the mapping */
	h->version = AVT_AGENT_VERSION + 1;
	ck_assert(!avt_agent_valid(h, len));
	h->version = AVT_AGENT_VERSION;
	h->nslots = 12;                                   /* not a power of two */
	ck_assert(!avt_agent_valid(h, len));
	h->nslots = 16;
	h->magic[0] = 'X';
	ck_assert(!avt_agent_valid(h, len));
	munmap(h, len);
}
END_TEST

START_TEST(test_order_and_wrap)
{
	size_t len;
	struct avt_agent_hdr *h = region(8, &len);
	struct avt_event ev;
	uint64_t next = 0, want = 0;
	/* rounds of 5 in, 5 out: tickets wrap the 8 slots many times */
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 5; i++)
			put(h, next++);
		for (int i = 0; i < 5; i++) {
			ck_assert_int_eq(avt_agent_take(h, &ev, 0), 1);
			ck_assert_uint_eq(ev.obj, want);
			ck_assert_uint_eq(ev.site_off, 0x1000 + want);
			ck_assert_uint_eq(ev.site_mod, AVT_MOD_NONE);
			ck_assert_uint_eq(ev.thread, 7);
			ck_assert_uint_eq(ev.kind, AVT_EV_ACQUIRE);
			want++;
		}
		ck_assert_int_eq(avt_agent_take(h, &ev, 0), 0);
	}
	ck_assert_uint_eq(atomic_load(&h->head), 250);
	ck_assert_uint_eq(atomic_load(&h->tail), 250);
	munmap(h, len);
}
END_TEST

START_TEST(test_full)
{
	size_t len;
	struct avt_agent_hdr *h = region(4, &len);
	struct avt_event ev;
	for (int i = 0; i < 4; i++)
		put(h, (uint64_t)i);
	ck_assert_int_eq(avt_agent_claim(h, 0), -1);
	ck_assert_int_eq(avt_agent_take(h, &ev, 0), 1);
	ck_assert_uint_eq(ev.obj, 0);
	put(h, 4); /* the freed slot is reused */
	ck_assert_int_eq(avt_agent_claim(h, 0), -1);
	for (uint64_t i = 1; i <= 4; i++) {
		ck_assert_int_eq(avt_agent_take(h, &ev, 0), 1);
		ck_assert_uint_eq(ev.obj, i);
	}
	munmap(h, len);
}
END_TEST

START_TEST(test_reserve)
{
	size_t len;
	struct avt_agent_hdr *h = region(8, &len);
	/* locks leave 3 slots to unlocks */
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(avt_agent_claim(h, 3), 0);
	ck_assert_int_eq(avt_agent_claim(h, 3), -1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(avt_agent_claim(h, 0), 0);
	ck_assert_int_eq(avt_agent_claim(h, 0), -1);
	/* a reserve as large as the ring refuses everything */
	ck_assert_int_eq(avt_agent_claim(h, 8), -1);
	ck_assert_int_eq(avt_agent_claim(h, 100), -1);
	munmap(h, len);
}
END_TEST

START_TEST(test_uncommitted)
{
	size_t len;
	struct avt_agent_hdr *h = region(8, &len);
	struct avt_event ev;
	put(h, 0);
	int64_t hole = avt_agent_claim(h, 0); /* a producer died here */
	ck_assert_int_eq(hole, 1);
	put(h, 2);
	ck_assert_int_eq(avt_agent_take(h, &ev, 0), 1);
	ck_assert_uint_eq(ev.obj, 0);
	ck_assert_int_eq(avt_agent_take(h, &ev, 0), 0); /* waits for the hole */
	ck_assert_int_eq(avt_agent_take(h, &ev, 1), 1); /* final: skips it */
	ck_assert_uint_eq(ev.obj, 2);
	ck_assert_int_eq(avt_agent_take(h, &ev, 1), 0);
	munmap(h, len);
}
END_TEST

/* ---- concurrent producers: threads */

#define PER_THREAD 20000
static struct avt_agent_hdr *shared;

static void *producer(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < PER_THREAD;) {
		int64_t t = avt_agent_claim(shared, 0);
		if (t < 0)
			continue; /* full: the consumer frees slots */
		avt_agent_commit(shared, (uint64_t)t, AVT_EV_RELEASE, i, 0, (uint32_t)id);
		i++;
	}
	return NULL;
}

START_TEST(test_threads)
{
	size_t len;
	shared = region(64, &len);
	pthread_t th[3];
	for (uintptr_t i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, producer, (void *)i), 0);
	uint64_t next[3] = { 0, 0, 0 }, total = 0;
	struct avt_event ev;
	while (total < 3 * PER_THREAD) {
		if (!avt_agent_take(shared, &ev, 0))
			continue;
		ck_assert_uint_lt(ev.thread, 3);
		/* each producer's records come out in its own order, none lost */
		ck_assert_uint_eq(ev.obj, next[ev.thread]);
		next[ev.thread]++;
		total++;
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(avt_agent_take(shared, &ev, 1), 0);
	munmap(shared, len);
}
END_TEST

/* ---- a producer process killed at a random point */

START_TEST(test_sigkill)
{
	size_t len;
	struct avt_agent_hdr *h = region(64, &len);
	/* what the producer says it has committed, written after each commit */
	_Atomic uint64_t *done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne((void *)done, MAP_FAILED);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (uint64_t i = 0;;) {
			int64_t t = avt_agent_claim(h, 0);
			if (t < 0)
				continue;
			avt_agent_commit(h, (uint64_t)t, AVT_EV_ACQUIRE, i, 0, 1);
			atomic_store(done, ++i);
		}
	}
	/* drain while it runs, kill it somewhere after 5,000 + a pid-dependent
	 * number of records, wherever it is then */
	uint64_t want = 0, stop_at = 5000 + (uint64_t)(pid % 997);
	struct avt_event ev;
	while (want < stop_at) {
		if (avt_agent_take(h, &ev, 0)) {
			ck_assert_uint_eq(ev.obj, want);
			want++;
		}
	}
	kill(pid, SIGKILL);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
	while (avt_agent_take(h, &ev, 1)) {
		ck_assert_uint_eq(ev.obj, want);
		want++;
	}
	/* every record it finished is there; at most the one it committed
	 * but had not counted yet is beyond its count */
	uint64_t committed = atomic_load(done);
	ck_assert_uint_ge(want, committed);
	ck_assert_uint_le(want, committed + 1);
	munmap((void *)done, 4096);
	munmap(h, len);
}
END_TEST

/* ---- the agent library, preloaded into agent_fix (no tracer) */

#ifndef AGENT_SO
#define AGENT_SO "libavtrace-agent.so"
#endif
#define AGENT_FIX "tests/unit/bin/agent_fix"

struct rec {
	struct avt_event ev[256];
	int n;
	pid_t pid;
};

/* The run token agent_fix's main thread gets: no tracer here, so the
 * test hands it out as the supervisor would at a resume.  other_tid: to
 * some other thread instead. */
struct token {
	uint64_t budget;
	bool other_tid;
};

static const struct token unlimited = { AVT_AGENT_UNLIMITED, false };

/* Runs agent_fix with the agent and a fresh region; its stdout (the
 * fixture's own account) goes to out.  *left: the budget left at the end. */
static void run_fix_token(struct rec *r, const char *arg, char *out, size_t outlen,
			  const struct token *tok, uint64_t *left)
{
	int fd = memfd_create(AVT_AGENT_MEMFD_NAME, 0);
	ck_assert_int_ge(fd, 0);
	size_t len = avt_agent_region_size(4096, 16);
	ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
	struct avt_agent_hdr *h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(h, MAP_FAILED);
	avt_agent_init(h, 4096, 16);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char num[16];
		snprintf(num, sizeof num, "%d", fd);
		dup2(p[1], 1);
		/* after exec, this pid is the main thread's tid */
		avt_agent_grant(h, (uint32_t)getpid() + (tok->other_tid ? 1 : 0), tok->budget);
		setenv("LD_PRELOAD", AGENT_SO, 1);
		setenv(AVT_AGENT_ENV_FD, num, 1);
		execl(AGENT_FIX, AGENT_FIX, arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < outlen && (n = read(p[0], out + got, outlen - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(p[0]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "agent_fix failed: %s", out);
	r->n = 0;
	r->pid = pid;
	while (r->n < 256 && avt_agent_take(h, &r->ev[r->n], 1))
		r->n++;
	ck_assert_uint_eq(atomic_load(&h->attached), 1);
	if (left)
		*left = atomic_load(&h->budget);
	munmap(h, len);
	close(fd);
}

static void run_fix(struct rec *r, const char *arg, char *out, size_t outlen)
{
	run_fix_token(r, arg, out, outlen, &unlimited, NULL);
}

/* A budget that expects events (explore): only the next expected one,
 * kind, object and site, may be taken; each one spent moves on. */
START_TEST(test_agent_expected)
{
	size_t len = avt_agent_region_size(64, 16);
	struct avt_agent_hdr *h = calloc(1, len);
	ck_assert_ptr_nonnull(h);
	avt_agent_init(h, 64, 16);
	ck_assert(avt_agent_expected(h, 7, AVT_EV_ACQUIRE, 0x10, 0x400)); /* none: any */
	struct avt_agent_expect *e = avt_agent_expects(h);
	ck_assert((char *)(e + AVT_AGENT_MAX_EXPECT) <= (char *)h + len);
	e[0] = (struct avt_agent_expect){ 0x10, 0x400, AVT_EV_ACQUIRE, 0, 0, 0, 0, { 0 } };
	e[1] = (struct avt_agent_expect){ 0x20, 0x500, AVT_EV_READ, 0, 0, 0, 0, { 0 } };
	atomic_store(&h->expect_n, 2);
	avt_agent_grant(h, 7, 2);
	ck_assert(!avt_agent_expected(h, 7, AVT_EV_RELEASE, 0x10, 0x400)); /* kind */
	ck_assert(!avt_agent_expected(h, 7, AVT_EV_ACQUIRE, 0x11, 0x400)); /* object */
	ck_assert(!avt_agent_expected(h, 7, AVT_EV_ACQUIRE, 0x10, 0x401)); /* site */
	ck_assert(!avt_agent_expected(h, 7, AVT_EV_READ, 0x20, 0x500));    /* not yet */
	ck_assert(avt_agent_expected(h, 7, AVT_EV_ACQUIRE, 0x10, 0x400));
	avt_agent_spend(h);
	ck_assert(avt_agent_expected(h, 7, AVT_EV_READ, 0x20, 0x500));
	avt_agent_spend(h);
	ck_assert(!avt_agent_may_run(h, 7));                            /* budget spent */
	ck_assert(!avt_agent_expected(h, 7, AVT_EV_READ, 0x20, 0x500));    /* list spent */
	free(h);
}
END_TEST

/* A region of 64 slots and 16 sites, laid out. */
static struct avt_agent_hdr *small_region(void)
{
	struct avt_agent_hdr *h = calloc(1, avt_agent_region_size(64, 16));
	ck_assert_ptr_nonnull(h);
	avt_agent_init(h, 64, 16);
	return h;
}

/* A hand-over script: events of several threads (tid in each), the token
 * passing between them in-process (avt_agent_turn): the holder makes its
 * own next event; a thread whose event comes later waits (2, for the
 * holder), and the holder at its own later event hands the token to the
 * thread whose event is next (2, who); anything else, or a thread not in
 * the script, or a script ended, takes the ptrace path (0).  Kind 0 is
 * any event of its thread. */
START_TEST(test_agent_turn)
{
	struct avt_agent_hdr *h = small_region();
	struct avt_agent_expect *e = avt_agent_expects(h);
	e[0] = (struct avt_agent_expect){ 0x10, 0x400, AVT_EV_ACQUIRE, 0, 7, 0, 0, { 0 } };
	e[1] = (struct avt_agent_expect){ 0x20, 0x500, AVT_EV_READ, 0, 8, 0, 0, { 0 } };
	e[2] = (struct avt_agent_expect){ 0x10, 0x410, AVT_EV_RELEASE, 0, 7, 0, 0, { 0 } };
	e[3] = (struct avt_agent_expect){ 0, 0, AVT_EV_NONE, 0, 8, 0, 0, { 0 } };
	atomic_store(&h->expect_n, 4);
	avt_agent_grant(h, 7, 4);
	uint32_t who = 0;
	/* no script: only the holder may go on */
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_READ, 0x20, 0x500, &who), 0);
	atomic_store(&h->script, 1);
	ck_assert_int_eq(avt_agent_turn(h, 7, AVT_EV_ACQUIRE, 0x10, 0x400, &who), 1);
	ck_assert(!avt_agent_expected(h, 8, AVT_EV_ACQUIRE, 0x10, 0x400)); /* not 8's */
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_READ, 0x20, 0x500, &who), 2);
	ck_assert_uint_eq(who, 7);                                          /* waits while 7 holds */
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_WRITE, 0x20, 0x500, &who), 0); /* not its event */
	ck_assert_int_eq(avt_agent_turn(h, 9, AVT_EV_READ, 0x20, 0x500, &who), 0);  /* not in it */
	avt_agent_spend(h);
	ck_assert_int_eq(avt_agent_turn(h, 7, AVT_EV_ACQUIRE, 0x10, 0x400, &who), 0); /* its next is the release */
	who = 0;
	ck_assert_int_eq(avt_agent_turn(h, 7, AVT_EV_RELEASE, 0x10, 0x410, &who), 2);
	ck_assert_uint_eq(who, 8);                                          /* hands over to 8 */
	atomic_store(&h->run_tid, 8);
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_READ, 0x20, 0x500, &who), 1);
	ck_assert(avt_agent_expected(h, 8, AVT_EV_READ, 0x20, 0x500));
	avt_agent_spend(h);
	/* 8's next is "any" after 7's release: any event of 8 waits for 7 */
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_WRITE, 0x99, 0x1, &who), 2);
	ck_assert_uint_eq(who, 7);
	ck_assert_int_eq(avt_agent_turn(h, 7, AVT_EV_RELEASE, 0x10, 0x410, &who), 2); /* 8 holds */
	atomic_store(&h->run_tid, 7);
	ck_assert_int_eq(avt_agent_turn(h, 7, AVT_EV_RELEASE, 0x10, 0x410, &who), 1);
	avt_agent_spend(h);
	atomic_store(&h->run_tid, 8);
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_WRITE, 0x99, 0x1, &who), 1);
	ck_assert(avt_agent_expected(h, 8, AVT_EV_RMW, 0x42, 0x43)); /* any */
	/* the script ended: a waiter takes the ptrace path */
	atomic_store(&h->script, 0);
	atomic_store(&h->run_tid, 0);
	ck_assert_int_eq(avt_agent_turn(h, 7, AVT_EV_ACQUIRE, 0x10, 0x400, &who), 0);
	/* the holder with no budget left */
	avt_agent_grant(h, 8, 0);
	ck_assert_int_eq(avt_agent_turn(h, 8, AVT_EV_WRITE, 0x99, 0x1, &who), 0);
	free(h);
}
END_TEST

/* An access the budget does not list (avt_agent_extra): made in-process
 * only before an expected event of the same thread marked for it, at a
 * site where the recording saw that thread make no access, and a read
 * only while two or more reads are left (one stays: the count remains
 * below a spin's). */
START_TEST(test_agent_extra)
{
	struct avt_agent_hdr *h = small_region();
	struct avt_agent_expect *e = avt_agent_expects(h);
	e[0] = (struct avt_agent_expect){ 0x10, 0x400, AVT_EV_RELEASE, AVT_EXPECT_EXTRAS, 7, 2, 30, { 0 } };
	e[1] = (struct avt_agent_expect){ 0x10, 0x400, AVT_EV_ACQUIRE, 0, 7, 2, 30, { 0 } };
	e[2] = (struct avt_agent_expect){ 0x10, 0x410, AVT_EV_RELEASE, AVT_EXPECT_EXTRAS, 8, 3, 30, { 0 } };
	atomic_store(&h->expect_n, 3);
	avt_agent_grant(h, 7, 3);
	struct avt_agent_site s = { .pc = 0x500, .kind = AVT_EV_READ, .rec_lids = 1u << 1 };
	uint32_t reads = 3;
	ck_assert(avt_agent_extra(h, 7, AVT_EV_READ, &s, &reads));     /* 3 left: a read */
	ck_assert_uint_eq(reads, 2);
	ck_assert(avt_agent_extra(h, 7, AVT_EV_READ, &s, &reads));
	ck_assert_uint_eq(reads, 1);
	ck_assert(!avt_agent_extra(h, 7, AVT_EV_READ, &s, &reads));    /* the last one stays */
	ck_assert(avt_agent_extra(h, 7, AVT_EV_WRITE, &s, &reads));    /* a write counts none */
	ck_assert(!avt_agent_extra(h, 8, AVT_EV_WRITE, &s, &reads));   /* not 8's turn */
	s.rec_lids = 1u << 2;                                           /* T2 recorded here */
	ck_assert(!avt_agent_extra(h, 7, AVT_EV_WRITE, &s, &reads));
	s.rec_lids = 0;
	avt_agent_spend(h);                                             /* next: unmarked */
	ck_assert(!avt_agent_extra(h, 7, AVT_EV_WRITE, &s, &reads));
	avt_agent_spend(h);
	atomic_store(&h->run_tid, 8);
	ck_assert(avt_agent_extra(h, 8, AVT_EV_WRITE, &s, &reads));
	avt_agent_spend(h);
	ck_assert(!avt_agent_extra(h, 8, AVT_EV_WRITE, &s, &reads));   /* list spent */
	free(h);
}
END_TEST

START_TEST(test_agent_records)
{
	char out[4096];
	struct rec r;
	run_fix(&r, NULL, out, sizeof out);
	unsigned long long m, rec, chk, site_lo, site_hi;
	ck_assert_int_eq(sscanf(out, "normal %llx recursive %llx errorcheck %llx text %llx %llx",
				&m, &rec, &chk, &site_lo, &site_hi), 5);
	/* what agent_fix does, in order (see tests/unit/fixtures/agent_fix.c);
	 * NONE: a slot whose call went down the slow path */
	static const struct { uint16_t kind; int obj; } want[] = {
		{ AVT_EV_ACQUIRE, 0 }, { AVT_EV_TRYLOCK_FAIL, 0 }, { AVT_EV_RELEASE, 0 },
		{ AVT_EV_ACQUIRE, 0 }, { AVT_EV_RELEASE, 0 },        /* trylock that works */
		{ AVT_EV_ACQUIRE, 1 }, { AVT_EV_ACQUIRE, 1 },        /* recursive, twice */
		{ AVT_EV_RELEASE, 1 }, { AVT_EV_RELEASE, 1 },
		{ AVT_EV_ACQUIRE, 2 }, { AVT_EV_NONE, 2 },           /* relock: EDEADLK, slow path */
		{ AVT_EV_RELEASE, 2 },
		{ AVT_EV_ACQUIRE, 0 }, { AVT_EV_RELEASE, 0 },        /* after fork, parent only */
	};
	uint64_t objs[3] = { m, rec, chk };
	size_t nwant = sizeof want / sizeof want[0];
	ck_assert_int_eq(r.n, (int)nwant);
	for (size_t i = 0; i < nwant; i++) {
		ck_assert_msg(r.ev[i].kind == want[i].kind, "record %zu: kind %u, want %u", i,
			      r.ev[i].kind, want[i].kind);
		ck_assert_uint_eq(r.ev[i].obj, objs[want[i].obj]);
		ck_assert_uint_eq(r.ev[i].thread, (uint32_t)r.pid);
		/* the caller's return address: in agent_fix's own code */
		ck_assert_msg(r.ev[i].site_off > site_lo && r.ev[i].site_off < site_hi,
			      "record %zu: site 0x%llx outside agent_fix", i,
			      (unsigned long long)r.ev[i].site_off);
	}
	ck_assert(strstr(out, "child ok"));
}
END_TEST

/* The run token: a budget of 5 lets exactly the first five events
 * through in-process (a slot of a call that went down the slow path
 * spends nothing), every later call takes the slow path (libc, here);
 * the token held by another thread lets none through. */
START_TEST(test_agent_budget)
{
	char out[4096];
	struct rec r;
	uint64_t left = 99;
	struct token five = { 5, false };
	run_fix_token(&r, NULL, out, sizeof out, &five, &left);
	static const uint16_t want[] = { AVT_EV_ACQUIRE, AVT_EV_TRYLOCK_FAIL, AVT_EV_RELEASE,
					 AVT_EV_ACQUIRE, AVT_EV_RELEASE };
	ck_assert_int_eq(r.n, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(r.ev[i].kind, want[i]);
	ck_assert_uint_eq(left, 0);
	ck_assert(strstr(out, "child ok"));
	struct token other = { AVT_AGENT_UNLIMITED, true };
	run_fix_token(&r, NULL, out, sizeof out, &other, &left);
	ck_assert_int_eq(r.n, 0);
	ck_assert_uint_eq(left, AVT_AGENT_UNLIMITED);
	struct token none = { 0, false };
	run_fix_token(&r, NULL, out, sizeof out, &none, &left);
	ck_assert_int_eq(r.n, 0);
}
END_TEST

/* A signal handler that locks another mutex while its thread is inside a
 * fast path: sent down the slow path (here, libc itself), no deadlock,
 * nothing of it in the ring, the interrupted calls recorded as usual. */
START_TEST(test_agent_nested_signal)
{
	char out[4096];
	struct rec r;
	run_fix(&r, "nested", out, sizeof out);
	unsigned long long m, other;
	int handled;
	unsigned long long nested;
	ck_assert_int_eq(sscanf(out, "normal %llx other %llx\nhandled %d nested %llu", &m, &other,
				&handled, &nested), 4);
	ck_assert_int_eq(handled, 3);
	ck_assert_uint_eq(nested, 6); /* each handler: a lock and an unlock */
	ck_assert_int_eq(r.n, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_uint_eq(r.ev[i].kind, i % 2 ? AVT_EV_RELEASE : AVT_EV_ACQUIRE);
		ck_assert_uint_eq(r.ev[i].obj, m);
	}
}
END_TEST

/* sched_yield by the token's holder is taken in-process while it holds
 * the lock the supervisor named (yield_obj): from its acquire of it to its
 * release, not before, not after, not once yield_obj is 0; the rest went
 * to libc (nothing is hooked here). */
START_TEST(test_agent_yield)
{
	char out[4096];
	struct rec r;
	run_fix(&r, "yield", out, sizeof out);
	unsigned long long y[5];
	ck_assert_msg(sscanf(out, "yields %llu %llu %llu %llu %llu", &y[0], &y[1], &y[2], &y[3], &y[4]) == 5,
		      "agent_fix yield: %s", out);
	ck_assert_uint_eq(y[0], 0);
	ck_assert_uint_eq(y[1], 2);
	ck_assert_uint_eq(y[2], 3);
	ck_assert_uint_eq(y[3], 3);
	ck_assert_uint_eq(y[4], 3);
	ck_assert_int_eq(r.n, 6); /* the locks' records, the yields none */
	struct token other = { AVT_AGENT_UNLIMITED, true };
	uint64_t left;
	run_fix_token(&r, "yield", out, sizeof out, &other, &left);
	ck_assert_msg(strstr(out, "yields 0 0 0 0 0"), "not the holder: %s", out);
}
END_TEST

static Suite *agent_suite(void)
{
	Suite *s = suite_create("agent_ring");
	TCase *ring = tcase_create("ring");
	tcase_add_test(ring, test_valid);
	tcase_add_test(ring, test_agent_expected);
	tcase_add_test(ring, test_agent_turn);
	tcase_add_test(ring, test_agent_extra);
	tcase_add_test(ring, test_order_and_wrap);
	tcase_add_test(ring, test_full);
	tcase_add_test(ring, test_reserve);
	tcase_add_test(ring, test_uncommitted);
	tcase_add_test(ring, test_threads);
	tcase_add_test(ring, test_sigkill);
	tcase_set_timeout(ring, 60);
	suite_add_tcase(s, ring);
	TCase *lib = tcase_create("library");
	tcase_add_test(lib, test_agent_records);
	tcase_add_test(lib, test_agent_nested_signal);
	tcase_add_test(lib, test_agent_budget);
	tcase_add_test(lib, test_agent_yield);
	tcase_set_timeout(lib, 60);
	suite_add_tcase(s, lib);
	return s;
}

int main(void)
{
	return unit_run(agent_suite());
}
