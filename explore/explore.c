/*
 * explore_run(): many replays under a priority policy (explore.h).
 *
 * The parent only forks and collects: each run is a child process that
 * replays the recorded program with the run's xp_run as the picker,
 * writes the run's order (and, if it failed, its recording directory) and
 * sends one struct run_msg through a pipe before it exits.  A child that
 * dies without a message counts as an ERROR run.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "explore.h"
#include "explore/policy.h"
#include "replay/replay.h"
#include "trace/log.h"
#include "trace/schedule.h"
#include "tracer/tracer.h"

#define MSG_FRAMES 8

/* What a run tells the parent. */
struct run_msg {
	int outcome;               /* enum replay_outcome */
	int signal;
	int exit_status;
	uint32_t thread;
	uint32_t nbt;
	struct avt_frame bt[MSG_FRAMES];
	uint32_t nwaits;
	uint64_t wait_obj[4];
	char choices[256];
	uint64_t target;           /* guided: the run's target pair, or 0 */
	uint64_t events, agent_events, stops;
	uint32_t stuck_waits;
	uint64_t agent_scripts, agent_handovers, agent_extras;
	char error[200];           /* RO_ERROR: why, if avtrace said */
	uint32_t nrf;              /* reads-from keys new to the run's guide,
	                              sent after the message */
};

/* At most this many new reads-from keys per run go back to the parent
 * (they must fit the pipe's buffer: the parent reads after the exit). */
#define MSG_RF 2048u

const char *explore_algo_name(enum xp_algo a)
{
	const char *n = xp_algo_name(a);
	return n ? n : "?";
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- variables */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool is_var_event(const struct avt_event *e)
{
	switch (e->kind) {
	case AVT_EV_READ: case AVT_EV_WRITE: case AVT_EV_RMW:
	case AVT_EV_ACQUIRE: case AVT_EV_RD_ACQUIRE: case AVT_EV_WR_ACQUIRE:
	case AVT_EV_TRYLOCK_FAIL: case AVT_EV_WAIT: case AVT_EV_SIGNAL: case AVT_EV_BROADCAST:
	case AVT_EV_BARRIER: case AVT_EV_SEM_WAIT: case AVT_EV_SEM_POST:
		return e->obj != 0;
	default:
		return false;
	}
}

/* Events on e->obj by one thread only, or reads only, cannot order
 * threads against each other: with access breakpoints most accessed
 * addresses are such (a thread's own stack, data read by all). */
struct objuse {
	uint64_t obj;
	uint32_t thread;
	bool multi, nonread;
};

static int cmp_objuse(const void *a, const void *b)
{
	const struct objuse *x = a, *y = b;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* The objects of is_var_event events that are shared: used by two
 * threads or more, at least once by something other than a read.  All of
 * them when none is. */
static size_t shared_objs(const struct trace *t, uint64_t *objs)
{
	struct objuse *u = malloc((t->nev ? t->nev : 1) * sizeof *u);
	size_t k = 0, nu = 0;
	if (!u)
		return 0;
	for (size_t i = 0; i < t->nev; i++)
		if (is_var_event(&t->ev[i]))
			u[nu++] = (struct objuse){ t->ev[i].obj, t->ev[i].thread, false,
						   t->ev[i].kind != AVT_EV_READ };
	qsort(u, nu, sizeof *u, cmp_objuse);
	for (size_t i = 0; i < nu;) {
		size_t j = i;
		bool multi = false, nonread = false;
		for (; j < nu && u[j].obj == u[i].obj; j++) {
			multi |= u[j].thread != u[i].thread;
			nonread |= u[j].nonread;
		}
		for (size_t x = i; x < j && multi && nonread; x++)
			objs[k++] = u[x].obj;
		i = j;
	}
	for (size_t i = 0; !k && i < nu; i++)
		objs[k++] = u[i].obj;
	free(u);
	return k;
}

int explore_vars(const struct trace *t, struct xp_var **out, size_t *n)
{
	uint64_t *objs = malloc((t->nev ? t->nev : 1) * sizeof *objs);
	size_t k = 0;
	*out = NULL;
	*n = 0;
	if (!objs) {
		avt_error("cannot explore: out of memory");
		return -1;
	}
	k = shared_objs(t, objs);
	qsort(objs, k, sizeof *objs, cmp_u64);
	struct xp_var *v = malloc((k ? k : 1) * sizeof *v);
	if (!v) {
		free(objs);
		avt_error("cannot explore: out of memory");
		return -1;
	}
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && objs[j] == objs[i])
			j++;
		v[*n].obj = objs[i];
		v[*n].count = j - i;
		(*n)++;
		i = j;
	}
	free(objs);
	*out = v;
	return 0;
}

/* ---- files */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The recording's meta.json with this run's facts, into rundir. */
static int write_run_meta(const char *dir, const char *rundir, const struct replay_result *res,
			  uint64_t seed, unsigned num, const char *choices)
{
	char path[4400];
	json_error_t je;
	snprintf(path, sizeof path, "%s/meta.json", dir);
	json_t *m = json_load_file(path, 0, &je);
	if (!m)
		return -1;
	json_object_set_new(m, "events", json_integer((json_int_t)res->nev));
	json_object_set_new(m, "exit_status", res->exit_status >= 0 ?
			    json_integer(res->exit_status) : json_null());
	json_object_set_new(m, "signal", json_integer(res->signal));
	json_object_set_new(m, "deadlock", json_boolean(res->outcome == RO_DEADLOCK));
	json_object_set_new(m, "explored", json_pack("{s:I,s:i,s:s}", "seed", (json_int_t)seed,
						      "run", (int)num, "choices", choices));
	snprintf(path, sizeof path, "%s/meta.json", rundir);
	errno = 0;
	int rc = json_dump_file(m, path, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(m);
	if (rc < 0)
		avt_write_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
	return rc;
}

/* ---- one run (in the child) */

/* A thread that spins reads a few variables over and over and writes
 * nothing: one flag (`while (!ready)`), or a sequence and the data it
 * guards (a seqlock reader's retry loop).  A run of reads by one thread
 * with no other event of its own, all at no more than SPIN_READS_AT
 * (site, variable) pairs, is a spin after SPIN_REPEATS reads: the thread
 * is dropped as if it had spun through its slices (xp_run_yield), or a
 * spinner above the thread it waits for would keep the run busy until its
 * timeout.  Told by events, never by the clock: the same run for the same
 * seed.  A lock's acquire and release (and a failed trylock) count as
 * reads of the lock: a helper of GLib's mutex test spins in
 * `while (do_addition (&x))`, a lock, a test of x, an unlock, until main
 * stores x; a lock that only guards reads changes nothing the thread's
 * next turn would see, and in an installed program (no access events)
 * the lock and the unlock are all the spin shows. */
#define SPIN_REPEATS 32u
#define SPIN_READS_AT 8

/* A lock operation a spin may take in each turn (see above). */
static bool spin_lock_kind(uint16_t kind)
{
	return kind == AVT_EV_ACQUIRE || kind == AVT_EV_RELEASE || kind == AVT_EV_TRYLOCK_FAIL ||
	       kind == AVT_EV_RD_ACQUIRE || kind == AVT_EV_WR_ACQUIRE;
}

/* A run's picker state: the priorities, and per thread its run of reads. */
struct picker {
	struct xp_policy *xr;
	unsigned yield_limit;
	struct spin {
		uint64_t site[SPIN_READS_AT], obj[SPIN_READS_AT];
		unsigned nat;
		uint32_t repeats;
	} *spin;
	size_t nspin;
};

static void pk_event(void *ctx, const struct avt_event *ev)
{
	struct picker *pk = ctx;
	(void)xp_policy_event(pk->xr, ev); /* out of memory: the run goes on, less random */
	if (ev->thread >= pk->nspin) {
		size_t n = (size_t)ev->thread + 16;
		struct spin *ns = realloc(pk->spin, n * sizeof *ns);
		if (!ns)
			return;
		memset(ns + pk->nspin, 0, (n - pk->nspin) * sizeof *ns);
		pk->spin = ns;
		pk->nspin = n;
	}
	struct spin *sp = &pk->spin[ev->thread];
	uint64_t site = (uint64_t)ev->site_mod << 48 ^ ev->site_off;
	if (ev->flags & AVT_F_OWN_STACK)
		return; /* a spill or temporary of the spin loop (-O0), not what it spins on */
	if (ev->kind != AVT_EV_READ && !spin_lock_kind(ev->kind)) {
		sp->nat = 0;
		sp->repeats = 0;
		return;
	}
	unsigned k = 0;
	while (k < sp->nat && (sp->site[k] != site || sp->obj[k] != ev->obj))
		k++;
	if (k == sp->nat) {
		if (sp->nat == SPIN_READS_AT) { /* reading around: a new run */
			sp->nat = 0;
			sp->repeats = 0;
			k = 0;
		}
		sp->site[k] = site;
		sp->obj[k] = ev->obj;
		sp->nat++;
		return;
	}
	if (++sp->repeats % SPIN_REPEATS)
		return;
	xp_policy_spun(pk->xr, ev->thread);
	for (unsigned i = 0; i < pk->yield_limit; i++)
		xp_policy_yield(pk->xr, ev->thread);
}

/* Events the thread just picked may make in-process: what its policy
 * would give it anyway, cut where this picker's own spin count could end
 * it (the read that completes SPIN_REPEATS may be the last: the yield it
 * brings is applied when the ring is drained, at the stop that follows). */
static size_t pk_budget(void *ctx, uint32_t lid, const struct tracer_view *tv, struct tracer_expect *ev,
			size_t max)
{
	struct picker *pk = ctx;
	struct xp_rev r[256];
	uint32_t who[256], left[256];
	bool extras[256];
	if (max > sizeof r / sizeof r[0])
		max = sizeof r / sizeof r[0];
	size_t n = xp_policy_budget(pk->xr, lid, tv, r, who, extras, max);
	/* cut where a thread's reads could complete SPIN_REPEATS (counting
	 * every read as a repeat; an event that is not an access starts the
	 * count again) */
	struct { uint32_t lid, reads; } cnt[16];
	size_t ncnt = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < ncnt && cnt[j].lid != who[i])
			j++;
		if (j == ncnt) {
			if (ncnt == sizeof cnt / sizeof cnt[0]) {
				n = i;
				break;
			}
			cnt[ncnt].lid = who[i];
			cnt[ncnt++].reads = who[i] < pk->nspin ? pk->spin[who[i]].repeats % SPIN_REPEATS : 0;
		}
		/* (kind 0: any event, a read perhaps) */
		if ((r[i].kind == AVT_EV_READ || r[i].kind == AVT_EV_NONE || spin_lock_kind(r[i].kind)) &&
		    ++cnt[j].reads >= SPIN_REPEATS) {
			left[i] = 0;
			n = i + 1;
			break;
		}
		if (r[i].kind != AVT_EV_READ && r[i].kind != AVT_EV_WRITE && r[i].kind != AVT_EV_RMW &&
		    r[i].kind != AVT_EV_NONE && !spin_lock_kind(r[i].kind))
			cnt[j].reads = 0;
		left[i] = SPIN_REPEATS - cnt[j].reads;
	}
	for (size_t i = 0; i < n; i++)
		ev[i] = (struct tracer_expect){ r[i].obj, r[i].site & ((1ull << 48) - 1),
						r[i].kind ? (uint16_t)(r[i].site >> 48) : AVT_MOD_NONE,
						r[i].kind, who[i], extras[i] ? TRACER_EXPECT_EXTRAS : 0,
						(uint16_t)left[i] };
	return n;
}

static size_t pk_pick(void *ctx, const uint32_t *lids, size_t n)
{
	struct picker *pk = ctx;
	size_t i = xp_policy_pick(pk->xr, lids, n);
	return i < n ? i : 0; /* out of memory: any thread will do */
}

static void pk_yield(void *ctx, uint32_t lid)
{
	struct picker *pk = ctx;
	xp_policy_yield(pk->xr, lid);
}

static void pk_spun(void *ctx, uint32_t lid)
{
	struct picker *pk = ctx;
	xp_policy_spun(pk->xr, lid);
}

static void pk_drop(void *ctx, uint32_t lid)
{
	struct picker *pk = ctx;
	if (xp_policy_exiting(pk->xr, lid))
		return;
	for (unsigned i = 0; i < pk->yield_limit; i++)
		xp_policy_yield(pk->xr, lid);
}

/* The run's schedule: every decision that made it.  Its events, each
 * maximal run of one thread's a step, and where a thread was let run on
 * with no event before another was picked (into a spin barrier, through
 * slices of a spin), a yield step: the check replay then follows the run
 * where the events alone would leave that thread behind. */
static struct schedule *run_schedule(const struct replay_result *res)
{
	struct schedule *s = schedule_new();
	size_t m = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i <= res->nev; i++) {
		for (; m < res->nmarks && res->marks[m].after == i; m++)
			if (schedule_append_yield(s, res->marks[m].thread, res->marks[m].count) < 0)
				goto fail;
		if (i < res->nev && schedule_append_run(s, res->ev[i].thread, 1) < 0)
			goto fail;
	}
	s->has_free = 1;
	return s;
fail:
	schedule_free(s);
	return NULL;
}

static int write_run(const struct explore_opts *o, struct replay *rp,
		     const struct replay_result *res, unsigned num, const char *choices)
{
	char path[4400], rundir[4200], comment[1600];
	struct schedule *s = run_schedule(res);
	if (!s)
		return -1;
	snprintf(comment, sizeof comment, "explore run %u (seed %" PRIu64 ", %s): %s%s%s", num,
		 o->seed, choices, replay_outcome_name(res->outcome), *res->reason ? ": " : "",
		 res->reason);
	schedule_add_comment(s, comment);
	snprintf(path, sizeof path, "%s/explore/runs/%04u.sched", o->dir, num);
	int rc = schedule_write(s, path);
	if (res->outcome == RO_BUG || res->outcome == RO_DEADLOCK) {
		snprintf(rundir, sizeof rundir, "%s/explore/runs/%04u", o->dir, num);
		snprintf(path, sizeof path, "%s/schedules", rundir);
		if (mkdir(rundir, 0777) < 0 || mkdir(path, 0777) < 0)
			rc = -1;
		snprintf(path, sizeof path, "%s/schedules/0000.sched", rundir);
		rc |= schedule_write(s, path);
		snprintf(path, sizeof path, "%s/trace.avt", rundir);
		rc |= replay_write(rp, res, path, NULL, NULL);
		rc |= write_run_meta(o->dir, rundir, res, o->seed, num, choices);
		/* the recording's stdin, which this run read too */
		snprintf(path, sizeof path, "%s/stdin", o->dir);
		if (access(path, F_OK) == 0) {
			snprintf(path, sizeof path, "%s/stdin", rundir);
			rc |= symlink("../../../stdin", path);
		}
	}
	schedule_free(s);
	return rc;
}

/* The run's reads-from keys that its guide has not seen, at most MSG_RF,
 * into keys. */
static uint32_t new_rf(const struct xp_config *cfg, const struct replay_result *res, uint64_t *keys)
{
	uint64_t *all;
	size_t n;
	uint32_t k = 0;
	if (cfg->algo != XP_GUIDED || !cfg->guide || xp_rf_keys(res->ev, res->nev, &all, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && k < MSG_RF; i++)
		if (!xp_guide_seen(cfg->guide, all[i]))
			keys[k++] = all[i];
	free(all);
	return k;
}

static void child_run(const struct explore_opts *o, unsigned num, int cpu, int fd)
{
	static uint64_t rf[MSG_RF];
	struct run_msg msg;
	memset(&msg, 0, sizeof msg);
	msg.outcome = RO_ERROR;
	msg.exit_status = -1;
	avt_quiet = 1;
	int null = open("/dev/null", O_WRONLY);
	if (null >= 0) { /* the program's stderr (assert messages) too */
		dup2(null, 2);
		close(null);
	}
	struct xp_policy *xr = xp_policy_new(&o->cfg, o->seed, num);
	if (!xr)
		goto out;
	xp_policy_describe(xr, msg.choices, sizeof msg.choices);
	struct picker st = { xr, o->cfg.yield_limit ? o->cfg.yield_limit : XP_YIELD_LIMIT,
			     NULL, 0 };
	struct replay_picker pk = { &st, pk_event, pk_pick, pk_yield, pk_drop, pk_budget, pk_spun };
	struct replay_opts ro = { .dir = o->dir, .timeout_s = 2, .cpu = cpu, .oracle = o->oracle,
				  .picker = &pk, .run_timeout_s = o->timeout_s,
				  .no_agent = o->no_agent };
	struct replay *rp = replay_open(&ro);
	if (rp && replay_launch(rp) == 0) {
		struct replay_result res;
		while (replay_step(rp))
			;
		replay_finish(rp, &res);
		msg.outcome = res.outcome;
		msg.signal = res.signal;
		msg.exit_status = res.exit_status;
		msg.thread = res.fail_thread;
		msg.nbt = res.nbt < MSG_FRAMES ? res.nbt : MSG_FRAMES;
		if (msg.nbt) /* res.bt is NULL without a backtrace */
			memcpy(msg.bt, res.bt, msg.nbt * sizeof *msg.bt);
		for (size_t i = 0; i < res.nwaits && msg.nwaits < 4; i++)
			msg.wait_obj[msg.nwaits++] = res.waits[i].obj;
		/* the choices once the run is over (what the policy did) */
		xp_policy_describe(xr, msg.choices, sizeof msg.choices);
		msg.nrf = new_rf(&o->cfg, &res, rf);
		msg.target = xp_policy_target(xr);
		msg.events = res.nev;
		msg.agent_events = res.agent_events;
		msg.stops = res.stops;
		msg.stuck_waits = res.stuck_waits;
		msg.agent_scripts = res.agent_scripts;
		msg.agent_handovers = res.agent_handovers;
		msg.agent_extras = res.agent_extras;
		if (write_run(o, rp, &res, num, msg.choices) < 0)
			msg.outcome = RO_ERROR;
		replay_result_release(&res);
	}
	replay_free(rp);
	free(st.spin);
	xp_policy_free(xr);
out:
	if (msg.outcome == RO_ERROR)
		snprintf(msg.error, sizeof msg.error, "%.199s", avt_last_error);
	if (write(fd, &msg, sizeof msg) != (ssize_t)sizeof msg)
		_exit(3);
	if (msg.nrf && write(fd, rf, msg.nrf * sizeof *rf) != (ssize_t)(msg.nrf * sizeof *rf))
		_exit(3);
	_exit(0);
}

/* ---- the parent */

/* The failure's identity: how it failed and where (the failing thread's
 * backtrace; a deadlock: the objects waited for). */
static void msg_key(const struct run_msg *m, char *key, size_t len)
{
	size_t off;
	if (m->outcome == RO_DEADLOCK) {
		uint64_t w[4];
		memcpy(w, m->wait_obj, sizeof w);
		qsort(w, m->nwaits, sizeof *w, cmp_u64);
		off = (size_t)snprintf(key, len, "deadlock");
		for (uint32_t i = 0; i < m->nwaits && off < len; i++)
			off += (size_t)snprintf(key + off, len - off, " 0x%" PRIx64, w[i]);
		return;
	}
	if (m->signal)
		off = (size_t)snprintf(key, len, "signal %d", m->signal);
	else
		off = (size_t)snprintf(key, len, "exit %d", m->exit_status);
	for (uint32_t i = 0; i < m->nbt && off < len; i++)
		off += (size_t)snprintf(key + off, len - off, " %u+0x%" PRIx64, m->bt[i].mod,
					m->bt[i].off);
}

struct slot {
	pid_t pid;
	int fd;
	unsigned num;
};

/* ---- reads-from feedback (guided): kept per run, folded into the guide
 * in run order at the start of each round */

struct fb_run {
	unsigned num;
	uint64_t target;
	uint64_t *keys;
	uint32_t n;
};

struct feedback {
	struct xp_rec *rec;
	struct xp_guide *guide;
	struct fb_run *runs;
	size_t n;
};

static void fb_keep(struct feedback *fb, unsigned num, uint64_t target, int fd, uint32_t n)
{
	uint64_t *keys = n ? malloc(n * sizeof *keys) : NULL;
	if (n && (!keys || read(fd, keys, n * sizeof *keys) != (ssize_t)(n * sizeof *keys))) {
		free(keys);
		return;
	}
	struct fb_run *nr = realloc(fb->runs, (fb->n + 1) * sizeof *nr);
	if (!nr) {
		free(keys);
		return;
	}
	fb->runs = nr;
	fb->runs[fb->n++] = (struct fb_run){ num, target, keys, n };
}

/* The threads of a schedule file's run steps, one per event. */
static uint32_t *sched_threads(const char *path, size_t *n)
{
	char err[512];
	struct schedule *s = schedule_read(path, err, sizeof err);
	*n = 0;
	if (!s)
		return NULL;
	uint64_t total = schedule_total_events(s);
	uint32_t *t = total && total < (1u << 24) ? malloc(total * sizeof *t) : NULL;
	for (size_t i = 0; t && i < s->nsteps; i++)
		for (uint32_t k = 0; s->steps[i].kind == SCHED_RUN && k < s->steps[i].count; k++)
			t[(*n)++] = s->steps[i].thread; /* a yield step makes no event */
	schedule_free(s);
	return t;
}

static int cmp_fb(const void *a, const void *b)
{
	const struct fb_run *x = a, *y = b;
	return x->num < y->num ? -1 : x->num > y->num;
}

/* A run that showed a reads-from pair first (in run order) joins the
 * corpus with what it did. */
static void fb_fold(const struct explore_opts *o, struct feedback *fb)
{
	if (fb->n)
		qsort(fb->runs, fb->n, sizeof *fb->runs, cmp_fb);
	for (size_t i = 0; i < fb->n; i++) {
		long added = xp_guide_add_rf(fb->guide, fb->runs[i].keys, fb->runs[i].n);
		(void)xp_guide_add_tried(fb->guide, fb->runs[i].target);
		if (added > 0) {
			char path[4400];
			size_t n;
			snprintf(path, sizeof path, "%s/explore/runs/%04u.sched", o->dir, fb->runs[i].num);
			uint32_t *t = sched_threads(path, &n);
			if (t)
				(void)xp_guide_add_start(fb->guide, t, n, false);
			free(t);
		}
		free(fb->runs[i].keys);
	}
	fb->n = 0;
}

static void collect(const struct explore_opts *o, struct explore_result *res, const struct slot *s,
		    int status, struct feedback *fb)
{
	struct run_msg m;
	memset(&m, 0, sizeof m);
	if (read(s->fd, &m, sizeof m) != (ssize_t)sizeof m || !WIFEXITED(status)) {
		m.outcome = RO_ERROR;
		avt_warn("explore run %u: the run's process died (status 0x%x)", s->num, status);
	}
	if (o->cfg.algo == XP_GUIDED)
		fb_keep(fb, s->num, m.target, s->fd, m.nrf <= MSG_RF ? m.nrf : 0);
	close(s->fd);
	res->done++;
	res->events += m.events;
	res->agent_events += m.agent_events;
	res->stops += m.stops;
	res->stuck_waits += m.stuck_waits;
	res->agent_scripts += m.agent_scripts;
	res->agent_handovers += m.agent_handovers;
	res->agent_extras += m.agent_extras;
	if (m.outcome == RO_ERROR && !res->error[0]) {
		m.error[sizeof m.error - 1] = 0;
		snprintf(res->error, sizeof res->error, "run %u: %s", s->num,
			 m.error[0] ? m.error : "no message (see avtrace replay --file of its schedule)");
	}
	if ((unsigned)m.outcome < 5)
		res->counts[m.outcome]++;
	if (m.outcome != RO_BUG && m.outcome != RO_DEADLOCK)
		return;
	char key[512];
	msg_key(&m, key, sizeof key);
	for (size_t i = 0; i < res->nbugs; i++) {
		struct explore_bug *b = &res->bugs[i];
		if (strcmp(b->key, key))
			continue;
		b->hits++;
		char rundir[4200];
		snprintf(rundir, sizeof rundir, "%s/explore/runs/%04u", o->dir, s->num);
		if (s->num < b->run) {
			/* runs end out of order with -j: the lowest number is the
			 * first run that found it, whatever -j is */
			rm_rf(b->dir);
			b->run = s->num;
			snprintf(b->dir, sizeof b->dir, "%s", rundir);
			snprintf(b->choices, sizeof b->choices, "%s", m.choices);
			b->thread = m.thread;
		} else {
			rm_rf(rundir); /* its schedule stays */
		}
		return;
	}
	struct explore_bug *nb = realloc(res->bugs, (res->nbugs + 1) * sizeof *nb);
	if (!nb)
		return;
	res->bugs = nb;
	struct explore_bug *b = &res->bugs[res->nbugs++];
	memset(b, 0, sizeof *b);
	b->run = s->num;
	b->hits = 1;
	b->signal = m.signal;
	b->exit_status = m.exit_status;
	b->thread = m.thread;
	snprintf(b->key, sizeof b->key, "%s", key);
	snprintf(b->dir, sizeof b->dir, "%s/explore/runs/%04u", o->dir, s->num);
	snprintf(b->choices, sizeof b->choices, "%s", m.choices);
}

/* The recording per thread, its reads-from pairs, the starting points. */
static int prepare_guide(const struct explore_opts *o, const struct trace *t, struct feedback *fb)
{
	uint64_t *keys;
	size_t n;
	fb->rec = xp_rec_new(t->ev, t->nev);
	fb->guide = fb->rec ? xp_guide_new(fb->rec) : NULL;
	if (!fb->guide || xp_rf_keys(t->ev, t->nev, &keys, &n) < 0)
		return -1;
	long rc = xp_guide_add_rf(fb->guide, keys, n);
	free(keys);
	for (size_t i = 0; rc >= 0 && i < o->nstarts; i++) {
		uint32_t *th = sched_threads(o->starts[i].sched, &n);
		if (th)
			rc = xp_guide_add_prediction(fb->guide, th, n, true, o->starts[i].pattern,
						     o->starts[i].npattern);
		free(th);
	}
	return rc < 0 ? -1 : 0;
}

static int prepare(const struct explore_opts *o, struct xp_config *cfg, struct xp_var **vars,
		   struct feedback *fb)
{
	char path[4200], err[512];
	*vars = NULL;
	snprintf(path, sizeof path, "%s/trace.avt", o->dir);
	struct trace *t = trace_read(path, err, sizeof err);
	if (!t) {
		avt_error("%s", err);
		return -1;
	}
	if (!cfg->nthreads_est)
		cfg->nthreads_est = trace_nthreads(t);
	if (!cfg->k_est)
		cfg->k_est = t->nev;
	int rc = prepare_guide(o, t, fb);
	cfg->rec = fb->rec;
	cfg->guide = fb->guide;
	if (rc == 0 && !cfg->vars) {
		size_t n;
		rc = explore_vars(t, vars, &n);
		cfg->vars = *vars;
		cfg->nvars_all = n;
	}
	trace_free(t);
	if (rc < 0)
		return -1;
	snprintf(path, sizeof path, "%s/explore", o->dir);
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		avt_error("cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/explore/runs", o->dir);
	if (!o->first_run)
		rm_rf(path); /* an earlier exploration's runs */
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		avt_error("cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void fb_release(struct feedback *fb)
{
	for (size_t i = 0; i < fb->n; i++)
		free(fb->runs[i].keys);
	free(fb->runs);
	xp_guide_free(fb->guide);
	xp_rec_free(fb->rec);
}

/* Forks run num on worker j into s.  -1 if it could not be started. */
static int fork_run(const struct explore_opts *oo, unsigned num, unsigned j, struct slot *s)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* a run never outlives its explorer (killed: no
		 * worker left writing into the directory) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(128 + SIGKILL);
		close(p[0]);
		child_run(oo, num, tracer_nth_cpu(j), p[1]);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*s = (struct slot){ pid, p[0], num };
	return 0;
}

/* A stop signal came: the runs in flight are killed and reaped, their
 * outcomes not counted (a run cut short says nothing). */
static void kill_runs(struct slot *slot, unsigned jobs)
{
	for (unsigned j = 0; j < jobs; j++)
		if (slot[j].pid)
			kill(slot[j].pid, SIGKILL);
	for (unsigned j = 0; j < jobs; j++) {
		if (!slot[j].pid)
			continue;
		while (waitpid(slot[j].pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(slot[j].fd);
		slot[j].pid = 0;
	}
}

/* A failure that ends exploration under stop_at_bug: any but one with
 * o->stop_except's status (a deadlock always counts). */
static bool found_bug(const struct explore_opts *o, const struct explore_result *res)
{
	for (size_t i = 0; i < res->nbugs; i++) {
		const struct explore_bug *b = &res->bugs[i];
		int st = b->signal ? 128 + b->signal : b->exit_status;
		if (!o->stop_except || st != o->stop_except || !strncmp(b->key, "deadlock", 8))
			return true;
	}
	return false;
}

/* Whether to start no more runs after `next` of them, `elapsed` seconds
 * in; res->stop says why.  A run that could not start stops it too
 * (EXPLORE_STOP_ERROR, set by the caller). */
static bool stopping(const struct explore_opts *o, struct explore_result *res, unsigned next, double elapsed)
{
	if (res->stop == EXPLORE_STOP_ERROR || res->stop == EXPLORE_STOP_SIGNAL)
		return true;
	if (tracer_interrupted())
		res->stop = EXPLORE_STOP_SIGNAL;
	else if (o->stop_at_bug && found_bug(o, res))
		res->stop = EXPLORE_STOP_BUG;
	else if (next >= o->runs)
		res->stop = EXPLORE_STOP_RUNS;
	else if (o->time_s > 0 && elapsed >= o->time_s && next >= o->min_runs)
		res->stop = EXPLORE_STOP_TIME;
	else
		return false;
	return true;
}

int explore_run(const struct explore_opts *o, struct explore_result *res)
{
	memset(res, 0, sizeof *res);
	struct explore_opts oo = *o;
	struct xp_var *vars;
	struct feedback fb = { 0 };
	if (prepare(o, &oo.cfg, &vars, &fb) < 0) {
		fb_release(&fb);
		return -1;
	}
	unsigned jobs = o->jobs ? o->jobs : 1;
	struct slot *slot = calloc(jobs, sizeof *slot);
	if (!slot) {
		fb_release(&fb);
		free(vars);
		avt_error("cannot explore: out of memory");
		return -1;
	}
	double t0 = mono();
	unsigned next = 0, busy = 0;
	/* the runs decode the hooked functions once between them */
	(void)tracer_share_decoding();
	fflush(NULL); /* children must not flush our buffers */
	for (;;) {
		bool more = !stopping(o, res, next, mono() - t0);
		for (unsigned j = 0; j < jobs && more; j++) {
			if (slot[j].pid)
				continue;
			if (o->cfg.algo == XP_GUIDED && next % XP_GUIDE_ROUND == 0) {
				/* a new round: after every earlier run, with their feedback */
				if (busy)
					break;
				fb_fold(o, &fb);
			}
			if (fork_run(&oo, o->first_run + next + 1, j, &slot[j]) < 0) {
				res->stop = EXPLORE_STOP_ERROR;
				break;
			}
			next++;
			busy++;
			more = !stopping(o, res, next, mono() - t0);
		}
		if (!busy)
			break;
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w < 0 && errno == EINTR && tracer_interrupted()) {
			kill_runs(slot, jobs); /* (each one's program dies with it) */
			res->stop = EXPLORE_STOP_SIGNAL;
			break;
		}
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (unsigned j = 0; j < jobs; j++)
			if (slot[j].pid == w) {
				collect(&oo, res, &slot[j], st, &fb);
				slot[j].pid = 0;
				busy--;
			}
		if (o->progress) {
			struct explore_progress pr = { res->done, o->runs,
						       res->counts[1] + res->counts[3],
						       (unsigned)res->nbugs, mono() - t0, o->time_s };
			o->progress(o->progress_ctx, &pr);
		}
	}
	res->seconds = mono() - t0;
	fb_release(&fb);
	free(slot);
	free(vars);
	return 0;
}

void explore_result_release(struct explore_result *r)
{
	free(r->bugs);
	memset(r, 0, sizeof *r);
}
