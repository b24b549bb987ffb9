/*
 * The table of algorithms and xp_policy_* (policy.h): each run is one
 * policy's state behind its struct xp_policy_ops, and, for runs 1 ..
 * xp_guide_npredicted, the starting point from a prediction it follows
 * first (prefix.c).
 */
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"
#include "trace/log.h"

/* An algorithm: its name, its verbs, and its look-ahead (NULL: it
 * decides at every event). */
struct xp_algo_entry {
	const char *name;
	const struct xp_policy_ops *ops;
	size_t (*budget)(void *run, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev, uint32_t *who,
			 bool *extras, size_t max);
};

static const struct xp_algo_entry algos[] = {
	[XP_PCT] = { "pct", &xp_pct_ops, NULL },
	[XP_PCTVB] = { "pctvb", &xp_pct_ops, NULL },
	[XP_TB] = { "tb", &xp_pct_ops, NULL },
	[XP_POS] = { "pos", &xp_pos_ops, NULL },
	[XP_SURW] = { "surw", &xp_surw_ops, xp_surw_budget_op },
	[XP_GUIDED] = { "guided", &xp_guided_ops, NULL },
	[XP_PORTFOLIO] = { "portfolio", NULL, NULL }, /* a member runs: xp_portfolio_member */
};

#define NALGOS (sizeof algos / sizeof *algos)

const char *xp_algo_name(enum xp_algo a)
{
	return (unsigned)a < NALGOS ? algos[a].name : NULL;
}

int xp_algo_parse(const char *s, enum xp_algo *a)
{
	for (unsigned i = 0; i < NALGOS; i++)
		if (!strcmp(s, algos[i].name)) {
			*a = (enum xp_algo)i;
			return 0;
		}
	return -1;
}

void xp_portfolio_member(const struct xp_config *cfg, uint64_t run_index, struct xp_config *member,
			 uint64_t *member_run)
{
	/* SURW in every other run: the best on most shapes (bench/explore),
	 * and the default before the portfolio; between them the two
	 * priority schedulers, which find what a walk weighted by remaining
	 * events rarely does (one thread running all its events ahead of
	 * another's).  Half of the runs to SURW costs it 2x its runs to a
	 * bug where it is best, against 3x with a third (docs/explore.md). */
	static const enum xp_algo members[XP_PORTFOLIO_N] = { XP_SURW, XP_POS, XP_SURW, XP_PCT };
	uint64_t i = run_index > 0 ? run_index - 1 : 0;
	unsigned slot = (unsigned)(i % XP_PORTFOLIO_N), per = 0, before = 0;

	*member = *cfg;
	*member_run = run_index;
	if (cfg->algo != XP_PORTFOLIO)
		return;
	member->algo = members[slot];
	/* the member's own run number: its slots in the cycles before, and
	 * its slots before this one in this cycle */
	for (unsigned k = 0; k < XP_PORTFOLIO_N; k++)
		if (members[k] == member->algo) {
			per++;
			before += k < slot;
		}
	*member_run = i / XP_PORTFOLIO_N * per + before + 1;
	/* each member with its own default bounds, as --policy gives them */
	member->nvars = member->algo == XP_SURW ? XP_VARS_RANDOM : 0;
	if (member->depth == 0)
		member->depth = 3;
}

struct xp_policy {
	const struct xp_algo_entry *algo;
	struct xp_config cfg;     /* the run's member's (a portfolio's), or the caller's */
	void *run;                /* the policy's state */
	struct xp_prefix start;   /* a prediction's schedule to follow first */
	long nstart;              /* which one, -1 none */
	bool portfolio;           /* run by a member of a portfolio */
};

/* Run run_index (from 1) follows the run_index-th starting point from
 * predictions, if there is one.  -1 after avt_error(). */
static int start_point(struct xp_policy *p, const struct xp_config *cfg, uint64_t seed, uint64_t run_index)
{
	const uint32_t *t, *pattern;
	size_t n, npattern;

	p->nstart = -1;
	xp_prefix_init(&p->start, NULL, 0);
	if (run_index < 1 || run_index > xp_guide_npredicted(cfg->guide))
		return 0;
	p->nstart = (long)run_index - 1;
	t = xp_guide_predicted(cfg->guide, (size_t)p->nstart, &n);
	pattern = xp_guide_pattern(cfg->guide, (size_t)p->nstart, &npattern);
	if (!pattern) {
		xp_prefix_init(&p->start, t, n);
		return 0;
	}
	return xp_prefix_init_pattern(&p->start, t, n, pattern, npattern, cfg->rec, seed, run_index);
}

struct xp_policy *xp_policy_new(const struct xp_config *cfg, uint64_t seed, uint64_t run_index)
{
	struct xp_policy *p = calloc(1, sizeof *p);

	if (!p) {
		avt_error("explore: out of memory");
		return NULL;
	}
	if (start_point(p, cfg, seed, run_index) < 0) {
		free(p);
		return NULL;
	}
	if ((unsigned)cfg->algo >= NALGOS) {
		avt_error("explore: unknown algorithm %d", (int)cfg->algo);
		xp_policy_free(p);
		return NULL;
	}
	/* a portfolio's run is its member's run number member_run: the
	 * prediction's start above counts the portfolio's runs */
	uint64_t member_run;
	xp_portfolio_member(cfg, run_index, &p->cfg, &member_run);
	p->portfolio = cfg->algo == XP_PORTFOLIO;
	p->algo = &algos[p->cfg.algo];
	p->run = p->algo->ops->new(&p->cfg, seed, member_run);
	if (!p->run) {
		xp_policy_free(p);
		return NULL;
	}
	return p;
}

void xp_policy_free(struct xp_policy *p)
{
	if (!p)
		return;
	if (p->run)
		p->algo->ops->free(p->run);
	xp_prefix_release(&p->start);
	free(p);
}

int xp_policy_event(struct xp_policy *p, const struct avt_event *ev)
{
	if (xp_prefix_event(&p->start, ev->thread) < 0)
		return -1;
	return p->algo->ops->event(p->run, ev);
}

size_t xp_policy_pick(struct xp_policy *p, const uint32_t *lids, size_t n)
{
	size_t i = xp_prefix_pick(&p->start, lids, n);

	return i < n ? i : p->algo->ops->pick(p->run, lids, n);
}

void xp_policy_yield(struct xp_policy *p, uint32_t lid)
{
	p->algo->ops->yield(p->run, lid);
}

void xp_policy_spun(struct xp_policy *p, uint32_t lid)
{
	if (p->algo->ops->spun)
		p->algo->ops->spun(p->run, lid);
}

int xp_policy_exiting(struct xp_policy *p, uint32_t lid)
{
	if (!p->algo->ops->exiting)
		return 0;
	p->algo->ops->exiting(p->run, lid);
	return 1;
}

size_t xp_policy_budget(struct xp_policy *p, uint32_t lid, const struct tracer_view *v, struct xp_rev *ev,
			uint32_t *who, bool *extras, size_t max)
{
	if (xp_prefix_on(&p->start))
		return 0; /* following a prediction's prefix: its steps decide */
	return p->algo->budget ? p->algo->budget(p->run, lid, v, ev, who, extras, max) : 0;
}

uint64_t xp_policy_target(const struct xp_policy *p)
{
	return p->algo->ops->target ? p->algo->ops->target(p->run) : 0;
}

void xp_policy_describe(const struct xp_policy *p, char *buf, size_t len)
{
	size_t used = 0;

	if (len > 0)
		buf[0] = '\0';
	if (p->nstart >= 0 && p->start.pattern)
		xp_put(buf, len, &used, "from prediction start %ld (%zu/%zu pattern events, bystanders at random), then ",
		       p->nstart + 1, p->start.pos, p->start.n);
	else if (p->nstart >= 0)
		xp_put(buf, len, &used, "from prediction start %ld (%zu/%zu events), then ",
		       p->nstart + 1, p->start.pos, p->start.n);
	if (used >= len)
		return;
	if (p->portfolio) /* the member's own line says which and its run */
		xp_put(buf, len, &used, "portfolio: ");
	if (used >= len)
		return;
	p->algo->ops->describe(p->run, buf + used, len - used);
}
