/* The document of 'avtrace test --json', and its --sarif: both printed
 * from the run's results model (cli/results.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "results.h"
#include "trace/version.h"

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* "bank.c:34 / bank.c:42 / bank.c:42", as the table's "where". */
static void where_of(struct results *r, const json_t *pred, char *buf, size_t len)
{
	size_t i, off = 0;
	json_t *e;
	buf[0] = 0;
	json_array_foreach(json_object_get(pred, "events"), i, e) {
		json_t *s = results_event(r, (unsigned long long)json_integer_value(json_object_get(e, "seq")));
		const char *file = jstr(s, "file");
		if (file && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s:%lld", off ? " / " : "",
						base_name(file), json_integer_value(json_object_get(s, "line")));
		json_decref(s);
	}
}

static json_t *bug_json(struct results *r, const struct result_bug *b)
{
	json_t *o = json_object();
	json_object_set_new(o, "rule", json_string(b->rule));
	json_object_set_new(o, "outcome", json_string(jstr(b->replay, "outcome") ?: "BUG"));
	json_object_set_new(o, "headline", json_string(jstr(b->replay, "headline") ?: ""));
	json_object_set_new(o, "found_by", json_string(b->explored ? "explore" : "prediction"));
	json_object_set_new(o, "schedule", json_integer(b->schedule));
	json_object_set_new(o, "dir", json_string(b->run_dir));
	json_object_set_new(o, "reproduce", json_string(b->reproduce));
	json_object_set_new(o, "report", *b->report ? json_string(b->report) : json_null());
	json_t *f = json_object_get(b->replay, "failure");
	json_object_set(o, "failure", f ? f : json_null());
	json_t *pred = json_object_get(b->replay, "predicted");
	json_object_set_new(o, "predicted", pred ? json_incref(pred) : json_array());
	json_t *ev = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(b->prediction, "events"), i, e) {
		json_t *s = results_event(r, (unsigned long long)json_integer_value(json_object_get(e, "seq")));
		if (s)
			json_array_append_new(ev, s);
	}
	json_object_set_new(o, "predicted_events", ev);
	json_t *dl = json_object_get(b->replay, "deadlock");
	if (dl)
		json_object_set(o, "deadlock", dl);
	json_t *err = json_object_get(b->replay, "stderr");
	json_object_set(o, "stderr", err ? err : json_null());
	json_t *min = results_minimal(b);
	if (min) {
		json_object_set(o, "switches", json_object_get(min, "switches"));
		json_object_set(o, "minimal_schedule", json_object_get(min, "schedule"));
		json_object_set(o, "minimal_reproduce", json_object_get(min, "reproduce"));
		json_decref(min);
	}
	return o;
}

static json_t *row_json(struct results *r, const struct result_row *row)
{
	json_t *o = json_object();
	const json_t *p = row->prediction, *rp = row->replay;
	char where[1024];
	json_object_set_new(o, "schedule", json_integer(row->schedule));
	if (p) {
		json_object_set_new(o, "rank", json_integer(json_integer_value(json_object_get(p, "rank"))));
		json_t *d = json_object_get(p, "detectors");
		json_object_set_new(o, "detectors", d ? json_incref(d) : json_array());
		json_object_set_new(o, "pattern", json_string(jstr(p, "pattern") ?: ""));
		where_of(r, p, where, sizeof where);
		json_object_set_new(o, "where", json_string(where));
	}
	json_object_set_new(o, "outcome", json_string(rp ? jstr(rp, "outcome") ?: "ERROR" : "ERROR"));
	json_object_set_new(o, "reason", json_string(rp ? jstr(rp, "reason") ?: "" : "no result"));
	json_t *sig = rp ? json_object_get(json_object_get(rp, "failure"), "signal") : NULL;
	json_object_set_new(o, "signal", sig ? json_incref(sig) : json_null());
	json_object_set_new(o, "bug", row->bug >= 0 ? json_integer(row->bug) : json_null());
	return o;
}

/* The exploration's runs and their outcomes, from the comment explore
 * writes on each run's schedule ("# explore run N (...): OUTCOME[: why]");
 * null when there was no exploration. */
static json_t *explore_json(const struct results *r)
{
	char path[4400], line[1024];
	unsigned *nums;
	snprintf(path, sizeof path, "%s/explore/runs", r->dir);
	size_t n = results_scan_numbered(path, "", "sched", &nums);
	if (!n) {
		free(nums);
		return json_null();
	}
	json_t *counts = json_object();
	for (size_t i = 0; i < n; i++) {
		char oc[32] = "unknown";
		snprintf(path, sizeof path, "%s/explore/runs/%04u.sched", r->dir, nums[i]);
		FILE *f = fopen(path, "r");
		while (f && fgets(line, sizeof line, f)) {
			const char *p = strstr(line, "): ");
			if (line[0] != '#' || !p)
				continue;
			for (const char *q; (q = strstr(p + 1, "): "));)
				p = q;
			snprintf(oc, sizeof oc, "%.*s", (int)strcspn(p + 3, ": \n"), p + 3);
			break;
		}
		if (f)
			fclose(f);
		json_object_set_new(counts, oc, json_integer(json_integer_value(json_object_get(counts, oc)) + 1));
	}
	free(nums);
	return json_pack("{s:I,s:o}", "runs", (json_int_t)n, "outcomes", counts);
}

static json_t *test_json(struct results *r, int status)
{
	json_t *o = json_object();
	json_object_set_new(o, "avtrace_version", json_string(AVT_VERSION));
	json_object_set_new(o, "dir", json_string(r->dir));
	json_t *rec = json_object();
	static const char *const keys[] = { "threads", "events", "exit_status", "signal" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *v = json_object_get(r->meta, keys[i]);
		json_object_set_new(rec, keys[i], v ? json_incref(v) : json_null());
	}
	json_t *argv = json_object_get(r->meta, "argv");
	json_object_set_new(rec, "argv", argv ? json_incref(argv) : json_array());
	json_object_set_new(o, "recorded", rec);
	json_t *rows = json_array();
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].schedule) /* schedule 0 is the recording, not a prediction */
			json_array_append_new(rows, row_json(r, &r->rows[i]));
	json_object_set_new(o, "predictions", rows);
	json_object_set_new(o, "explore", explore_json(r));
	json_t *bugs = json_array();
	for (size_t i = 0; i < r->nbugs; i++)
		json_array_append_new(bugs, bug_json(r, &r->bugs[i]));
	json_object_set_new(o, "bugs", bugs);
	json_t *sch = json_object();
	json_object_set_new(sch, "ran", json_integer(r->tally.ran));
	json_object_set_new(sch, "diverged", json_integer(r->tally.diverged));
	json_object_set_new(sch, "unfinished", json_integer(r->tally.unfinished));
	json_object_set_new(o, "schedules", sch);
	json_object_set_new(o, "inconclusive", json_boolean(status == 3));
	json_object_set_new(o, "exit_status", json_integer(status));
	return o;
}

void test_output_begin(struct test_output *o)
{
	o->saved_stdout = -1;
	if (!o->json)
		return;
	/* the document is the only thing on stdout: the table goes nowhere */
	fflush(stdout);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	o->saved_stdout = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (null >= 0 && o->saved_stdout >= 0)
		dup2(null, 1);
	if (null >= 0)
		close(null);
}

/* A process of a tree: its document and run kept for test_output_tree. */
static int keep_process(struct test_output *o, struct results *r, int status)
{
	if (!o->json && !o->sarif)
		return status;
	results_open_trace(r);
	if (o->sarif) {
		if (!o->runs)
			o->runs = json_array();
		json_array_append_new(o->runs, sarif_run(r, o->process));
	}
	if (o->json) {
		json_t *doc = test_json(r, status);
		json_object_set_new(doc, "process", json_string(o->process ? o->process : r->dir));
		json_t *bugs = json_object_get(doc, "bugs");
		size_t i;
		json_t *b;
		json_array_foreach(bugs, i, b)
			json_object_set_new(b, "process", json_string(o->process ? o->process : r->dir));
		if (!o->docs)
			o->docs = json_array();
		json_array_append_new(o->docs, doc);
	}
	return status;
}

int test_output_tree(struct test_output *o, const char *dir, int status)
{
	if (o->saved_stdout >= 0) {
		fflush(stdout);
		dup2(o->saved_stdout, 1);
		close(o->saved_stdout);
		o->saved_stdout = -1;
	}
	int rc = status;
	if (o->sarif && sarif_write_runs(o->runs ? json_incref(o->runs) : json_array(), o->sarif) < 0)
		rc = EXIT_USAGE;
	if (o->json && json_array_size(o->docs)) {
		json_t *doc = json_deep_copy(json_array_get(o->docs, 0)), *all = json_array();
		size_t i;
		json_t *d;
		json_array_foreach(o->docs, i, d)
			json_array_extend(all, json_object_get(d, "bugs"));
		json_object_set_new(doc, "bugs", all);
		json_object_set_new(doc, "dir", json_string(dir));
		json_object_set(doc, "processes", o->docs);
		json_object_set_new(doc, "inconclusive", json_boolean(rc == 3));
		json_object_set_new(doc, "exit_status", json_integer(rc));
		if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			rc = EXIT_USAGE;
		putchar('\n');
		json_decref(doc);
	}
	json_decref(o->docs);
	json_decref(o->runs);
	o->docs = o->runs = NULL;
	return rc;
}

int test_output_finish(struct test_output *o, struct results *r, int status)
{
	if (o->tree)
		return keep_process(o, r, status);
	if (o->saved_stdout >= 0) {
		fflush(stdout);
		dup2(o->saved_stdout, 1);
		close(o->saved_stdout);
		o->saved_stdout = -1;
	}
	if (!o->json && !o->sarif)
		return status;
	results_open_trace(r);
	int rc = status;
	if (o->sarif && sarif_write(r, o->sarif) < 0)
		rc = EXIT_USAGE;
	if (o->json) {
		json_t *doc = test_json(r, rc);
		if (json_dumpf(doc, stdout, JSON_INDENT(2)) < 0)
			rc = EXIT_USAGE;
		putchar('\n');
		json_decref(doc);
	}
	return rc;
}
