/*
 * In-memory trace building (tracebuf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "tracebuf.h"

struct pr_tracebuf {
	struct trace *t;
	size_t evcap, stcap, modcap, notecap;
	uint32_t *tcount;     /* events per thread so far */
	uint32_t *children;   /* creates per thread so far */
	uint32_t *parent;     /* [thread] creator, UINT32_MAX if unknown */
	uint32_t *nth;        /* [thread] nth child of its parent */
	size_t nthr;          /* threads known (array length) */
};

static int grow(void **p, size_t *cap, size_t need, size_t elsize)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*p, ncap * elsize);
	if (!n)
		return -1;
	*p = n;
	*cap = ncap;
	return 0;
}

struct pr_tracebuf *pr_tracebuf_new(void)
{
	struct pr_tracebuf *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->t = calloc(1, sizeof *b->t);
	if (!b->t) {
		free(b);
		return NULL;
	}
	return b;
}

static void free_side(struct pr_tracebuf *b)
{
	free(b->tcount);
	free(b->children);
	free(b->parent);
	free(b->nth);
	free(b);
}

void pr_tracebuf_free(struct pr_tracebuf *b)
{
	if (!b)
		return;
	trace_free(b->t);
	free_side(b);
}

int pr_tracebuf_module(struct pr_tracebuf *b, uint16_t id, const char *path)
{
	struct trace *t = b->t;
	if (grow((void **)&t->mod, &b->modcap, t->nmod + 1, sizeof *t->mod) < 0)
		return -1;
	struct avt_module *m = &t->mod[t->nmod];
	memset(m, 0, sizeof *m);
	m->rec.id = id;
	m->path = strdup(path);
	if (!m->path)
		return -1;
	t->nmod++;
	return 0;
}

/* Makes room for thread u in the side arrays. */
static int know_thread(struct pr_tracebuf *b, uint32_t u)
{
	if (u < b->nthr)
		return 0;
	size_t n = (size_t)u + 1;
	uint32_t *a = realloc(b->tcount, n * sizeof *a);
	if (a)
		b->tcount = a;
	uint32_t *c = realloc(b->children, n * sizeof *c);
	if (c)
		b->children = c;
	uint32_t *p = realloc(b->parent, n * sizeof *p);
	if (p)
		b->parent = p;
	uint32_t *q = realloc(b->nth, n * sizeof *q);
	if (q)
		b->nth = q;
	if (!a || !c || !p || !q)
		return -1;
	for (size_t k = b->nthr; k < n; k++) {
		b->tcount[k] = b->children[k] = b->nth[k] = 0;
		b->parent[k] = UINT32_MAX;
	}
	b->nthr = n;
	return 0;
}

uint64_t pr_tracebuf_event(struct pr_tracebuf *b, uint32_t thread, enum avt_kind kind,
			   uint64_t obj, uint64_t obj2, uint16_t site_mod, uint64_t site_off,
			   uint16_t flags)
{
	struct trace *t = b->t;
	if (know_thread(b, thread) < 0 ||
	    grow((void **)&t->ev, &b->evcap, t->nev + 1, sizeof *t->ev) < 0)
		return UINT64_MAX;
	if (kind == AVT_EV_CREATE) {
		if (obj > UINT32_MAX - 1 || know_thread(b, (uint32_t)obj) < 0)
			return UINT64_MAX;
		b->parent[obj] = thread;
		b->nth[obj] = b->children[thread]++;
	}
	struct avt_event *e = &t->ev[t->nev];
	memset(e, 0, sizeof *e);
	e->seq = t->nev;
	e->thread = thread;
	e->tindex = b->tcount[thread]++;
	e->kind = (uint16_t)kind;
	e->obj = obj;
	e->obj2 = obj2;
	e->site_mod = site_mod;
	e->site_off = site_off;
	e->flags = flags;
	t->nev++;
	return e->seq;
}

int pr_tracebuf_stack(struct pr_tracebuf *b, uint64_t seq, const struct avt_frame *frames,
		      uint32_t depth)
{
	struct trace *t = b->t;
	if (grow((void **)&t->stacks, &b->stcap, t->nstacks + 1, sizeof *t->stacks) < 0)
		return -1;
	struct avt_stack *s = &t->stacks[t->nstacks];
	s->seq = seq;
	s->depth = depth;
	s->frames = malloc((depth ? depth : 1) * sizeof *frames);
	if (!s->frames)
		return -1;
	if (depth)
		memcpy(s->frames, frames, depth * sizeof *frames);
	t->nstacks++;
	return 0;
}

int pr_tracebuf_note(struct pr_tracebuf *b, const char *text)
{
	struct trace *t = b->t;
	if (grow((void **)&t->notes, &b->notecap, t->nnotes + 1, sizeof *t->notes) < 0)
		return -1;
	t->notes[t->nnotes].after_seq = t->nev;
	t->notes[t->nnotes].text = strdup(text);
	if (!t->notes[t->nnotes].text)
		return -1;
	t->nnotes++;
	return 0;
}

uint64_t pr_tracebuf_nevents(const struct pr_tracebuf *b)
{
	return b->t->nev;
}

struct trace *pr_tracebuf_finish(struct pr_tracebuf *b)
{
	struct trace *t = b->t;
	size_t n = 0;
	for (size_t u = 0; u < b->nthr; u++)
		n += b->tcount[u] > 0;
	t->thr = calloc(n ? n : 1, sizeof *t->thr);
	if (!t->thr) {
		pr_tracebuf_free(b);
		return NULL;
	}
	for (size_t u = 0; u < b->nthr; u++) {
		if (!b->tcount[u])
			continue;
		struct avt_thread_rec *r = &t->thr[t->nthr++];
		r->thread = (uint32_t)u;
		r->parent = b->parent[u];
		r->nth_child = b->nth[u];
	}
	free_side(b);
	return t;
}
