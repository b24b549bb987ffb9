/*
 * Access-anomaly patterns and their text syntax (pattern.h).
 *
 * The built-in patterns are written in the same syntax as user files and
 * parsed once: one grammar, one validator, and the docs' examples are the
 * real thing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "trace/file.h"
#include "trace/log.h"

static const char builtin_text[] =
	"race-RW consecutive: r t1 x u1, w t2 x u2\n"
	"race-WR consecutive: w t1 x u1, r t2 x u2\n"
	"race-WW consecutive: w t1 x u1, w t2 x u2\n"
	"atomicity-RWR: r t1 x u1, w t2 x u2, r t1 x u1\n"
	"atomicity-RWW: r t1 x u1, w t2 x u2, w t1 x u1\n"
	"atomicity-WWR: w t1 x u1, w t2 x u2, r t1 x u1\n"
	"atomicity-WRW: w t1 x u1, r t2 x u2, w t1 x u1\n"
	"atomicity-WWW: w t1 x u1, w t2 x u2, w t1 x u1\n"
	"atomic-set-5: r t1 x u1, w t2 x u2, w t2 y u2, r t1 y u1\n"
	"atomic-set-6: w t1 x u1, w t2 x u2, w t2 y u2, w t1 y u1\n"
	"atomic-set-7: w t1 x u1, w t2 y u2, w t2 x u2, w t1 y u1\n"
	"atomic-set-8: w t1 x u1, r t2 x u2, r t2 y u2, w t1 y u1\n"
	"atomic-set-9: w t1 x u1, r t2 y u2, r t2 x u2, w t1 y u1\n"
	"atomic-set-10: r t1 x u1, w t2 y u2, w t2 x u2, r t1 y u1\n"
	"atomic-set-11: w t1 x u1, r t2 y u2, w t1 y u1, r t2 x u2\n";

const struct pr_patterns *pr_builtin_patterns(void)
{
	static struct pr_pat store[16];
	static struct pr_patterns ps;
	static bool ready;
	if (!ready) {
		struct pr_patterns tmp = { NULL, 0, 0 };
		BUG_ON(pr_patterns_parse(&tmp, builtin_text, "<built-in>") < 0 ||
		       tmp.n > sizeof store / sizeof store[0]);
		memcpy(store, tmp.p, tmp.n * sizeof *store);
		ps = (struct pr_patterns){ store, tmp.n, tmp.n };
		pr_patterns_release(&tmp);
		ready = true;
	}
	return &ps;
}

void pr_patterns_release(struct pr_patterns *ps)
{
	free(ps->p);
	ps->p = NULL;
	ps->n = ps->cap = 0;
}

/* ---- search order ---- */

static bool chosen_var(const struct pr_pat *p, const bool *done, uint8_t var)
{
	for (unsigned i = 0; i < p->n; i++)
		if (done[i] && p->ev[i].var == var)
			return true;
	return false;
}

/* Event i's role has a chosen event right before or after i in its part. */
static bool adjacent_chosen(const struct pr_pat *p, const bool *done, unsigned i)
{
	for (int d = -1; d <= 1; d += 2)
		for (int j = (int)i + d; j >= 0 && j < p->n; j += d)
			if (p->ev[j].thr == p->ev[i].thr) {
				if (done[j])
					return true;
				break;
			}
	return false;
}

bool pr_pat_prepare(struct pr_pat *p)
{
	bool done[PR_PAT_MAX] = { false }, bound[PR_PAT_MAX] = { false };
	p->order[0] = 0;
	done[0] = bound[p->ev[0].thr] = true;
	for (unsigned k = 1; k < p->n; k++) {
		int pick = -1;
		for (unsigned i = 0; i < p->n && pick < 0; i++)
			if (!done[i] && bound[p->ev[i].thr] && adjacent_chosen(p, done, i))
				pick = (int)i;
		for (unsigned i = 0; i < p->n && pick < 0; i++)
			if (!done[i] && !bound[p->ev[i].thr] && chosen_var(p, done, p->ev[i].var))
				pick = (int)i;
		if (pick < 0)
			return false;
		p->order[k] = (uint8_t)pick;
		done[pick] = bound[p->ev[pick].thr] = true;
	}
	return true;
}

/* ---- the text syntax ---- */

struct names {
	char s[PR_PAT_MAX][PR_PAT_NAME];
	unsigned n;
};

/* The index of name in ns, added if new; -1 if there would be too many. */
static int name_id(struct names *ns, const char *name)
{
	for (unsigned i = 0; i < ns->n; i++)
		if (!strcmp(ns->s[i], name))
			return (int)i;
	if (ns->n == PR_PAT_MAX)
		return -1;
	snprintf(ns->s[ns->n], sizeof ns->s[0], "%s", name);
	return (int)ns->n++;
}

static bool ident(const char *s)
{
	if (!*s || strlen(s) >= PR_PAT_NAME)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

/* One event "AT THREAD VAR REGION" into p->ev[p->n]; NULL or the error. */
static const char *parse_event(struct pr_pat *p, char *text, struct names *vars,
			       struct names *regs, int *regthr)
{
	char *tok[5];
	unsigned n = 0;
	for (char *s = strtok(text, " \t"); s; s = strtok(NULL, " \t"))
		if (n < 5)
			tok[n++] = s;
		else
			n++;
	if (n != 4)
		return "an event is: ACCESS THREAD VARIABLE REGION (e.g. 'w t1 x u1')";
	if (p->n == PR_PAT_MAX)
		return "too many events (at most 4)";
	struct pr_pat_ev *e = &p->ev[p->n];
	if (!strcmp(tok[0], "r") || !strcmp(tok[0], "R"))
		e->write = 0;
	else if (!strcmp(tok[0], "w") || !strcmp(tok[0], "W"))
		e->write = 1;
	else
		return "the access type must be r or w";
	char *end;
	if (tok[1][0] != 't' || !isdigit((unsigned char)tok[1][1]))
		return "a thread is t1, t2, t3 or t4";
	unsigned long t = strtoul(tok[1] + 1, &end, 10);
	if (*end || t < 1 || t > 4)
		return "a thread is t1, t2, t3 or t4";
	if (t > (unsigned long)p->nthr + 1)
		return "threads must be named t1, t2, ... in order of first use";
	e->thr = (uint8_t)(t - 1);
	if (t > p->nthr)
		p->nthr = (uint8_t)t;
	if (!ident(tok[2]) || !ident(tok[3]))
		return "variables and regions are names of letters, digits, '_', '-' or '.'";
	int v = name_id(vars, tok[2]), r = name_id(regs, tok[3]);
	if (v < 0)
		return "too many variables (at most 4)";
	if (r < 0)
		return "too many regions (at most 4)";
	if (regthr[r] >= 0 && regthr[r] != e->thr)
		return "a region belongs to one thread";
	regthr[r] = e->thr;
	e->var = (uint8_t)v;
	e->reg = (uint8_t)r;
	p->nvar = (uint8_t)vars->n;
	p->n++;
	return NULL;
}

/* The checks on a whole pattern; NULL or the error. */
static const char *validate(struct pr_pat *p)
{
	bool conflict = false;
	if (p->n < 2)
		return "a pattern has at least 2 events";
	if (p->nthr < 2)
		return "a pattern needs at least 2 threads";
	for (unsigned i = 0; i < p->n; i++)
		for (unsigned j = i + 1; j < p->n; j++) {
			const struct pr_pat_ev *a = &p->ev[i], *b = &p->ev[j];
			if (a->thr != b->thr && a->var == b->var && (a->write || b->write))
				conflict = true;
			/* a region's events are consecutive in its thread's part */
			if (a->thr == b->thr && a->reg == b->reg)
				for (unsigned k = i + 1; k < j; k++)
					if (p->ev[k].thr == a->thr && p->ev[k].reg != a->reg)
						return "a region's events must be consecutive in its thread";
		}
	if (!conflict)
		return "no two threads conflict (same variable, one writing)";
	if (p->consecutive && (p->n != 2 || p->ev[0].var != p->ev[1].var))
		return "'consecutive' needs exactly 2 events on one variable";
	if (!pr_pat_prepare(p))
		return "every thread but t1 must access a variable another thread accesses";
	return NULL;
}

/* One line "NAME [consecutive]: EVENT, EVENT, ..." into p; NULL or the
 * error. */
static const char *parse_line(char *line, struct pr_pat *p)
{
	struct names vars = { .n = 0 }, regs = { .n = 0 };
	int regthr[PR_PAT_MAX] = { -1, -1, -1, -1 };
	char *colon = strchr(line, ':');
	memset(p, 0, sizeof *p);
	if (!colon)
		return "expected 'NAME: EVENT, EVENT, ...'";
	*colon = 0;
	char *name = strtok(line, " \t"), *flag = strtok(NULL, " \t");
	if (!name || !ident(name))
		return "bad pattern name (letters, digits, '_', '-', '.'; at most 39)";
	if (flag && strcmp(flag, "consecutive"))
		return "unknown flag (only 'consecutive')";
	if (strtok(NULL, " \t"))
		return "expected 'NAME [consecutive]:'";
	snprintf(p->name, sizeof p->name, "%s", name);
	p->consecutive = flag != NULL;
	char *save = NULL;
	for (char *ev = strtok_r(colon + 1, ",", &save); ev; ev = strtok_r(NULL, ",", &save)) {
		const char *err = parse_event(p, ev, &vars, &regs, regthr);
		if (err)
			return err;
	}
	return validate(p);
}

static int push(struct pr_patterns *ps, const struct pr_pat *p)
{
	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 8;
		struct pr_pat *n = realloc(ps->p, nc * sizeof *n);
		if (!n)
			return -1;
		ps->p = n;
		ps->cap = nc;
	}
	ps->p[ps->n++] = *p;
	return 0;
}

int pr_patterns_parse(struct pr_patterns *ps, const char *text, const char *file)
{
	size_t first = ps->n;
	unsigned lineno = 0;
	const char *s = text;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char line[1024];
		struct pr_pat p;
		lineno++;
		if (len >= sizeof line) {
			avt_error("%s:%u: line too long", file, lineno);
			goto fail;
		}
		memcpy(line, s, len);
		line[len] = 0;
		s += len + (nl ? 1 : 0);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *b = line;
		while (isspace((unsigned char)*b))
			b++;
		if (!*b)
			continue;
		const char *err = parse_line(b, &p);
		if (err) {
			avt_error("%s:%u: %s", file, lineno, err);
			goto fail;
		}
		if (ps->n - first >= PR_PAT_FILE_MAX) {
			avt_error("%s:%u: more than %u patterns", file, lineno, PR_PAT_FILE_MAX);
			goto fail;
		}
		for (size_t i = 0; i < ps->n; i++)
			if (!strcmp(ps->p[i].name, p.name)) {
				avt_error("%s:%u: pattern '%s' defined twice", file, lineno, p.name);
				goto fail;
			}
		if (push(ps, &p) < 0) {
			avt_error("cannot read patterns: out of memory");
			goto fail;
		}
	}
	return 0;
fail:
	ps->n = first;
	return -1;
}

/* A NUL would end the text early and hide the lines after it. */
static int check_nul(const char *buf, size_t len, const char *path)
{
	const char *nul = memchr(buf, 0, len);
	if (!nul)
		return 0;
	unsigned line = 1;
	for (const char *c = buf; c < nul; c++)
		line += *c == '\n';
	avt_error("%s:%u: NUL byte", path, line);
	return -1;
}

int pr_patterns_load(struct pr_patterns *ps, const char *path)
{
	uint64_t st_size;
	char why[128];
	/* a device or a FIFO would be read until memory runs out */
	FILE *f = avt_fopen_regular(path, PR_PAT_FILE_BYTES, &st_size);
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;
	if (!f && (errno == EINVAL || errno == EFBIG)) {
		avt_error("cannot read pattern file '%s': %s", path,
			  avt_file_error(errno, st_size, PR_PAT_FILE_BYTES, why, sizeof why));
		return -1;
	}
	if (!f) {
		avt_error("cannot open pattern file '%s': %s", path, strerror(errno));
		return -1;
	}
	/* one byte more than fstat said tells a file that grew meanwhile */
	size_t size = (size_t)st_size;
	buf = malloc(size + 2);
	if (!buf) {
		avt_error("cannot read pattern file '%s': out of memory", path);
		goto out;
	}
	len = fread(buf, 1, size + 1, f);
	if (ferror(f)) {
		avt_error("cannot read pattern file '%s': %s", path, strerror(errno));
		goto out;
	}
	if (len > size) {
		avt_error("cannot read pattern file '%s': it grew while being read", path);
		goto out;
	}
	buf[len] = 0;
	if (check_nul(buf, len, path) == 0)
		rc = pr_patterns_parse(ps, buf, path);
out:
	free(buf);
	fclose(f);
	return rc;
}
