/*
 * `avtrace predict` at scale (issue 30): synthetic traces are written
 * through the trace/ writer to WORKDIR/NAME/trace.avt, and the real command
 * `AVTRACE predict -d WORKDIR/NAME` is timed on each (wall clock and the
 * child's CPU time, from wait4).  Two shapes, each at two sizes ten times
 * apart, with the ratio of their times (linear: about 10):
 *
 *   events   16 threads, 64 locks, accesses to 1,000 globals woven in (as
 *            bench/predict_bench's "accesses" mode): 10^5 and 10^6 events;
 *            target >= 2M events/s at 10^6.
 *   threads  short threads, 100 alive at a time, each: start, lock,
 *            read+write a counter, unlock, a racy read and a racy write,
 *            exit (main creates, joins, and updates a total under the lock
 *            per batch), GLib's threadtests in shape: 500 and 5,000
 *            threads (about 5,000 and 50,000 events).
 *
 * Usage: predict_scale AVTRACE WORKDIR [SHAPE]   (SHAPE: events, threads;
 * default both).  Exit 0 when every trace was predicted, whatever the
 * figures; 2 on an error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "predict/predict.h"
#include "predict/tracebuf.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 33);
}

static int add(struct pr_tracebuf *b, uint32_t thr, enum avt_kind k, uint64_t obj, uint64_t site)
{
	return pr_tracebuf_event(b, thr, k, obj, 0, 0, site, 0) == UINT64_MAX ? -1 : 0;
}

/* ---- shape "events": bench/predict_bench.c's accesses, 1,000 globals */

static int accesses(struct pr_tracebuf *b, const struct avt_event *e)
{
	uint64_t h = mix(e->seq);
	if (avt_kind_is_acquire(e->kind))
		return add(b, e->thread, AVT_EV_READ, 0x200000 + (e->obj & 0xffff) * 8,
			   e->site_off + 0x1000) |
		       add(b, e->thread, AVT_EV_WRITE, 0x200000 + (e->obj & 0xffff) * 8,
			   e->site_off + 0x1008);
	if (e->kind != AVT_EV_RELEASE || h % 8)
		return 0;
	bool w = (h >> 8) % 2;
	uint64_t v = (h >> 16) % 1000;
	return add(b, e->thread, w ? AVT_EV_WRITE : AVT_EV_READ, 0x300000 + v * 8,
		   0x9000 + (v % 64) * 16 + w * 8);
}

static struct trace *with_accesses(struct trace *t)
{
	struct pr_tracebuf *b = t ? pr_tracebuf_new() : NULL;
	for (size_t i = 0; b && i < t->nmod; i++)
		if (pr_tracebuf_module(b, t->mod[i].rec.id, t->mod[i].path) < 0)
			goto fail;
	for (size_t i = 0; b && i < t->nev; i++) {
		const struct avt_event *e = &t->ev[i];
		if (pr_tracebuf_event(b, e->thread, e->kind, e->obj, e->obj2, e->site_mod, e->site_off,
				      e->flags) == UINT64_MAX || accesses(b, e) < 0)
			goto fail;
	}
	trace_free(t);
	return b ? pr_tracebuf_finish(b) : NULL;
fail:
	pr_tracebuf_free(b);
	trace_free(t);
	return NULL;
}

/* About nev events in all (accesses included). */
static struct trace *events_trace(uint64_t nev)
{
	uint64_t base = nev / 2;
	struct trace *t = with_accesses(predict_synthetic_trace(base, 16, 64, 1));
	if (!t)
		return NULL;
	uint64_t scaled = (uint64_t)((double)base * (double)nev / (double)t->nev);
	trace_free(t);
	return with_accesses(predict_synthetic_trace(scaled, 16, 64, 1));
}

/* ---- shape "threads" */

enum { LOCK = 0x1000, COUNTER = 0x2000, TOTAL = 0x2008, SEEN = 0x2010, BATCH = 100 };

static struct trace *threads_trace(uint32_t nthreads)
{
	struct pr_tracebuf *b = pr_tracebuf_new();
	int rc = b && pr_tracebuf_module(b, 0, "/synthetic-threads") == 0 ? 0 : -1;
	rc |= b ? add(b, 0, AVT_EV_START, UINT32_MAX, 0) : -1;
	for (uint32_t done = 0; rc == 0 && done < nthreads;) {
		uint32_t k = nthreads - done < BATCH ? nthreads - done : BATCH;
		for (uint32_t i = 1; i <= k; i++)
			rc |= add(b, 0, AVT_EV_CREATE, done + i, 0x100);
		/* the workers, one after another as a serialized run has them */
		for (uint32_t i = 1; i <= k; i++) {
			uint32_t u = done + i;
			rc |= add(b, u, AVT_EV_START, 0, 0);
			rc |= add(b, u, AVT_EV_ACQUIRE, LOCK, 0x200);
			rc |= add(b, u, AVT_EV_READ, COUNTER, 0x208);
			rc |= add(b, u, AVT_EV_WRITE, COUNTER, 0x210);
			rc |= add(b, u, AVT_EV_RELEASE, LOCK, 0x218);
			rc |= add(b, u, AVT_EV_READ, TOTAL, 0x220);
			rc |= add(b, u, AVT_EV_READ, SEEN, 0x228);
			rc |= add(b, u, AVT_EV_WRITE, SEEN, 0x230);
			rc |= add(b, u, AVT_EV_EXIT, 0, 0);
		}
		for (uint32_t i = 1; i <= k; i++)
			rc |= add(b, 0, AVT_EV_JOIN, done + i, 0x300);
		done += k;
		rc |= add(b, 0, AVT_EV_ACQUIRE, LOCK, 0x400);
		rc |= add(b, 0, AVT_EV_WRITE, TOTAL, 0x408);
		rc |= add(b, 0, AVT_EV_RELEASE, LOCK, 0x410);
	}
	rc |= b ? add(b, 0, AVT_EV_EXIT, 0, 0) : -1;
	if (rc) {
		pr_tracebuf_free(b);
		return NULL;
	}
	return pr_tracebuf_finish(b);
}

/* ---- writing and timing */

static int write_trace(const struct trace *t, const char *dir)
{
	char path[4300], err[512];
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "predict_scale: cannot create '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/trace.avt", dir);
	struct trace_writer *w = trace_writer_open(path, err, sizeof err);
	if (!w) {
		fprintf(stderr, "predict_scale: %s\n", err);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < t->nmod; i++) {
		struct avt_module_rec r = t->mod[i].rec;
		if (r.hi <= r.lo) /* a range, as a recording has one */
			r.lo = r.base, r.hi = r.base + 0x10000;
		rc |= trace_write_module(w, &r, t->mod[i].path);
	}
	for (size_t i = 0; i < t->nthr; i++)
		rc |= trace_write_thread(w, &t->thr[i]);
	for (size_t i = 0; i < t->nev; i++)
		rc |= trace_write_event(w, &t->ev[i]);
	rc |= trace_writer_close(w);
	if (rc)
		fprintf(stderr, "predict_scale: cannot write '%s'\n", path);
	return rc ? -1 : 0;
}

struct timing {
	double wall, cpu;
	long maxrss_kb;
};

static int time_predict(const char *avtrace, const char *dir, struct timing *tm)
{
	fflush(NULL); /* the child's freopen() would write our buffer again */
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char log[4300];
		snprintf(log, sizeof log, "%s/predict.log", dir); /* its warnings */
		if (!freopen("/dev/null", "w", stdout) || !freopen(log, "w", stderr))
			_exit(127);
		execl(avtrace, avtrace, "predict", "-d", dir, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) != pid)
		return -1;
	tm->wall = now() - t0;
	tm->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	tm->maxrss_kb = ru.ru_maxrss;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "predict_scale: avtrace predict -d %s failed (status %d)\n", dir, st);
		return -1;
	}
	return 0;
}

static int one(const char *avtrace, const char *work, const char *name, struct trace *t,
	       struct timing *tm, size_t *nev)
{
	char dir[4200];
	if (!t)
		return -1;
	snprintf(dir, sizeof dir, "%s/%s", work, name);
	*nev = t->nev;
	int rc = write_trace(t, dir);
	unsigned nthr = trace_nthreads(t);
	trace_free(t);
	if (rc < 0 || time_predict(avtrace, dir, tm) < 0)
		return -1;
	printf("  %-16s %9zu events %6u threads  %7.3f s wall  %7.3f s cpu  %10.0f events/s (cpu)  %5ld MB peak\n",
	       name, *nev, nthr, tm->wall, tm->cpu, (double)*nev / (tm->cpu > 1e-6 ? tm->cpu : 1e-6),
	       tm->maxrss_kb / 1024);
	fflush(stdout);
	return 0;
}

static int shape(const char *avtrace, const char *work, bool threads)
{
	struct timing a, b;
	size_t na, nb;
	const char *na_name = threads ? "threads-500" : "events-1e5";
	const char *nb_name = threads ? "threads-5000" : "events-1e6";
	printf("%s\n", threads ? "short threads (GLib threadtests' shape):"
			       : "16 threads, 64 locks, accesses to 1,000 globals:");
	if (one(avtrace, work, na_name, threads ? threads_trace(500) : events_trace(100000), &a,
		&na) < 0 ||
	    one(avtrace, work, nb_name, threads ? threads_trace(5000) : events_trace(1000000), &b,
		&nb) < 0)
		return -1;
	double scale = (double)nb / (double)na;
	printf("  time ratio %s/%s: %.2f cpu, %.2f wall, for %.1fx the events (linear: about %.0f)\n",
	       nb_name, na_name, b.cpu / a.cpu, b.wall / a.wall, scale, scale);
	if (!threads) {
		double rate = (double)nb / b.cpu;
		printf("  %s: %.2fM events/s (cpu), target >= 2M: %s\n", nb_name, rate / 1e6,
		       rate >= 2e6 ? "met" : "NOT MET");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: predict_scale AVTRACE WORKDIR [events|threads]\n");
		return 2;
	}
	const char *only = argc > 3 ? argv[3] : NULL;
	if (mkdir(argv[2], 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "predict_scale: cannot create '%s': %s\n", argv[2], strerror(errno));
		return 2;
	}
	if ((!only || !strcmp(only, "events")) && shape(argv[1], argv[2], false) < 0)
		return 2;
	if ((!only || !strcmp(only, "threads")) && shape(argv[1], argv[2], true) < 0)
		return 2;
	return 0;
}
