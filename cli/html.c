/* The HTML page of a reproduced bug (cli/html.h, docs/html-report.md).
 *
 * Layout: time runs down, one row per event of the failing replay's
 * interleaving (replays/NNNN.json, or the minimal schedule's replay
 * reports/X.min.json), one lane (column) per thread in the order the run
 * first ran them.  Everything is positioned divs in one relative box, plus
 * one inline SVG drawn over it for the hand-over arrows, so the page needs
 * no script and renders the same in any browser, printed or not.  A long
 * run keeps the events that matter (the predicted ones, the failure, a
 * window around each switch, the end) and folds the rest into gap rows.
 *
 * Every string from the directory (object names, paths, functions, the
 * schedule's comments) goes through html_text()/html_attr(): a name may
 * hold < & " and the page must still be one the browser reads as meant. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "html.h"
#include "trace/log.h"
#include "trace/schedule.h"
#include "trace/version.h"

#define ROW_H 24    /* px per event row */
#define LANE_W 270  /* px per thread lane */
#define AXIS_W 52   /* px of the time axis column */
#define HEAD_H 30   /* px of the lane heads */
#define LABEL_W 150 /* px right of the lanes for the switches' labels */
#define FULL_ROWS 400 /* runs up to this many events are drawn whole */
#define WINDOW 4    /* events kept on each side of a switch in a long run */

enum {
	HEV_PRED = 1,     /* one of the prediction's events */
	HEV_FAIL = 2,     /* the failing access or event (the failure site) */
	HEV_FATAL = 4,    /* the fatal signal itself */
};

struct hev {
	const json_t *j;
	int thread;
	unsigned tord;  /* its position among its thread's events (0: first) */
	unsigned flags;
	int pred;       /* 1-based number of the predicted event, 0 if none */
	int row;        /* row on the time axis, -1 when folded */
};

struct hswitch {
	const json_t *j; /* its entry of the minimal schedule's "switches", or NULL */
	unsigned step;  /* schedule step (1-based) the switch lands on */
	int from, to;   /* threads */
	long before, after; /* indices into the events, -1 if not shown */
	bool yield;     /* to a yield step: the thread ran on with no event */
};

struct page {
	struct results *r;
	const struct result_bug *b;
	char name[64];
	char min_sched[4500], min_json[4500], sched[4500];
	bool minimal;        /* the switches are the minimal schedule's */
	json_t *min;         /* reports/X.min.json, or NULL */
	const json_t *replay; /* the replay drawn: min, or the bug's */
	struct hev *ev;
	size_t nev;
	long omitted;        /* events of the run before the first one shown */
	bool ords;           /* each event's position in its thread is known */
	struct schedule *s;  /* the schedule drawn, or NULL if unreadable */
	int *lanes;          /* threads in lane order */
	size_t nlanes;
	struct hswitch *sw;
	size_t nsw;
	long fail_ev;        /* index of the failing event, -1 if none */
	size_t nwait;        /* threads of a deadlock's cycle (a row of waits) */
	int nrows;
};

/* ---- writing */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long jint(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Text for an element's content or a quoted attribute. */
static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A file:// URI for an absolute path: every byte but unreserved ones and
 * '/' percent-encoded, so nothing in it needs HTML escaping either. */
static void file_uri(FILE *f, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	fputs("file://", f);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-._~", *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

/* A word the shell reads back as it is: quoted when it needs to be. */
static void shell_word(char *buf, size_t len, const char *s)
{
	bool plain = *s != 0;
	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%", *p))
			plain = false;
	if (plain) {
		snprintf(buf, len, "%s", s);
		return;
	}
	size_t o = 0;
	if (o + 1 < len)
		buf[o++] = '\'';
	for (const char *p = s; *p && o + 5 < len; p++) {
		if (*p == '\'') {
			memcpy(buf + o, "'\\''", 4);
			o += 4;
		} else {
			buf[o++] = *p;
		}
	}
	if (o + 1 < len)
		buf[o++] = '\'';
	buf[o] = 0;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

/* "bank.c:34" linked to the file when its path is absolute. */
static void site_link(FILE *f, const json_t *site)
{
	const char *file = jstr(site, "file");
	long long line = jint(site, "line", 0);
	if (!file) {
		const char *mod = jstr(site, "module");
		long long off = jint(site, "offset", -1);
		if (mod && off >= 0) {
			fputs("<span class=\"loc\">", f);
			html_text(f, mod);
			fprintf(f, "+0x%llx</span>", off);
		}
		return;
	}
	if (file[0] == '/') {
		fputs("<a class=\"loc\" href=\"", f);
		file_uri(f, file);
		fputs("\">", f);
	} else {
		fputs("<span class=\"loc\">", f);
	}
	html_text(f, base_name(file));
	if (line > 0)
		fprintf(f, ":%lld", line);
	fputs(file[0] == '/' ? "</a>" : "</span>", f);
}

/* Full description of an event for its tooltip. */
static void event_title(FILE *f, const json_t *e)
{
	fprintf(f, "#%lld T%lld ", jint(e, "index", -1), jint(e, "thread", -1));
	html_text(f, jstr(e, "kind") ?: "?");
	if (jstr(e, "object")) {
		fputc(' ', f);
		html_text(f, jstr(e, "object"));
	}
	if (jstr(e, "function")) {
		fputs(" in ", f);
		html_text(f, jstr(e, "function"));
	}
	if (jstr(e, "file")) {
		fputs(" at ", f);
		html_text(f, jstr(e, "file"));
		fprintf(f, ":%lld", jint(e, "line", 0));
	}
	if (jstr(e, "module"))
		fputs(" (", f), html_text(f, jstr(e, "module")),
			fprintf(f, "+0x%llx)", jint(e, "offset", 0));
}

/* "T1 read balance (bank.c:34)" in words, for the lists. */
static void event_words(FILE *f, const json_t *e)
{
	if (!e) {
		fputs("(no event)", f);
		return;
	}
	fprintf(f, "T%lld <span class=\"k\">", jint(e, "thread", -1));
	html_text(f, jstr(e, "kind") ?: "?");
	fputs("</span>", f);
	if (jstr(e, "object")) {
		fputs(" <span class=\"o\">", f);
		html_text(f, jstr(e, "object"));
		fputs("</span>", f);
	}
	if (jstr(e, "file") || jstr(e, "module")) {
		fputs(" ", f);
		site_link(f, e);
	}
}

/* ---- reading */

void html_bug_name(const struct result_bug *b, char *buf, size_t len)
{
	if (b->report[0]) {
		const char *s = base_name(b->report);
		size_t n = strlen(s);
		if (n > 4 && !strcmp(s + n - 4, ".txt"))
			n -= 4;
		snprintf(buf, len, "%.*s", (int)n, s);
	} else if (b->explored) {
		snprintf(buf, len, "explore-%s", base_name(b->run_dir));
	} else {
		snprintf(buf, len, "%04u", b->schedule);
	}
}

static int thread_of(const char *s)
{
	return s && s[0] == 'T' ? atoi(s + 1) : -1;
}

static long find_event(const struct page *pg, int thread, long long tord)
{
	if (!pg->ords)
		return -1; /* a thread's positions are unknown in this window */
	for (size_t i = 0; i < pg->nev; i++)
		if (pg->ev[i].thread == thread && pg->ev[i].tord == tord)
			return (long)i;
	return -1;
}

/* The event at position idx of the run (its "index"), if shown and of
 * thread; -1 if not. */
static long find_index(const struct page *pg, long long idx, int thread)
{
	for (size_t i = 0; i < pg->nev; i++)
		if (jint(pg->ev[i].j, "index", -1) == idx)
			return pg->ev[i].thread == thread ? (long)i : -1;
	return -1;
}

/* The switches of the schedule the replay followed: a change of thread
 * between consecutive run/yield lines.  The replay runs each run line's
 * events one after the other, so the first event of step k is at the run
 * position the run lines before it add up to. */
static void switches_from_schedule(struct page *pg)
{
	const struct schedule *s = pg->s;
	if (!s)
		return;
	pg->sw = calloc(s->nsteps ? s->nsteps : 1, sizeof *pg->sw);
	long long at = 0; /* run position of step i's first event */
	for (size_t i = 0; pg->sw && i < s->nsteps; i++) {
		const struct sched_step *p = i ? &s->steps[i - 1] : NULL, *c = &s->steps[i];
		if (p && p->thread != c->thread) {
			struct hswitch *w = &pg->sw[pg->nsw++];
			w->step = (unsigned)i + 1;
			w->from = (int)p->thread;
			w->to = (int)c->thread;
			w->yield = c->kind == SCHED_YIELD;
			w->before = find_index(pg, at - 1, w->from);
			w->after = w->yield ? -1 : find_index(pg, at, w->to);
		}
		if (c->kind == SCHED_RUN)
			at += c->count;
	}
}

/* Each thread's events before the JSON's window: from the schedule, when
 * the window starts within its run lines; false when it cannot tell. */
static bool window_bases(const struct page *pg, unsigned long long *base, int maxt)
{
	if (!pg->omitted)
		return true;
	unsigned long long left = (unsigned long long)pg->omitted;
	for (size_t i = 0; pg->s && left && i < pg->s->nsteps; i++) {
		const struct sched_step *c = &pg->s->steps[i];
		if (c->kind != SCHED_RUN || (int)c->thread > maxt)
			continue;
		unsigned long long take = c->count < left ? c->count : left;
		base[c->thread] += take;
		left -= take;
	}
	return left == 0;
}

/* The minimal schedule's switches, as its replay JSON gives them. */
static void switches_from_min(struct page *pg)
{
	const json_t *arr = json_object_get(pg->min, "switches");
	size_t i, n = json_array_size(arr);
	const json_t *w;
	pg->sw = calloc(n ? n : 1, sizeof *pg->sw);
	if (!pg->sw)
		return;
	json_array_foreach(arr, i, w) {
		struct hswitch *s = &pg->sw[pg->nsw++];
		s->j = w;
		s->step = (unsigned)jint(w, "step", 0);
		s->from = thread_of(jstr(w, "from"));
		s->to = thread_of(jstr(w, "to"));
		long long bi = jint(json_object_get(w, "before"), "index", -1);
		long long ai = jint(json_object_get(w, "after"), "index", -1);
		s->before = s->after = -1;
		for (size_t k = 0; k < pg->nev; k++) {
			long long idx = jint(pg->ev[k].j, "index", -2);
			if (idx == bi)
				s->before = (long)k;
			if (idx == ai)
				s->after = (long)k;
		}
		if (s->after >= 0 && pg->ev[s->after].thread != s->to) {
			s->yield = true; /* the next event is another thread's */
			s->after = -1;
		}
	}
}

/* The prediction's events, found in the interleaving by thread and
 * position in the thread (the replay ran the recording's events), or in a
 * cut window by thread, kind and code offset. */
static void mark_predicted(struct page *pg)
{
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(pg->b->prediction, "events"), i, e) {
		int th = (int)jint(e, "thread", -1);
		long k = find_event(pg, th, jint(e, "tindex", -1));
		const char *kind = jstr(e, "kind");
		if (k >= 0 && kind && strcmp(jstr(pg->ev[k].j, "kind") ?: "", kind))
			k = -1;
		for (size_t m = 0; k < 0 && m < pg->nev; m++)
			if (pg->ev[m].thread == th && !pg->ev[m].pred && kind &&
			    !strcmp(jstr(pg->ev[m].j, "kind") ?: "", kind) &&
			    jint(pg->ev[m].j, "offset", -1) == jint(e, "site_off", -2))
				k = (long)m;
		if (k >= 0) {
			pg->ev[k].flags |= HEV_PRED;
			if (!pg->ev[k].pred)
				pg->ev[k].pred = (int)i + 1;
		}
	}
}

/* The failure: the failing thread's last event at the failure site (the
 * access that failed, the call that raised), else its last event; the
 * fatal signal apart.  A deadlock's failure is its wait-for cycle, drawn
 * as one more row: what each blocked thread waits for. */
static void mark_failure(struct page *pg)
{
	const json_t *fail = json_object_get(pg->replay, "failure");
	pg->fail_ev = -1;
	pg->nwait = json_array_size(json_object_get(pg->replay, "deadlock"));
	if (fail && !pg->nwait) {
		int th = (int)jint(fail, "thread", -1);
		long last = -1;
		for (size_t i = 0; i < pg->nev; i++) {
			if (pg->ev[i].thread != th)
				continue;
			const char *kind = jstr(pg->ev[i].j, "kind") ?: "";
			if (!strcmp(kind, "fatal_signal")) {
				pg->ev[i].flags |= HEV_FATAL;
				continue;
			}
			last = (long)i;
			const char *m = jstr(pg->ev[i].j, "module"), *fm = jstr(fail, "module");
			if (m && fm && !strcmp(m, fm) &&
			    jint(pg->ev[i].j, "offset", -1) == jint(fail, "offset", -2))
				pg->fail_ev = (long)i;
		}
		if (pg->fail_ev < 0)
			pg->fail_ev = last;
		if (pg->fail_ev >= 0)
			pg->ev[pg->fail_ev].flags |= HEV_FAIL;
	}
}

/* Rows: every event of a short run; of a long one the events that
 * matter, the rest folded (row -1). */
static void assign_rows(struct page *pg)
{
	bool all = pg->nev <= FULL_ROWS;
	bool *keep = calloc(pg->nev ? pg->nev : 1, sizeof *keep);
	if (!keep)
		all = true;
	for (size_t i = 0; !all && i < pg->nev; i++) {
		if (pg->ev[i].flags || i + 10 >= pg->nev)
			keep[i] = true;
		if (pg->ev[i].flags & (HEV_FAIL | HEV_PRED))
			for (size_t k = i >= WINDOW ? i - WINDOW : 0; k < pg->nev && k <= i + WINDOW; k++)
				keep[k] = true;
	}
	for (size_t s = 0; !all && s < pg->nsw; s++) {
		long c = pg->sw[s].after >= 0 ? pg->sw[s].after : pg->sw[s].before;
		for (long k = c - WINDOW; c >= 0 && k <= c + WINDOW; k++)
			if (k >= 0 && (size_t)k < pg->nev)
				keep[k] = true;
	}
	int row = pg->omitted ? 1 : 0; /* a gap row for what the JSON left out */
	for (size_t i = 0; i < pg->nev; i++) {
		if (all || keep[i]) {
			pg->ev[i].row = row++;
		} else {
			pg->ev[i].row = -1;
			if (i == 0 || pg->ev[i - 1].row >= 0)
				row++; /* one gap row per folded run */
		}
	}
	pg->nrows = row + (pg->nwait ? 1 : 0);
	free(keep);
}

static int page_load(struct page *pg, struct results *r, const struct result_bug *b)
{
	struct stat st;
	memset(pg, 0, sizeof *pg);
	pg->r = r;
	pg->b = b;
	html_bug_name(b, pg->name, sizeof pg->name);
	snprintf(pg->min_sched, sizeof pg->min_sched, "%s/reports/%s.min.sched", r->dir, pg->name);
	snprintf(pg->min_json, sizeof pg->min_json, "%s/reports/%s.min.json", r->dir, pg->name);
	snprintf(pg->sched, sizeof pg->sched, "%s/schedules/%04u.sched", b->run_dir, b->schedule);
	if (b->explored && stat(pg->sched, &st) != 0)
		snprintf(pg->sched, sizeof pg->sched, "%s.sched", b->run_dir);
	if (stat(pg->min_sched, &st) == 0)
		pg->min = json_load_file(pg->min_json, 0, NULL);
	pg->minimal = pg->min && json_is_array(json_object_get(pg->min, "interleaving"));
	if (!pg->minimal) {
		json_decref(pg->min);
		pg->min = NULL;
	}
	pg->replay = pg->minimal ? pg->min : b->replay;
	const json_t *il = json_object_get(pg->replay, "interleaving");
	pg->omitted = (long)jint(pg->replay, "interleaving_omitted", 0);
	pg->nev = json_array_size(il);
	pg->ev = calloc(pg->nev ? pg->nev : 1, sizeof *pg->ev);
	pg->lanes = calloc(pg->nev + 1, sizeof *pg->lanes);
	if (!pg->ev || !pg->lanes)
		return -1;
	char err[512];
	const char *spath = pg->minimal ? pg->min_sched : pg->sched;
	if (stat(spath, &st) == 0)
		pg->s = schedule_read(spath, err, sizeof err);
	int maxt = 0;
	for (size_t i = 0; i < pg->nev; i++) {
		int t = (int)jint(json_array_get(il, i), "thread", 0);
		if (t > maxt)
			maxt = t;
	}
	for (size_t i = 0; pg->s && i < pg->s->nsteps; i++)
		if ((int)pg->s->steps[i].thread > maxt)
			maxt = (int)pg->s->steps[i].thread;
	unsigned *count = calloc((size_t)maxt + 1, sizeof *count);
	unsigned long long *base = calloc((size_t)maxt + 1, sizeof *base);
	if (!count || !base) {
		free(count);
		free(base);
		return -1;
	}
	pg->ords = window_bases(pg, base, maxt);
	for (size_t i = 0; i < pg->nev; i++) {
		struct hev *e = &pg->ev[i];
		e->j = json_array_get(il, i);
		e->thread = (int)jint(e->j, "thread", 0);
		if (e->thread < 0)
			e->thread = 0;
		if (!count[e->thread]++) /* a new lane, in the order the run began them */
			pg->lanes[pg->nlanes++] = e->thread;
		e->tord = (unsigned)(base[e->thread] + count[e->thread] - 1);
	}
	free(count);
	free(base);
	if (pg->minimal && json_object_get(pg->min, "switches"))
		switches_from_min(pg);
	else
		switches_from_schedule(pg);
	mark_predicted(pg);
	mark_failure(pg);
	assign_rows(pg);
	return 0;
}

static void page_release(struct page *pg)
{
	json_decref(pg->min);
	if (pg->s)
		schedule_free(pg->s);
	free(pg->ev);
	free(pg->lanes);
	free(pg->sw);
}

/* ---- the page */

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#1d2430;background:#fff}"
	"h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid #ccd}"
	".sub{color:#556;margin:0}code,pre,.ev,.mono{font-family:ui-monospace,monospace}"
	"pre{background:#f4f5f8;padding:8px 10px;border-radius:4px;overflow-x:auto}"
	"a.loc{color:#1b57b5;text-decoration:none}a.loc:hover{text-decoration:underline}"
	".loc{color:#445}.k{font-weight:600}.o{color:#6a2d91}"
	".legend span{display:inline-block;margin-right:14px}"
	".sw-swatch{display:inline-block;border-top:2px dashed #d0193a;width:22px;height:0;vertical-align:middle}"
	".box{display:inline-block;width:14px;height:12px;border:1px solid #889;vertical-align:middle}"
	".scroll{overflow-x:auto;padding-bottom:8px}"
	".tl{position:relative;margin-top:8px}"
	".lane{position:absolute;top:0;border-left:1px solid #d6d9e2;background:#fafbfd}"
	".lane:nth-child(even){background:#f2f4f9}"
	".lane-head{position:absolute;top:0;left:0;right:0;height:26px;line-height:26px;text-align:center;"
	"font-weight:700;background:#dfe4ef;border-bottom:1px solid #b9c0d0}"
	".tick{position:absolute;left:0;font:11px ui-monospace,monospace;color:#889;text-align:right}"
	".ev{position:absolute;height:20px;line-height:20px;font-size:12px;white-space:nowrap;overflow:hidden;"
	"text-overflow:ellipsis;padding:0 5px;border:1px solid #c3c8d4;border-radius:3px;background:#fff;"
	"box-sizing:border-box}"
	".ev.predicted{background:#ffe9a8;border:2px solid #e09b00}"
	".ev.failure{background:#d0193a;color:#fff;border:2px solid #8c0a22}"
	".ev.failure a.loc,.ev.failure .o,.ev.failure .loc{color:#fff}"
	".ev.fatal{background:#5c0716;color:#fff;border-color:#5c0716}"
	".ev.fatal a.loc,.ev.fatal .o,.ev.fatal .loc{color:#fff}"
	".ev.switch-to{box-shadow:0 0 0 2px #d0193a inset}"
	".badge{display:inline-block;margin-right:4px;padding:0 4px;border-radius:8px;background:#e09b00;"
	"color:#fff;font-size:10px;line-height:14px;font-weight:700}"
	".ev.failure .badge{background:#fff;color:#d0193a}"
	".switch{position:absolute;height:0;border-top:2px dashed #d0193a}"
	".switch span{position:absolute;right:0;top:-8px;font-size:11px;color:#d0193a;font-weight:700;"
	"background:#fff;padding:0 3px}"
	".gap{position:absolute;text-align:center;font-size:11px;color:#667;background:repeating-linear-gradient("
	"45deg,#eef0f5,#eef0f5 6px,#e3e6ee 6px,#e3e6ee 12px)}"
	"svg.hand{position:absolute;top:0;left:0;pointer-events:none}"
	"ol.frames li{font-family:ui-monospace,monospace;font-size:13px}"
	"ol.frames li.own{font-weight:700}"
	"table.sw{border-collapse:collapse}table.sw td,table.sw th{border:1px solid #ccd;padding:3px 8px;"
	"text-align:left;font-size:13px}"
	"footer{margin-top:28px;color:#889;font-size:12px}";

static int lane_x(const struct page *pg, int thread)
{
	for (size_t i = 0; i < pg->nlanes; i++)
		if (pg->lanes[i] == thread)
			return AXIS_W + (int)i * LANE_W;
	return AXIS_W;
}

static int row_y(int row)
{
	return HEAD_H + row * ROW_H;
}

static void write_event(FILE *f, const struct page *pg, size_t i)
{
	const struct hev *e = &pg->ev[i];
	const char *kind = jstr(e->j, "kind") ?: "?";
	fprintf(f, "<div id=\"ev-%lld\" class=\"ev kind-", jint(e->j, "index", (long long)i));
	html_text(f, kind);
	if (e->flags & HEV_PRED)
		fputs(" predicted", f);
	if (e->flags & HEV_FAIL)
		fputs(" failure", f);
	if (e->flags & HEV_FATAL)
		fputs(" fatal", f);
	for (size_t s = 0; s < pg->nsw; s++)
		if (pg->sw[s].after == (long)i) {
			fputs(" switch-to", f);
			break;
		}
	fprintf(f, "\" data-thread=\"T%d\" style=\"left:%dpx;top:%dpx;width:%dpx\" title=\"", e->thread,
		lane_x(pg, e->thread) + 5, row_y(e->row) + 2, LANE_W - 10);
	event_title(f, e->j);
	fputs("\">", f);
	if (e->pred)
		fprintf(f, "<span class=\"badge\">P%d</span>", e->pred);
	if (e->flags & HEV_FAIL)
		fputs("<span class=\"badge\">fails</span>", f);
	fputs("<span class=\"k\">", f);
	html_text(f, kind);
	fputs("</span>", f);
	if (jstr(e->j, "object")) {
		fputs(" <span class=\"o\">", f);
		html_text(f, jstr(e->j, "object"));
		fputs("</span>", f);
	}
	if (jstr(e->j, "file") || jstr(e->j, "module")) {
		fputs(" ", f);
		site_link(f, e->j);
	}
	fputs("</div>\n", f);
}

/* A deadlock: in the last row, what each blocked thread waits for. */
static void write_waits(FILE *f, const struct page *pg)
{
	size_t i;
	const json_t *w;
	json_array_foreach(json_object_get(pg->replay, "deadlock"), i, w) {
		int th = (int)jint(w, "thread", -1);
		fprintf(f, "<div id=\"wait-T%d\" class=\"ev wait failure\" data-thread=\"T%d\" "
			   "style=\"left:%dpx;top:%dpx;width:%dpx\" title=\"T%d waits for ",
			th, th, lane_x(pg, th) + 5, row_y(pg->nrows - 1) + 2, LANE_W - 10, th);
		html_text(f, jstr(w, "waits_for") ?: "?");
		fputs(" ", f);
		html_text(f, jstr(w, "object") ?: "");
		fputs("\"><span class=\"k\">waits for ", f);
		html_text(f, jstr(w, "waits_for") ?: "?");
		fputs("</span> <span class=\"o\">", f);
		html_text(f, jstr(w, "object") ?: "");
		fputs("</span>", f);
		if (json_is_integer(json_object_get(w, "holder")))
			fprintf(f, " (held by T%lld)", jint(w, "holder", -1));
		if (jstr(w, "file") || jstr(w, "module")) {
			fputs(" ", f);
			site_link(f, w);
		}
		fputs("</div>\n", f);
	}
}

/* The arrows of the hand-overs: red for the schedule's switches, grey for
 * the other changes of thread (after the schedule's end, or where a
 * thread could not go on). */
static void write_handovers(FILE *f, const struct page *pg, int width, int height)
{
	fprintf(f, "<svg class=\"hand\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "aria-hidden=\"true\">"
		   "<defs><marker id=\"ah\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" "
		   "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#d0193a\"/></marker>"
		   "<marker id=\"ag\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" "
		   "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#9aa2b4\"/></marker></defs>\n",
		width, height, width, height);
	const struct hev *prev = NULL;
	for (size_t i = 0; i < pg->nev; i++) {
		const struct hev *e = &pg->ev[i];
		if (e->row < 0) {
			prev = NULL;
			continue;
		}
		if (prev && prev->thread != e->thread) {
			bool forced = false;
			for (size_t s = 0; s < pg->nsw; s++)
				forced |= pg->sw[s].after == (long)i;
			int x1 = lane_x(pg, prev->thread) + LANE_W / 2, y1 = row_y(prev->row) + 22;
			int x2 = lane_x(pg, e->thread) + LANE_W / 2, y2 = row_y(e->row) + 2;
			fprintf(f, "<line class=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
				   "stroke-width=\"%s\" marker-end=\"url(#%s)\"/>\n",
				forced ? "handover forced" : "handover", x1, y1, x2, y2,
				forced ? "#d0193a" : "#9aa2b4", forced ? "2" : "1", forced ? "ah" : "ag");
		}
		prev = e;
	}
	fputs("</svg>\n", f);
}

static void write_timeline(FILE *f, const struct page *pg)
{
	int width = AXIS_W + (int)pg->nlanes * LANE_W + LABEL_W, height = row_y(pg->nrows) + 8;
	fputs("<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"legend\">"
	      "Time runs down, one row per event; one lane per thread. "
	      "<span><i class=\"box\" style=\"background:#ffe9a8;border-color:#e09b00\"></i> predicted event</span>"
	      "<span><i class=\"box\" style=\"background:#d0193a\"></i> failing event</span>"
	      "<span><i class=\"sw-swatch\"></i> context switch of the schedule</span></p>\n",
	      f);
	fputs("<div class=\"scroll\">\n", f);
	fprintf(f, "<div class=\"tl\" id=\"lanes\" style=\"width:%dpx;height:%dpx\">\n", width, height);
	for (size_t i = 0; i < pg->nlanes; i++)
		fprintf(f, "<div class=\"lane\" id=\"lane-T%d\" data-thread=\"T%d\" style=\"left:%dpx;width:%dpx;"
			   "height:%dpx\"><div class=\"lane-head\">T%d</div></div>\n",
			pg->lanes[i], pg->lanes[i], AXIS_W + (int)i * LANE_W, LANE_W, height, pg->lanes[i]);
	if (pg->omitted)
		fprintf(f, "<div class=\"gap\" style=\"left:0;top:%dpx;width:%dpx;height:%dpx;line-height:%dpx\">"
			   "&#8942; %ld earlier events not in the replay&#39;s JSON &#8942;</div>\n",
			row_y(0) + 2, width, ROW_H - 4, ROW_H - 4, pg->omitted);
	for (size_t i = 0; i < pg->nev; i++) {
		const struct hev *e = &pg->ev[i];
		if (e->row >= 0) {
			fprintf(f, "<div class=\"tick\" style=\"top:%dpx;width:%dpx;line-height:%dpx\">%lld</div>\n",
				row_y(e->row), AXIS_W - 8, ROW_H, jint(e->j, "index", (long long)i));
			continue;
		}
		if (i && pg->ev[i - 1].row < 0)
			continue;
		size_t n = 0;
		while (i + n < pg->nev && pg->ev[i + n].row < 0)
			n++;
		int row = i ? pg->ev[i - 1].row + 1 : (pg->omitted ? 1 : 0);
		fprintf(f, "<div class=\"gap\" style=\"left:0;top:%dpx;width:%dpx;height:%dpx;line-height:%dpx\">"
			   "&#8942; %zu events &#8942;</div>\n",
			row_y(row) + 2, width, ROW_H - 4, ROW_H - 4, n);
	}
	for (size_t s = 0; s < pg->nsw; s++) {
		const struct hswitch *w = &pg->sw[s];
		if (w->after < 0 || pg->ev[w->after].row < 0)
			continue;
		fprintf(f, "<div class=\"switch\" id=\"switch-%zu\" style=\"left:%dpx;top:%dpx;width:%dpx\">"
			   "<span>switch %zu: T%d &#8594; T%d</span></div>\n",
			s + 1, AXIS_W, row_y(pg->ev[w->after].row), width - AXIS_W, s + 1, w->from, w->to);
	}
	for (size_t i = 0; i < pg->nev; i++)
		if (pg->ev[i].row >= 0)
			write_event(f, pg, i);
	write_waits(f, pg);
	write_handovers(f, pg, width, height);
	fputs("</div>\n</div>\n</section>\n", f);
}

static void write_switches(FILE *f, const struct page *pg)
{
	fputs("<section id=\"switches\"><h2>", f);
	if (pg->minimal)
		fprintf(f, "Fails with these %zu context switch%s</h2>\n<p>The minimal schedule "
			   "(<code>", pg->nsw, pg->nsw == 1 ? "" : "es");
	else
		fprintf(f, "The schedule&#39;s %zu context switch%s</h2>\n<p>The schedule that reproduced it, "
			   "not minimised (<code>", pg->nsw, pg->nsw == 1 ? "" : "es");
	html_text(f, pg->minimal ? pg->min_sched : pg->sched);
	fputs("</code>).</p>\n", f);
	if (!pg->nsw) {
		fputs("<p>No switch: the threads ran in the order the program gave them.</p></section>\n", f);
		return;
	}
	bool nb = false; /* minimize tried the passing neighbours */
	for (size_t s = 0; s < pg->nsw; s++)
		nb |= pg->sw[s].j && json_is_object(json_object_get(pg->sw[s].j, "neighbour"));
	fprintf(f, "<table class=\"sw\"><tr><th>#</th><th>step</th><th>from</th><th>to</th>"
		   "<th>last event before</th><th>first event after</th>%s</tr>\n",
		nb ? "<th>moved later</th>" : "");
	for (size_t s = 0; s < pg->nsw; s++) {
		const struct hswitch *w = &pg->sw[s];
		fprintf(f, "<tr id=\"switch-row-%zu\"><td>%zu</td><td>%u</td><td>T%d</td><td>T%d</td><td>", s + 1,
			s + 1, w->step, w->from, w->to);
		event_words(f, w->before >= 0 ? pg->ev[w->before].j : NULL);
		fputs("</td><td>", f);
		if (w->yield)
			fprintf(f, "T%d runs on with no event (yield)", w->to);
		else
			event_words(f, w->after >= 0 ? pg->ev[w->after].j : NULL);
		if (nb) {
			const json_t *n = w->j ? json_object_get(w->j, "neighbour") : NULL;
			fputs("</td><td class=\"neighbour\">", f);
			if (json_is_true(json_object_get(n, "passes"))) {
				fputs("moving ", f);
				html_text(f, jstr(n, "moved") ?: "?");
				fputs(" after ", f);
				html_text(f, jstr(n, "past") ?: "?");
				fputs(" makes it pass", f);
			} else if (n) {
				fputs("moving ", f);
				html_text(f, jstr(n, "moved") ?: "it");
				fputs(" after ", f);
				html_text(f, jstr(n, "past") ?: "?");
				fputs(": ", f);
				html_text(f, jstr(n, "outcome") ?: "?");
			}
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

static void write_failure(FILE *f, const struct page *pg)
{
	const json_t *fail = json_object_get(pg->replay, "failure");
	fputs("<section id=\"failure\"><h2>Failure</h2>\n<p>", f);
	html_text(f, jstr(pg->replay, "reason") ?: jstr(pg->replay, "outcome") ?: "?");
	if (pg->fail_ev >= 0) {
		fputs(": <span class=\"failing\">", f);
		event_words(f, pg->ev[pg->fail_ev].j);
		fputs("</span>", f);
	} else if (fail) {
		fputs(" at ", f);
		site_link(f, fail);
	}
	fputs("</p>\n", f);
	size_t i;
	const json_t *w;
	if (json_array_size(json_object_get(pg->replay, "deadlock"))) {
		fputs("<ul id=\"deadlock\">\n", f);
		json_array_foreach(json_object_get(pg->replay, "deadlock"), i, w) {
			fprintf(f, "<li>T%lld waits for ", jint(w, "thread", -1));
			html_text(f, jstr(w, "waits_for") ?: "?");
			fputs(" <span class=\"o\">", f);
			html_text(f, jstr(w, "object") ?: "");
			fputs("</span>", f);
			if (json_is_integer(json_object_get(w, "holder")))
				fprintf(f, " (held by T%lld)", jint(w, "holder", -1));
			fputs(" at ", f);
			site_link(f, w);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	const json_t *frames = json_object_get(pg->replay, "frames");
	if (json_array_size(frames)) {
		fprintf(f, "<h3>Backtrace of T%lld</h3>\n<ol class=\"frames\" id=\"backtrace\">\n",
			jint(fail, "thread", -1));
		const char *own = jstr(fail, "module");
		json_array_foreach(frames, i, w) {
			const char *m = jstr(w, "module");
			bool mine = own && m && !strcmp(own, m) &&
				    jint(w, "offset", -1) == jint(fail, "offset", -2);
			fprintf(f, "<li class=\"frame%s\">", mine ? " own" : "");
			html_text(f, jstr(w, "function") ?: "??");
			fputs(" &#8212; ", f);
			if (jstr(w, "file"))
				site_link(f, w), fputs(" ", f);
			fputs("<span class=\"loc\">(", f);
			html_text(f, m ?: "?");
			fprintf(f, "+0x%llx)</span></li>\n", jint(w, "offset", 0));
		}
		fputs("</ol>\n", f);
	}
	fputs("</section>\n", f);
}

/* The run drawn in full: its trace (X.min.avt beside the minimal
 * schedule, else the replay's), when it is there; a long run's page folds
 * events, and the dump shows every one. */
static void write_dump_command(FILE *f, const struct page *pg)
{
	char path[4600], word[9500];
	struct stat st;
	if (pg->minimal)
		snprintf(path, sizeof path, "%s/reports/%s.min.avt", pg->r->dir, pg->name);
	else
		snprintf(path, sizeof path, "%s/replays/%04u.avt", pg->b->run_dir, pg->b->schedule);
	if (stat(path, &st) != 0)
		return;
	shell_word(word, sizeof word, path);
	fputs("<p>Every event of the run drawn:</p>\n<pre id=\"cmd-dump\">avtrace dump -d ", f);
	html_text(f, word);
	fputs("</pre>\n", f);
}

static void write_commands(FILE *f, const struct page *pg)
{
	char dir[9000], run[9000], file[9000];
	shell_word(dir, sizeof dir, pg->r->dir);
	shell_word(run, sizeof run, pg->b->run_dir);
	fputs("<section id=\"commands\"><h2>Reproduce and verify</h2>\n", f);
	if (pg->minimal) {
		shell_word(file, sizeof file, pg->min_sched);
		fputs("<p>Replay the minimal schedule:</p>\n<pre id=\"cmd-replay-min\">avtrace replay -d ", f);
		html_text(f, run);
		fputs(" --file ", f);
		html_text(f, file);
		fputs("</pre>\n", f);
	}
	write_dump_command(f, pg);
	fprintf(f, "<p>Replay the schedule that reproduced it:</p>\n<pre id=\"cmd-replay\">"
		   "avtrace replay -d ");
	html_text(f, run);
	fprintf(f, " --schedule %u</pre>\n", pg->b->schedule);
	fputs("<p>After a fix, rebuild and check that this interleaving no longer fails:</p>\n"
	      "<pre id=\"cmd-verify\">avtrace verify -d ", f);
	html_text(f, dir);
	fputs("</pre>\n</section>\n", f);
}

static void write_schedule_text(FILE *f, const struct page *pg)
{
	const char *path = pg->minimal ? pg->min_sched : pg->sched;
	FILE *s = fopen(path, "r");
	if (!s)
		return;
	fputs("<section id=\"schedule\"><h2>Schedule</h2>\n<pre>", f);
	char line[1024];
	for (int n = 0; n < 200 && fgets(line, sizeof line, s); n++)
		html_text(f, line);
	if (!feof(s))
		fputs("&#8230;\n", f);
	fputs("</pre></section>\n", f);
	fclose(s);
}

static void write_page(FILE *f, const struct page *pg)
{
	const char *head = jstr(pg->replay, "headline") ?: jstr(pg->b->replay, "headline") ?: "bug reproduced";
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"avtrace " AVT_VERSION "\">\n<title>avtrace: ", f);
	html_text(f, head);
	fprintf(f, "</title>\n<style>%s</style>\n</head><body>\n<header><h1 id=\"headline\">", css);
	html_text(f, head);
	fputs("</h1>\n<p class=\"sub\">", f);
	html_text(f, pg->b->rule);
	fprintf(f, " &#183; %s %u &#183; <code>", pg->b->explored ? "exploration run, schedule" : "schedule",
		pg->b->schedule);
	html_text(f, pg->b->run_dir);
	fputs("</code>", f);
	if (pg->b->report[0]) {
		fputs(" &#183; report <code>", f);
		html_text(f, pg->b->report);
		fputs("</code>", f);
	}
	fputs("</p></header>\n", f);
	size_t i;
	const json_t *c;
	const json_t *pred = json_object_get(pg->b->replay, "predicted");
	if (json_array_size(pred)) {
		fputs("<section id=\"prediction\"><h2>Predicted</h2>\n<ul>\n", f);
		json_array_foreach(pred, i, c) {
			fputs("<li>", f);
			html_text(f, json_string_value(c));
			fputs("</li>\n", f);
		}
		fputs("</ul></section>\n", f);
	}
	write_switches(f, pg);
	write_timeline(f, pg);
	write_failure(f, pg);
	write_commands(f, pg);
	write_schedule_text(f, pg);
	fputs("<footer>avtrace " AVT_VERSION " &#183; ", f);
	html_text(f, pg->minimal ? pg->min_json : "replay");
	fputs("</footer>\n</body></html>\n", f);
}

int html_write(struct results *r, const struct result_bug *b, const char *path)
{
	struct page pg;
	if (page_load(&pg, r, b) < 0) {
		page_release(&pg);
		avt_error("cannot write '%s': out of memory", path);
		return -1;
	}
	bool out = !strcmp(path, "-");
	char tmp[4400];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = out ? stdout : fopen(tmp, "w");
	if (!f) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno));
		page_release(&pg);
		return -1;
	}
	write_page(f, &pg);
	page_release(&pg);
	if (out)
		return fflush(f) == 0 ? 0 : -1;
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
		remove(tmp);
		return -1;
	}
	return 0;
}

int html_write_beside_reports(const char *dir)
{
	struct results r;
	if (results_load(&r, dir) < 0)
		return -1;
	int n = 0;
	for (size_t i = 0; i < r.nbugs; i++) {
		const struct result_bug *b = &r.bugs[i];
		size_t len = strlen(b->report);
		if (len < 5 || strcmp(b->report + len - 4, ".txt"))
			continue;
		char path[4400];
		snprintf(path, sizeof path, "%.*s.html", (int)(len - 4), b->report);
		if (html_write(&r, b, path) == 0)
			n++;
	}
	results_release(&r);
	return n;
}
