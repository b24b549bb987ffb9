/*
 * SARIF 2.1.0 (OASIS) from an output directory's results (cli/results.h):
 * one result per distinct reproduced bug, rule ids per detector and
 * pattern, the failure as the location, the predicted events as related
 * locations, the interleaving as a code flow with one thread flow per
 * thread (in the order the replay first ran them), and the command that
 * reproduces the bug in the message.  Paths under the recording's working
 * directory are relative to the base id SRCROOT.  docs/json-output.md
 * describes the mapping.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"
#include "trace/log.h"
#include "trace/version.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
/* where a reader learns about avtrace and its rules: the man page */
#define SARIF_INFO_URI "man:avtrace(1)"

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Percent-encodes what a URI path may not hold as is (RFC 3986). */
static void uri_path(char *dst, size_t len, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0;
	for (const unsigned char *s = (const unsigned char *)path; *s && i + 4 < len; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    strchr("-._~/!$&'()*+,;=:@", *s)) {
			dst[i++] = (char)*s;
		} else {
			dst[i++] = '%';
			dst[i++] = hex[*s >> 4];
			dst[i++] = hex[*s & 15];
		}
	}
	dst[i] = 0;
}

/* An absolute path without '.' and '..' segments nor repeated slashes,
 * resolved lexically (a file built out of tree, `cd build && cc
 * ../src/x.c`, is named /root/build/../src/x.c by its debug information;
 * SARIF forbids '..' in a file URI, SARIF1002).  Lexically, not with
 * realpath(): the sources need not exist where the SARIF is written. */
static void clean_path(char *dst, size_t len, const char *path)
{
	size_t n = 0;
	dst[0] = 0;
	for (const char *p = path; *p && len > 1;) {
		while (*p == '/')
			p++;
		size_t seg = strcspn(p, "/");
		if (!seg)
			break;
		if (seg == 1 && p[0] == '.') {
			/* nothing */
		} else if (seg == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && dst[n - 1] != '/')
				n--;
			if (n > 0)
				n--; /* the slash before the dropped segment */
		} else if (n + 1 + seg < len) {
			dst[n++] = '/';
			memcpy(dst + n, p, seg);
			n += seg;
		}
		dst[n] = 0;
		p += seg;
	}
	if (!n && len > 1)
		snprintf(dst, len, "/");
}

struct sarif {
	struct results *r;
	char root[4200]; /* source root, no trailing '/'; "" if unknown */
	json_t *rules;   /* the driver's rules, in first-use order */
};

/* A location for a site (cli/facts.h JSON) with a message; NULL when
 * the site names no file and there is no message. */
static json_t *location(const struct sarif *s, const json_t *site, const char *msg)
{
	const char *file = jstr(site, "file"), *func = jstr(site, "function");
	json_int_t line = json_integer_value(json_object_get(site, "line"));
	json_t *loc = json_object();
	size_t rl = strlen(s->root);
	char uri[8400], clean[4200];
	if (file && file[0] == '/' && line > 0) {
		json_t *art;
		clean_path(clean, sizeof clean, file);
		file = clean;
		if (rl && !strncmp(file, s->root, rl) && file[rl] == '/') {
			uri_path(uri, sizeof uri, file + rl + 1);
			art = json_pack("{s:s,s:s}", "uri", uri, "uriBaseId", "SRCROOT");
		} else {
			char enc[8000];
			uri_path(enc, sizeof enc, file);
			snprintf(uri, sizeof uri, "file://%s", enc);
			art = json_pack("{s:s}", "uri", uri);
		}
		json_object_set_new(loc, "physicalLocation",
				    json_pack("{s:o,s:{s:I}}", "artifactLocation", art, "region",
					      "startLine", line));
	}
	if (func)
		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:s,s:s}]", "name", func, "kind", "function"));
	if (msg)
		json_object_set_new(loc, "message", json_pack("{s:s}", "text", msg));
	if (!json_object_size(loc)) {
		json_decref(loc);
		return NULL;
	}
	return loc;
}

/* "T1 read balance" (+ "at bank.c:34" when no file is shown). */
static void event_text(const json_t *e, char *buf, size_t len)
{
	const char *obj = jstr(e, "object");
	snprintf(buf, len, "T%lld %s%s%s", json_integer_value(json_object_get(e, "thread")),
		 jstr(e, "kind") ?: "?", obj ? " " : "", obj ? obj : "");
}

static const char *rule_text(const char *det, const char *pat, char *buf, size_t len)
{
	if (!strcmp(det, "penelope"))
		snprintf(buf, len, "Atomicity violation on one variable (PENELOPE access pattern %s), reproduced by replay.", pat);
	else if (!strcmp(det, "sidetrack"))
		snprintf(buf, len, "Atomicity violation across critical sections (SideTrack, %s), reproduced by replay.", pat);
	else if (!strcmp(det, "pecan"))
		snprintf(buf, len, "Access anomaly (PECAN pattern %s), reproduced by replay.", pat);
	else if (!strcmp(det, "deadlock"))
		snprintf(buf, len, "Lock-order deadlock (a %s of lock acquisitions), reproduced by replay.", pat);
	else if (!strcmp(det, "explore"))
		snprintf(buf, len, "Failure (%s) found by random priority exploration and confirmed by replay.", pat);
	else if (!strcmp(det, "recorded"))
		snprintf(buf, len, "Failure (%s) of the recorded run itself, reproduced by replaying its order.", pat);
	else
		snprintf(buf, len, "Concurrency bug found by the %s detector (%s), reproduced by replay.", det, pat);
	return buf;
}

/* "avtrace/penelope/RWR" -> "PenelopeRWR"-style friendly name. */
static void rule_name(const char *id, char *buf, size_t len)
{
	size_t i = 0;
	bool up = true;
	for (const char *s = strchr(id, '/') ? strchr(id, '/') + 1 : id; *s && i + 1 < len; s++) {
		if (*s == '/' || *s == '-' || *s == '_' || *s == '.') {
			up = true;
			continue;
		}
		buf[i++] = up && *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
		up = false;
	}
	buf[i] = 0;
}

/* Index of rule id in the driver's rules, added on first use. */
static size_t rule_index(struct sarif *s, const char *id)
{
	size_t i;
	json_t *r;
	json_array_foreach(s->rules, i, r)
		if (!strcmp(jstr(r, "id"), id))
			return i;
	char det[128] = "", text[512], name[128];
	const char *pat = "";
	const char *a = strchr(id, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	if (a && b) {
		snprintf(det, sizeof det, "%.*s", (int)(b - a - 1), a + 1);
		pat = b + 1;
	}
	rule_text(det, pat, text, sizeof text);
	rule_name(id, name, sizeof name);
	json_array_append_new(
		s->rules,
		json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:{s:s},s:s}", "id", id, "name", name,
			  "shortDescription", "text", text, "fullDescription", "text", text,
			  "defaultConfiguration", "level", "error", "helpUri", SARIF_INFO_URI));
	return json_array_size(s->rules) - 1;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static json_t *code_flow(const struct sarif *s, const json_t *replay)
{
	const json_t *il = json_object_get(replay, "interleaving");
	if (!json_array_size(il))
		return NULL;
	json_t *flows = json_array(); /* threadFlows in first-run order */
	long long order[4096];
	size_t nthr = 0, i;
	json_t *e;
	json_array_foreach(il, i, e) {
		long long t = json_integer_value(json_object_get(e, "thread"));
		size_t k = 0;
		while (k < nthr && order[k] != t)
			k++;
		if (k == nthr) {
			if (nthr == sizeof order / sizeof order[0])
				continue;
			order[nthr++] = t;
			char id[32];
			snprintf(id, sizeof id, "T%lld", t);
			json_array_append_new(flows, json_pack("{s:s,s:{s:s},s:[]}", "id", id, "message",
							       "text", id, "locations"));
		}
		char text[512];
		event_text(e, text, sizeof text);
		json_t *loc = location(s, e, text);
		json_array_append_new(
			json_object_get(json_array_get(flows, k), "locations"),
			json_pack("{s:o,s:I}", "location", loc,
				  "executionOrder", json_integer_value(json_object_get(e, "index")) + 1));
	}
	char msg[256];
	json_int_t omitted = json_integer_value(json_object_get(replay, "interleaving_omitted"));
	if (omitted)
		snprintf(msg, sizeof msg, "The interleaving the replay ran (its last %zu events; %lld before them are in the replay's trace).",
			 json_array_size(il), (long long)omitted);
	else
		snprintf(msg, sizeof msg, "The interleaving the replay ran (%zu events).", json_array_size(il));
	return json_pack("{s:{s:s},s:o}", "message", "text", msg, "threadFlows", flows);
}

static json_t *result(struct sarif *s, const struct result_bug *b)
{
	const json_t *rp = b->replay;
	char msg[8192];
	const char *head = jstr(rp, "headline");
	const json_t *pred = json_object_get(rp, "predicted");
	size_t off = (size_t)snprintf(msg, sizeof msg, "%s.", head ? head : jstr(rp, "reason") ?: "bug");
	if (json_array_size(pred) && off < sizeof msg)
		off += (size_t)snprintf(msg + off, sizeof msg - off, " %s: %s.",
					b->explored ? "Found by exploration" : "Predicted",
					json_string_value(json_array_get(pred, 0)));
	if (off < sizeof msg)
		snprintf(msg + off, sizeof msg - off, " Reproduce: %s.", b->reproduce);
	json_t *res = json_pack("{s:s,s:I,s:s,s:{s:s}}", "ruleId", b->rule, "ruleIndex",
				(json_int_t)rule_index(s, b->rule), "level", "error", "message", "text", msg);
	json_t *fl = location(s, json_object_get(rp, "failure"), NULL);
	json_object_set_new(res, "locations", fl ? json_pack("[o]", fl) : json_array());

	json_t *rel = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(b->prediction, "events"), i, e) {
		json_t *ev = results_event(s->r, (unsigned long long)json_integer_value(json_object_get(e, "seq")));
		char text[512], full[600];
		if (!ev)
			continue;
		event_text(ev, text, sizeof text);
		snprintf(full, sizeof full, "Predicted event %zu: %s.", i + 1, text);
		json_t *loc = location(s, ev, full);
		json_decref(ev);
		if (!loc)
			continue;
		json_object_set_new(loc, "id", json_integer((json_int_t)json_array_size(rel) + 1));
		json_array_append_new(rel, loc);
	}
	json_array_foreach(json_object_get(rp, "deadlock"), i, e) {
		char text[600];
		json_t *h = json_object_get(e, "holder");
		if (json_is_integer(h))
			snprintf(text, sizeof text, "T%lld waits for %s %s (held by T%lld).",
				 json_integer_value(json_object_get(e, "thread")), jstr(e, "waits_for") ?: "?",
				 jstr(e, "object") ?: "?", json_integer_value(h));
		else
			snprintf(text, sizeof text, "T%lld waits for %s %s.",
				 json_integer_value(json_object_get(e, "thread")), jstr(e, "waits_for") ?: "?",
				 jstr(e, "object") ?: "?");
		json_t *loc = location(s, e, text);
		json_object_set_new(loc, "id", json_integer((json_int_t)json_array_size(rel) + 1));
		json_array_append_new(rel, loc);
	}
	if (json_array_size(rel))
		json_object_set_new(res, "relatedLocations", rel);
	else
		json_decref(rel);
	json_t *cf = code_flow(s, rp);
	if (cf)
		json_object_set_new(res, "codeFlows", json_pack("[o]", cf));
	char fp[32];
	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)fnv1a(b->key));
	json_object_set_new(res, "partialFingerprints", json_pack("{s:s}", "avtraceBug/v1", fp));
	json_object_set_new(res, "properties",
			    json_pack("{s:s,s:I,s:s,s:s}", "outcome", jstr(rp, "outcome") ?: "BUG",
				      "schedule", (json_int_t)b->schedule, "replayDir", b->run_dir,
				      "reproduce", b->reproduce));
	json_t *min = results_minimal(b); /* the fewest switches that fail */
	if (min) {
		json_t *pr = json_object_get(res, "properties");
		json_object_set(pr, "switches", json_object_get(min, "switches"));
		json_object_set(pr, "minimalSchedule", json_object_get(min, "schedule"));
		json_object_set(pr, "minimalReproduce", json_object_get(min, "reproduce"));
		json_decref(min);
	}
	return res;
}

json_t *sarif_run(struct results *r, const char *process)
{
	struct sarif s = { .r = r, .rules = json_array() };
	const char *cwd = jstr(r->meta, "cwd");
	if (cwd && cwd[0] == '/') {
		snprintf(s.root, sizeof s.root, "%s", cwd);
		size_t n = strlen(s.root);
		while (n > 1 && s.root[n - 1] == '/')
			s.root[--n] = 0;
	}
	json_t *results = json_array();
	for (size_t i = 0; i < r->nbugs; i++)
		json_array_append_new(results, result(&s, &r->bugs[i]));
	json_t *driver = json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", "avtrace", "version", AVT_VERSION,
				   "semanticVersion", AVT_VERSION, "informationUri", SARIF_INFO_URI,
				   "rules", s.rules);
	json_t *run = json_pack("{s:{s:o},s:o}", "tool", "driver", driver, "results", results);
	if (*s.root) {
		char uri[8400], enc[8000];
		uri_path(enc, sizeof enc, s.root);
		snprintf(uri, sizeof uri, "file://%s%s", enc, strcmp(s.root, "/") ? "/" : "");
		json_object_set_new(run, "originalUriBaseIds",
				    json_pack("{s:{s:s,s:{s:s}}}", "SRCROOT", "uri", uri, "description",
					      "text", "The recorded program's working directory."));
	}
	json_object_set_new(run, "columnKind", json_string("unicodeCodePoints"));
	if (process) /* one run per process of a tree */
		json_object_set_new(run, "automationDetails", json_pack("{s:s}", "id", process));
	return run;
}

int sarif_write(struct results *r, const char *path)
{
	json_t *runs = json_array();
	json_array_append_new(runs, sarif_run(r, NULL));
	return sarif_write_runs(runs, path);
}

int sarif_write_runs(json_t *runs, const char *path)
{
	json_t *log = json_pack("{s:s,s:s,s:o}", "$schema", SARIF_SCHEMA, "version", "2.1.0", "runs", runs);
	int rc = 0;
	if (!strcmp(path, "-")) {
		rc = json_dumpf(log, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		char tmp[4200];
		snprintf(tmp, sizeof tmp, "%s.tmp", path);
		errno = 0;
		if (json_dump_file(log, tmp, JSON_INDENT(2)) < 0 || rename(tmp, path) < 0) {
			int e = errno ? errno : EIO;
			remove(tmp);
			avt_write_error("cannot write the SARIF log '%s': %s", path, strerror(e));
			rc = -1;
		}
	}
	json_decref(log);
	return rc < 0 ? -1 : 0;
}
