/* An output directory's results read back (cli/results.h), and the
 * document of 'avtrace test --json'. */
#include "results.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "facts.h"
#include "names.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "trace/version.h"

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* Numbers N of the files PREFIX-NNNN.EXT (prefix may be "") in path, sorted. */
size_t results_scan_numbered(const char *path, const char *prefix, const char *ext, unsigned **out)
{
	DIR *d = opendir(path);
	size_t n = 0, cap = 0, plen = strlen(prefix), elen = strlen(ext);
	*out = NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		const char *s = e->d_name;
		if (strncmp(s, prefix, plen) || strlen(s) != plen + 4 + 1 + elen ||
		    strspn(s + plen, "0123456789") != 4 || s[plen + 4] != '.' || strcmp(s + plen + 5, ext))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			unsigned *nn = realloc(*out, cap * sizeof *nn);
			if (!nn)
				break;
			*out = nn;
		}
		(*out)[n++] = (unsigned)strtoul(s + plen, NULL, 10);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(*out, n, sizeof **out, cmp_uint);
	return n;
}

/* A replay's JSON; NULL if unreadable.  It may come from another machine
 * (summary after a cluster run): a FIFO or a device must not block. */
static json_t *load_json(const char *fmt, const char *dir, unsigned num)
{
	char path[4400], err[4600];
	snprintf(path, sizeof path, fmt, dir, num);
	return avt_json_read(path, err, sizeof err);
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

bool results_reproduced(const json_t *replay)
{
	const char *oc = jstr(replay, "outcome");
	return oc && (!strcmp(oc, "BUG") || !strcmp(oc, "DEADLOCK"));
}

/* A replay ran to its end, diverged (an answer: the program cannot follow
 * that order), or never finished (stuck until the time limit, an error). */
static void tally_replay(struct run_tally *t, const json_t *replay)
{
	const char *oc = replay ? jstr(replay, "outcome") ?: "ERROR" : "ERROR";
	const char *why = replay ? jstr(replay, "reason") ?: "" : "no result";
	bool infeasible = !strcmp(oc, "INFEASIBLE");
	if (infeasible && !strstr(why, " within ") && !strstr(why, "timed out"))
		t->diverged++;
	else if (infeasible || !strcmp(oc, "ERROR"))
		t->unfinished++;
	else
		t->ran++;
}

/* "fatal-signal", "deadlock", "exit-status" or "failure" (an oracle). */
static const char *failure_kind(const json_t *replay)
{
	const char *oc = jstr(replay, "outcome");
	if (oc && !strcmp(oc, "DEADLOCK"))
		return "deadlock";
	if (json_integer_value(json_object_get(replay, "signal")) > 0)
		return "fatal-signal";
	if (json_integer_value(json_object_get(replay, "exit_status")) > 0)
		return "exit-status";
	return "failure";
}

/* A rule id part: letters, digits, '-', '_' and '.'; others become '_'. */
static void rule_part(char *dst, size_t len, const char *s)
{
	size_t i = 0;
	for (; s && *s && i + 1 < len; s++)
		dst[i++] = (strchr("-_.", *s) || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
			    (*s >= 'A' && *s <= 'Z'))
				   ? *s
				   : '_';
	dst[i] = 0;
	if (!i)
		snprintf(dst, len, "unknown");
}

/* The one "same bug" rule (cli/results.h): the same headline and the same
 * wait-for cycle. */
static void bug_key(const json_t *replay, char *key, size_t len)
{
	const char *head = jstr(replay, "headline");
	size_t off;
	if (head)
		off = (size_t)snprintf(key, len, "%s", head);
	else
		off = (size_t)snprintf(key, len, "%s: %s", jstr(replay, "outcome") ?: "?",
				       jstr(replay, "reason") ?: "");
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(replay, "deadlock"), i, w) {
		if (off >= len)
			break;
		off += (size_t)snprintf(key + off, len - off, "|T%lld %s %s %s:%lld",
					json_integer_value(json_object_get(w, "thread")),
					jstr(w, "waits_for") ?: "", jstr(w, "object") ?: "",
					jstr(w, "file") ?: "", json_integer_value(json_object_get(w, "line")));
	}
}

/* The rule id of a bug: avtrace/DETECTOR/PATTERN, avtrace/explore/KIND,
 * avtrace/recorded/KIND. */
static void bug_rule(struct result_bug *b, const json_t *replay, const json_t *pred)
{
	char det[64], pat[64];
	if (b->explored) {
		snprintf(b->rule, sizeof b->rule, "avtrace/explore/%s", failure_kind(replay));
	} else if (pred) {
		rule_part(det, sizeof det, jstr(pred, "detector"));
		rule_part(pat, sizeof pat, jstr(pred, "pattern"));
		snprintf(b->rule, sizeof b->rule, "avtrace/%s/%s", det, pat);
	} else {
		snprintf(b->rule, sizeof b->rule, "avtrace/recorded/%s", failure_kind(replay));
	}
}

/* Adds the bug of replay unless the same one is known; its index (*is_new:
 * it was not), -1 when out of memory. */
static int add_bug(struct results *r, const json_t *replay, const json_t *pred, unsigned sched,
		   const char *run_dir, bool explored, bool *is_new)
{
	char key[2048];
	bug_key(replay, key, sizeof key);
	*is_new = false;
	for (size_t i = 0; i < r->nbugs; i++)
		if (!strcmp(r->bugs[i].key, key))
			return (int)i;
	struct result_bug *nb = realloc(r->bugs, (r->nbugs + 1) * sizeof *nb);
	if (!nb)
		return -1;
	r->bugs = nb;
	struct result_bug *b = &r->bugs[r->nbugs];
	memset(b, 0, sizeof *b);
	snprintf(b->key, sizeof b->key, "%s", key);
	b->explored = explored;
	bug_rule(b, replay, pred);
	snprintf(b->run_dir, sizeof b->run_dir, "%s", run_dir);
	snprintf(b->reproduce, sizeof b->reproduce, "avtrace replay -d %s --schedule %u", run_dir, sched);
	b->schedule = sched;
	b->replay = replay;
	b->prediction = pred;
	*is_new = true;
	return (int)r->nbugs++;
}

static const json_t *prediction_of(const struct results *r, unsigned id)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(r->predictions, "predictions"), i, p)
		if (json_integer_value(json_object_get(p, "id")) == (json_int_t)id)
			return p;
	return NULL;
}

void results_init(struct results *r, const char *dir)
{
	char path[4300];
	memset(r, 0, sizeof *r);
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	snprintf(path, sizeof path, "%s/meta.json", dir);
	r->meta = json_load_file(path, 0, NULL);
	snprintf(path, sizeof path, "%s/predictions.json", dir);
	r->predictions = json_load_file(path, 0, NULL);
	r->owned = json_array();
}

struct result_row *results_add_replay(struct results *r, unsigned schedule)
{
	struct result_row *nr = realloc(r->rows, (r->nrows + 1) * sizeof *nr);
	if (!nr)
		return NULL;
	r->rows = nr;
	struct result_row *row = &r->rows[r->nrows++];
	memset(row, 0, sizeof *row);
	row->schedule = schedule;
	row->replay = load_json("%s/replays/%04u.json", r->dir, schedule);
	row->prediction = schedule ? json_incref((json_t *)prediction_of(r, schedule)) : NULL;
	row->bug = -1;
	tally_replay(&r->tally, row->replay);
	if (row->replay && results_reproduced(row->replay))
		row->bug = add_bug(r, row->replay, row->prediction, schedule, r->dir, false, &row->first);
	return row;
}

int results_add_explored(struct results *r, const char *run_dir, unsigned run, bool *is_new)
{
	json_t *rp = load_json("%s/replays/%04u.json", run_dir, 0);
	*is_new = false;
	if (!rp || !results_reproduced(rp)) {
		json_decref(rp);
		return -1;
	}
	json_array_append_new(r->owned, rp);
	int i = add_bug(r, rp, NULL, 0, run_dir, true, is_new);
	if (i >= 0 && *is_new)
		r->bugs[i].run = run;
	return i;
}

/* X.txt and what is written beside it (X.min.*, X.html, X.events.json). */
static void remove_report(const char *txt)
{
	static const char *const ext[] = { ".txt", ".min.sched", ".min.json", ".min.avt", ".html", ".events.json" };
	size_t n = strlen(txt);
	if (n < 4 || strcmp(txt + n - 4, ".txt"))
		return;
	for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
		char path[4500];
		snprintf(path, sizeof path, "%.*s%s", (int)(n - 4), txt, ext[k]);
		remove(path);
	}
}

void results_drop(struct results *r, size_t i)
{
	if (i >= r->nbugs)
		return;
	remove_report(r->bugs[i].report);
	memmove(&r->bugs[i], &r->bugs[i + 1], (r->nbugs - i - 1) * sizeof *r->bugs);
	r->nbugs--;
	for (size_t k = 0; k < r->nrows; k++) { /* rows name bugs by index */
		if (r->rows[k].bug == (int)i)
			r->rows[k].bug = -1, r->rows[k].first = false;
		else if (r->rows[k].bug > (int)i)
			r->rows[k].bug--;
	}
}

/* The exploration runs whose report was written (a confirmed, distinct
 * bug of the run that wrote them). */
static void load_explored(struct results *r)
{
	char path[4300], run_dir[4300];
	unsigned *nums;
	bool is_new;
	snprintf(path, sizeof path, "%s/reports", r->dir);
	size_t n = results_scan_numbered(path, "explore-", "txt", &nums);
	for (size_t i = 0; i < n; i++) {
		snprintf(run_dir, sizeof run_dir, "%s/explore/runs/%04u", r->dir, nums[i]);
		int b = results_add_explored(r, run_dir, nums[i], &is_new);
		if (b >= 0 && is_new)
			snprintf(r->bugs[b].report, sizeof r->bugs[b].report, "%s/reports/explore-%04u.txt",
				 r->dir, nums[i]);
	}
	free(nums);
}

void results_open_trace(struct results *r)
{
	char path[4300];
	struct stat st;
	snprintf(path, sizeof path, "%s/trace.avt", r->dir);
	if (r->trace || !r->nbugs || stat(path, &st) != 0 || !(r->trace = load_trace(r->dir)))
		return;
	r->names = calloc(1, sizeof *r->names);
	if (r->names && names_open(r->names, r->trace) < 0) {
		free(r->names);
		r->names = NULL;
	}
}

int results_load(struct results *r, const char *dir)
{
	char path[4300];
	unsigned *nums;
	struct stat st;
	results_init(r, dir);
	snprintf(path, sizeof path, "%s/replays", dir);
	size_t n = results_scan_numbered(path, "", "json", &nums);
	for (size_t i = 0; i < n; i++) {
		struct result_row *row = results_add_replay(r, nums[i]);
		if (!row) {
			free(nums);
			return -1;
		}
		snprintf(path, sizeof path, "%s/reports/%04u.txt", dir, row->schedule);
		if (row->first && stat(path, &st) == 0)
			snprintf(r->bugs[row->bug].report, sizeof r->bugs[0].report, "%s", path);
	}
	free(nums);
	load_explored(r);
	results_open_trace(r);
	return 0;
}

void results_release(struct results *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		json_decref(r->rows[i].replay);
		json_decref(r->rows[i].prediction);
	}
	free(r->rows);
	free(r->bugs);
	json_decref(r->owned);
	json_decref(r->meta);
	json_decref(r->predictions);
	if (r->names)
		names_close(r->names);
	free(r->names);
	if (r->trace)
		trace_free(r->trace);
	memset(r, 0, sizeof *r);
}

json_t *results_event(struct results *r, unsigned long long seq)
{
	if (!r->names || !r->trace || seq >= r->trace->nev)
		return NULL;
	const struct avt_event *e = &r->trace->ev[seq];
	names_at(r->names, e->seq);
	json_t *o = e->site_mod == AVT_MOD_NONE && e->site_off == 0
			    ? json_object()
			    : facts_site_json(r->names, e->site_mod, e->site_off,
					      !(e->flags & AVT_F_SITE_EXACT));
	json_object_set_new(o, "thread", json_integer(e->thread));
	json_object_set_new(o, "kind", json_string(avt_kind_name(e->kind) ?: "?"));
	if (!avt_kind_obj_is_thread(e->kind) && e->kind != AVT_EV_EXIT && e->kind != AVT_EV_BEGIN &&
	    e->kind != AVT_EV_END && e->kind != AVT_EV_FATAL_SIGNAL) {
		char obj[256];
		json_object_set_new(o, "object",
				    json_string(names_obj_or_addr(r->names, e->obj, obj, sizeof obj)));
	}
	return o;
}

json_t *results_minimal(const struct result_bug *b)
{
	char path[4500];
	size_t n = strlen(b->report);
	if (n < 4 || strcmp(b->report + n - 4, ".txt"))
		return NULL;
	snprintf(path, sizeof path, "%.*s.min.json", (int)(n - 4), b->report);
	json_t *j = json_load_file(path, 0, NULL);
	const char *sched = j ? jstr(j, "minimal_schedule") : NULL;
	json_t *sw = j ? json_object_get(j, "switches") : NULL;
	if (!sched || !json_is_array(sw)) {
		json_decref(j);
		return NULL;
	}
	char cmd[9000];
	snprintf(cmd, sizeof cmd, "avtrace replay -d %s --file %s", b->run_dir, sched);
	json_t *o = json_pack("{s:s, s:O, s:s}", "schedule", sched, "switches", sw, "reproduce", cmd);
	json_decref(j);
	return o;
}
