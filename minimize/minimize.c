/*
 * Minimisation of a failing schedule's context switches (minimize.h says
 * what a switch and a block are, and how the search goes).
 */
#include <stdlib.h>
#include <string.h>

#include "minimize.h"

/* Index of the first step of each block, and nsteps at [nblocks]. */
static size_t *block_starts(const struct schedule *s, size_t *nb)
{
	size_t *b = malloc((s->nsteps + 1) * sizeof *b), n = 0;
	if (!b)
		return NULL;
	for (size_t i = 0; i < s->nsteps; i++)
		if (i == 0 || s->steps[i].thread != s->steps[i - 1].thread)
			b[n++] = i;
	b[n] = s->nsteps;
	*nb = n;
	return b;
}

size_t minimize_nblocks(const struct schedule *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (i == 0 || s->steps[i].thread != s->steps[i - 1].thread)
			n++;
	return n;
}

size_t min_count_switches(const struct schedule *s)
{
	size_t n = minimize_nblocks(s);
	return n ? n - 1 : 0;
}

size_t min_list_switches(const struct schedule *s, struct min_switch **out)
{
	size_t n = min_count_switches(s), k = 0;
	uint32_t maxt = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].thread > maxt)
			maxt = s->steps[i].thread;
	*out = calloc(n ? n : 1, sizeof **out);
	uint64_t *done = calloc((size_t)maxt + 1, sizeof *done);
	if (!*out || !done) {
		free(*out);
		free(done);
		*out = NULL;
		return (size_t)-1;
	}
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct sched_step *st = &s->steps[i];
		if (i && st->thread != s->steps[i - 1].thread) {
			struct min_switch *w = &(*out)[k++];
			w->step = i;
			w->from = s->steps[i - 1].thread;
			w->to = st->thread;
			w->from_done = done[w->from];
			w->to_done = done[w->to];
		}
		if (st->kind == SCHED_RUN)
			done[st->thread] += st->count;
	}
	free(done);
	return n;
}

/* An empty schedule with s's comments, ending in free: where the steps end
 * every thread may run anyway (replay/policy.c), so free says it. */
static struct schedule *like(const struct schedule *s)
{
	struct schedule *d = schedule_new();
	if (!d)
		return NULL;
	for (size_t i = 0; i < s->ncomments; i++)
		if (schedule_add_comment(d, s->comments[i]) < 0) {
			schedule_free(d);
			return NULL;
		}
	return d;
}

static int put(struct schedule *d, const struct sched_step *st)
{
	if (st->kind == SCHED_YIELD)
		return schedule_append_yield(d, st->thread, st->count);
	return schedule_append_run(d, st->thread, st->count);
}

static int put_range(struct schedule *d, const struct schedule *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (put(d, &s->steps[i]) < 0)
			return -1;
	return 0;
}

static struct schedule *finish(struct schedule *d, int rc)
{
	if (rc < 0) {
		schedule_free(d);
		return NULL;
	}
	d->has_free = 1;
	return d;
}

struct schedule *minimize_defer(const struct schedule *s, const bool *drop)
{
	size_t nb;
	size_t *b = block_starts(s, &nb);
	struct schedule *d = b ? like(s) : NULL;
	int rc = d ? 0 : -1;
	/* a dropped block joins the thread's next kept block, in front, in
	 * order; with none its steps are left to the free part */
	for (size_t c = 0; rc == 0 && c < nb; c++) {
		if (drop[c])
			continue;
		uint32_t t = s->steps[b[c]].thread;
		size_t first = c;
		while (first > 0 && (drop[first - 1] || s->steps[b[first - 1]].thread != t))
			first--;
		for (size_t p = first; rc == 0 && p < c; p++)
			if (drop[p] && s->steps[b[p]].thread == t)
				rc = put_range(d, s, b[p], b[p + 1]);
		if (rc == 0)
			rc = put_range(d, s, b[c], b[c + 1]);
	}
	free(b);
	return d ? finish(d, rc) : NULL;
}

struct schedule *minimize_advance(const struct schedule *s, size_t blk)
{
	size_t nb;
	size_t *b = block_starts(s, &nb);
	if (!b || blk >= nb) {
		free(b);
		return NULL;
	}
	uint32_t t = s->steps[b[blk]].thread;
	size_t p = blk;
	while (p > 0 && s->steps[b[p - 1]].thread != t)
		p--;
	if (p == 0 || s->steps[b[p - 1]].thread != t) {
		free(b);
		return NULL; /* no earlier block of its thread */
	}
	p--;
	struct schedule *d = like(s);
	int rc = d ? 0 : -1;
	for (size_t c = 0; rc == 0 && c < nb; c++) {
		if (c == blk)
			continue;
		rc = put_range(d, s, b[c], b[c + 1]);
		if (rc == 0 && c == p)
			rc = put_range(d, s, b[blk], b[blk + 1]);
	}
	free(b);
	return d ? finish(d, rc) : NULL;
}

struct schedule *minimize_truncate(const struct schedule *s, size_t n)
{
	size_t nb;
	size_t *b = block_starts(s, &nb);
	struct schedule *d = b ? like(s) : NULL;
	if (!d) {
		free(b);
		return NULL;
	}
	int rc = put_range(d, s, 0, b[n < nb ? n : nb]);
	free(b);
	return finish(d, rc);
}

struct schedule *minimize_neighbour(const struct schedule *s, size_t k, uint32_t shift,
				    const uint64_t *thread_events, size_t nthreads)
{
	struct min_switch *sw;
	size_t n = min_list_switches(s, &sw);
	if (n == (size_t)-1)
		return NULL;
	if (k >= n || !shift || sw[k].from >= nthreads ||
	    sw[k].from_done + shift > thread_events[sw[k].from]) {
		free(sw);
		return NULL;
	}
	size_t at = sw[k].step;
	uint32_t a = sw[k].from;
	free(sw);
	struct schedule *d = like(s);
	if (!d)
		return NULL;
	int rc = put_range(d, s, 0, at);
	if (rc == 0)
		rc = schedule_append_run(d, a, shift);
	uint32_t owed = shift; /* the events come from a's next run steps */
	for (size_t i = at; rc == 0 && i < s->nsteps; i++) {
		struct sched_step st = s->steps[i];
		if (owed && st.thread == a && st.kind == SCHED_RUN) {
			uint32_t take = st.count < owed ? st.count : owed;
			owed -= take;
			st.count -= take;
			if (st.count == 0)
				continue;
		}
		rc = put(d, &st);
	}
	return finish(d, rc);
}

/* The search's state. */
struct search {
	const struct min_opts *o;
	struct min_stats *st;
	struct schedule *cur;
	size_t cur_sw;
	uint64_t *seen;
	size_t nseen, capseen;
	bool stop;
};

static uint64_t fingerprint(const struct schedule *s)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < s->nsteps; i++) {
		uint32_t w[3] = { s->steps[i].thread, s->steps[i].count, s->steps[i].kind };
		for (size_t j = 0; j < sizeof w; j++) {
			h ^= ((const unsigned char *)w)[j];
			h *= 1099511628211ull;
		}
	}
	return h;
}

/* Tries cand (owned): 1 if it keeps the failure with fewer switches (it
 * becomes the current schedule), 0 if not or not tried. */
static int try(struct search *z, struct schedule *cand)
{
	if (!cand)
		return 0; /* no such candidate (or out of memory) */
	size_t sw = min_count_switches(cand);
	uint64_t fp = fingerprint(cand);
	bool seen = false;
	for (size_t i = 0; i < z->nseen && !seen; i++)
		seen = z->seen[i] == fp;
	if (z->stop || sw >= z->cur_sw || seen) {
		schedule_free(cand);
		return 0;
	}
	if (z->o->max_tests && z->st->tests >= z->o->max_tests) {
		z->st->capped = true;
		z->stop = true;
		schedule_free(cand);
		return 0;
	}
	if (z->nseen == z->capseen) {
		size_t nc = z->capseen ? 2 * z->capseen : 64;
		uint64_t *ns = realloc(z->seen, nc * sizeof *ns);
		if (!ns) {
			z->stop = true;
			schedule_free(cand);
			return 0;
		}
		z->seen = ns;
		z->capseen = nc;
	}
	z->seen[z->nseen++] = fp;
	z->st->tests++;
	int r = z->o->test(z->o->ctx, cand);
	if (r < 0) {
		z->st->error = true;
		z->stop = true;
	}
	if (r != 1) {
		schedule_free(cand);
		return 0;
	}
	z->st->accepted++;
	schedule_free(z->cur);
	z->cur = cand;
	z->cur_sw = sw;
	return 1;
}

/* Every block of quiet events deferred, in one candidate. */
static void quiet_blocks(struct search *z)
{
	const struct schedule *s = z->cur;
	size_t nb = minimize_nblocks(s), b = 0, nquiet = 0;
	uint32_t maxt = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].thread > maxt)
			maxt = s->steps[i].thread;
	bool *drop = calloc(nb ? nb : 1, sizeof *drop);
	uint64_t *done = calloc((size_t)maxt + 1, sizeof *done);
	if (!drop || !done) {
		free(drop);
		free(done);
		return;
	}
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct sched_step *st = &s->steps[i];
		bool first = i == 0 || st->thread != s->steps[i - 1].thread;
		if (first) {
			b += i > 0;
			drop[b] = true;
		}
		if (st->kind == SCHED_RUN) {
			drop[b] = drop[b] && z->o->quiet(z->o->ctx, st->thread, done[st->thread], st->count);
			done[st->thread] += st->count;
		} else {
			drop[b] = false; /* a yield: the turn is what counts */
		}
	}
	for (b = 0; b < nb; b++)
		nquiet += drop[b];
	if (nquiet)
		try(z, minimize_defer(s, drop));
	free(drop);
	free(done);
}

/* The shortest failing prefix of blocks, by binary search (a longer prefix
 * is assumed to fail when a shorter one does). */
static void shortest_prefix(struct search *z)
{
	size_t lo = 0, hi = minimize_nblocks(z->cur);
	while (lo < hi && !z->stop) {
		size_t mid = lo + (hi - lo) / 2;
		if (try(z, minimize_truncate(z->cur, mid)))
			hi = mid;
		else
			lo = mid + 1;
	}
}

/* ddmin: defer chunks of blocks, from halves down to single blocks. */
static void ddmin(struct search *z)
{
	size_t gran = 2;
	while (!z->stop) {
		size_t nb = minimize_nblocks(z->cur);
		if (nb < 2)
			return;
		if (gran > nb)
			gran = nb;
		size_t chunk = (nb + gran - 1) / gran;
		bool *drop = calloc(nb, sizeof *drop);
		bool progress = false;
		if (!drop) {
			z->stop = true;
			return;
		}
		for (size_t start = 0; start < nb && !progress && !z->stop; start += chunk) {
			memset(drop, 0, nb * sizeof *drop);
			for (size_t i = start; i < start + chunk && i < nb; i++)
				drop[i] = true;
			progress = try(z, minimize_defer(z->cur, drop));
		}
		free(drop);
		if (progress) {
			gran = gran > 2 ? gran - 1 : 2;
			continue;
		}
		if (gran >= nb)
			return;
		gran = 2 * gran < nb ? 2 * gran : nb;
	}
}

/* One block at a time, deferred or advanced, until none can go. */
static void one_minimal(struct search *z)
{
	bool changed = true;
	while (changed && !z->stop) {
		changed = false;
		size_t nb = minimize_nblocks(z->cur);
		bool *drop = calloc(nb ? nb : 1, sizeof *drop);
		if (!drop) {
			z->stop = true;
			return;
		}
		for (size_t b = 0; b < nb && !changed && !z->stop; b++) {
			memset(drop, 0, nb * sizeof *drop);
			drop[b] = true;
			changed = try(z, minimize_defer(z->cur, drop)) ||
				  try(z, minimize_advance(z->cur, b));
		}
		free(drop);
	}
}

struct schedule *minimize_schedule(const struct schedule *s, const struct min_opts *o,
				   struct min_stats *st)
{
	struct search z = { .o = o, .st = st };
	memset(st, 0, sizeof *st);
	st->from_switches = min_count_switches(s);
	/* the input, as the search writes schedules (merged steps, free) */
	z.cur = minimize_truncate(s, SIZE_MAX);
	if (!z.cur)
		return NULL;
	z.cur_sw = min_count_switches(z.cur);
	if (o->quiet)
		quiet_blocks(&z);
	shortest_prefix(&z);
	ddmin(&z);
	one_minimal(&z);
	free(z.seen);
	st->to_switches = z.cur_sw;
	return z.cur;
}
