/* The predicted pattern's events in a replay's interleaving (pattern.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

#define EM_DASH "\xe2\x80\x94" /* the comment's "—" between head and events */
#define CONTEXT " not atomic: " /* SideTrack's blamed calls: context, not events */

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* Does an element "T<n> " start at q?  Only where the list puts one: at
 * the start of the events or after a ", " (so "T1" inside an object's
 * name does not). */
static bool element_at(const char *body, const char *q)
{
	if (q[0] != 'T' || q[1] < '0' || q[1] > '9')
		return false;
	const char *d = q + 1;
	while (*d >= '0' && *d <= '9')
		d++;
	if (*d != ' ')
		return false;
	const char *b = q;
	while (b > body && b[-1] == ' ')
		b--;
	return b == body || b[-1] == ',';
}

/* An address the predictor could not name ("0x601040") names no object. */
static bool raw_address(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

static int add(struct pattern *p, const struct pattern_ev *e)
{
	struct pattern_ev *v = realloc(p->ev, (p->n + 1) * sizeof *v);
	if (!v)
		return -1;
	p->ev = v;
	p->ev[p->n++] = *e;
	return 0;
}

/* One element "T1 read a[3093] at acc_qsort.c:61" (s, n bytes): thread,
 * kind, then the object up to the last " at " (a heap object's name may
 * hold " at " itself: "heap#3 (48 bytes, malloc at log.c:17 in log_new)"),
 * then the site.  0 when it is no element, 1 added, -1 out of memory. */
static int parse_element(struct pattern *p, const char *s, size_t n)
{
	struct pattern_ev e = { 0 };
	char buf[sizeof e.text];
	while (n && (s[n - 1] == ' ' || s[n - 1] == ','))
		n--;
	if (n >= sizeof buf)
		return 0;
	memcpy(buf, s, n);
	buf[n] = 0;
	snprintf(e.text, sizeof e.text, "%s", buf);
	char *end;
	e.thread = strtoll(buf + 1, &end, 10);
	char *kind = end + 1, *sp = strchr(kind, ' ');
	if (!sp || (size_t)(sp - kind) >= sizeof e.kind)
		return 0;
	memcpy(e.kind, kind, (size_t)(sp - kind));
	char *obj = sp + 1, *at = NULL;
	for (char *a = strstr(sp, " at "); a; a = strstr(a + 1, " at "))
		at = a;
	if (!at || !at[4])
		return 0;
	snprintf(e.site, sizeof e.site, "%s", base(at + 4));
	size_t on = at > obj ? (size_t)(at - obj) : 0;
	if (on && !raw_address(obj, on))
		snprintf(e.object, sizeof e.object, "%.*s", (int)on, obj);
	return add(p, &e) < 0 ? -1 : 1;
}

/* The elements of one comment; how many, -1 when out of memory. */
static int parse_comment(struct pattern *p, const char *t)
{
	const char *body = strstr(t, EM_DASH);
	body = body ? body + strlen(EM_DASH) : t;
	const char *stop = strstr(body, ";" CONTEXT);
	if (!stop)
		stop = body + strlen(body);
	int found = 0;
	for (const char *q = body; q < stop; q++) {
		if (!element_at(body, q))
			continue;
		const char *e = q + 1;
		while (e < stop && !element_at(body, e))
			e++;
		int rc = parse_element(p, q, (size_t)(e - q));
		if (rc < 0)
			return -1;
		found += rc;
		q = e - 1;
	}
	return found;
}

/* A comment that lists no events (a schedule of your own): every
 * "FILE:LINE" it names, for any thread and kind, each once. */
static int parse_sites(struct pattern *p, const char *t)
{
	for (const char *c = strchr(t, ':'); c; c = strchr(c + 1, ':')) {
		if (c[1] < '0' || c[1] > '9')
			continue;
		const char *b = c, *e = c + 1;
		while (b > t && (strchr("._-+/", b[-1]) || (b[-1] >= '0' && b[-1] <= '9') ||
				 (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= 'A' && b[-1] <= 'Z')))
			b--;
		while (*e >= '0' && *e <= '9')
			e++;
		if (b == c || !memchr(b, '.', (size_t)(c - b)))
			continue; /* "1: race": a number, not a file */
		struct pattern_ev ev = { .thread = -1 };
		char site[sizeof ev.site];
		snprintf(site, sizeof site, "%.*s", (int)(e - b), b);
		snprintf(ev.site, sizeof ev.site, "%s", base(site));
		snprintf(ev.text, sizeof ev.text, "%s", ev.site);
		bool dup = false;
		for (size_t i = 0; i < p->n; i++)
			dup = dup || !strcmp(p->ev[i].site, ev.site);
		if (!dup && add(p, &ev) < 0)
			return -1;
	}
	return 0;
}

int pattern_init(struct pattern *p, const json_t *predicted)
{
	size_t i;
	json_t *c;
	p->ev = NULL;
	p->n = 0;
	json_array_foreach(predicted, i, c) {
		const char *t = json_string_value(c);
		if (t && parse_comment(p, t) < 0) {
			pattern_release(p);
			return -1;
		}
	}
	json_array_foreach(predicted, i, c) {
		const char *t = json_string_value(c);
		if (!p->n && t && parse_sites(p, t) < 0) {
			pattern_release(p);
			return -1;
		}
	}
	return 0;
}

void pattern_release(struct pattern *p)
{
	free(p->ev);
	p->ev = NULL;
	p->n = 0;
}

/* A kind as the comment says it: avtrace's name ("read"), or, in the
 * predictor's raw wording (names unavailable), a verb. */
static bool kind_matches(const char *said, const char *kind)
{
	static const char *const verbs[][4] = {
		{ "reads", "read", "rmw", NULL },
		{ "writes", "write", "rmw", NULL },
		{ "acquires", "acquire", "rd_acquire", "wr_acquire" },
		{ "requests", "acquire", "rd_acquire", "wr_acquire" },
		{ "read-locks", "rd_acquire", NULL, NULL },
		{ "write-locks", "wr_acquire", NULL, NULL },
	};
	if (!*said || !strcmp(said, kind))
		return true;
	for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++)
		if (!strcmp(said, verbs[v][0]))
			for (size_t k = 1; k < 4 && verbs[v][k]; k++)
				if (!strcmp(kind, verbs[v][k]))
					return true;
	return false;
}

bool pattern_ev_matches(const struct pattern_ev *pe, const json_t *e)
{
	const char *file = jstr(e, "file");
	if (!*file)
		return false;
	char site[1100];
	snprintf(site, sizeof site, "%s:%lld", base(file), json_integer_value(json_object_get(e, "line")));
	return strcmp(site, pe->site) == 0 &&
	       (pe->thread < 0 || pe->thread == json_integer_value(json_object_get(e, "thread"))) &&
	       kind_matches(pe->kind, jstr(e, "kind")) && (!*pe->object || !strcmp(pe->object, jstr(e, "object")));
}

bool pattern_matches(const struct pattern *p, const json_t *e)
{
	for (size_t j = 0; j < p->n; j++)
		if (pattern_ev_matches(&p->ev[j], e))
			return true;
	return false;
}

static long long distance(long long i, const long long *anchors, size_t nanchors, long long last)
{
	long long best = i > last ? i - last : last - i;
	for (size_t a = 0; a < nanchors; a++) {
		long long d = i > anchors[a] ? i - anchors[a] : anchors[a] - i;
		if (a == 0 || d < best)
			best = d;
	}
	return best;
}

int *pattern_mark(const struct pattern *p, const json_t *il, const long long *anchors, size_t nanchors)
{
	size_t nev = json_array_size(il);
	int *mark = calloc(nev ? nev : 1, sizeof *mark);
	for (size_t j = 0; mark && j < p->n; j++) {
		long long best = -1, bestd = 0;
		for (size_t i = 0; i < nev; i++) {
			if (mark[i] || !pattern_ev_matches(&p->ev[j], json_array_get(il, i)))
				continue;
			long long d = distance((long long)i, anchors, nanchors, (long long)nev - 1);
			if (best < 0 || d < bestd) {
				best = (long long)i;
				bestd = d;
			}
		}
		if (best >= 0)
			mark[best] = (int)j + 1;
	}
	return mark;
}
