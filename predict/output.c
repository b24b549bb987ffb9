/*
 * Writing predictions: DIR/predictions.json and DIR/schedules/NNNN.sched
 * (predict.h, predict_write).
 *
 * predictions.json is replaced atomically (written to a .tmp, renamed), so
 * a reader sees the old file or the new one.  Schedules numbered above the
 * new count are removed first: `avtrace replay --all` runs every schedule
 * in the directory, and stale ones would replay predictions that no longer
 * exist.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "predict.h"
#include "trace/log.h"

const char *predict_schedule_name(unsigned id, char *buf, size_t len)
{
	snprintf(buf, len, "schedules/%04u.sched", id);
	return buf;
}

static json_t *event_json(const struct trace *t, uint64_t seq)
{
	const struct avt_event *e = seq < t->nev && t->ev[seq].seq == seq ? &t->ev[seq] : NULL;
	json_t *o = json_object();
	if (!o || !e)
		return o;
	const char *kind = avt_kind_name(e->kind);
	json_object_set_new(o, "seq", json_integer((json_int_t)e->seq));
	json_object_set_new(o, "thread", json_integer(e->thread));
	json_object_set_new(o, "tindex", json_integer(e->tindex));
	json_object_set_new(o, "kind", json_string(kind ? kind : "none"));
	json_object_set_new(o, "site_mod", json_integer(e->site_mod));
	json_object_set_new(o, "site_off", json_integer((json_int_t)e->site_off));
	json_object_set_new(o, "obj", json_integer((json_int_t)e->obj));
	return o;
}

static json_t *u64_array(const uint64_t *v, unsigned n)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *prediction_json(const struct prediction *p, const struct trace *t)
{
	char name[64];
	json_t *o = json_object(), *thr = json_array(), *ev = json_array(), *bl = json_array();
	if (!o || !thr || !ev || !bl) {
		json_decref(o);
		json_decref(thr);
		json_decref(ev);
		json_decref(bl);
		return NULL;
	}
	for (unsigned i = 0; i < p->nthreads; i++)
		json_array_append_new(thr, json_integer(p->threads[i]));
	for (unsigned i = 0; i < p->nevents; i++)
		json_array_append_new(ev, event_json(t, p->events[i]));
	for (unsigned i = 0; i < p->nblame; i++) {
		json_t *b = json_object();
		json_object_set_new(b, "site_mod", json_integer(p->blame[i].mod));
		json_object_set_new(b, "site_off", json_integer((json_int_t)p->blame[i].off));
		json_array_append_new(bl, b);
	}
	json_object_set_new(o, "id", json_integer(p->id));
	json_object_set_new(o, "rank", json_integer(p->id));
	json_object_set_new(o, "detector", json_string(p->detector));
	json_t *dets = json_array();
	for (unsigned i = 0; dets && i < (p->ndetectors ? p->ndetectors : 1); i++)
		json_array_append_new(dets, json_string(p->ndetectors ? p->detectors[i] : p->detector));
	json_object_set_new(o, "detectors", dets);
	json_object_set_new(o, "pattern", json_string(p->pattern));
	json_object_set_new(o, "variables", json_integer(p->nvars));
	json_object_set_new(o, "summary", json_string(p->summary ? p->summary : ""));
	json_object_set_new(o, "threads", thr);
	json_object_set_new(o, "events", ev);
	json_object_set_new(o, "objs", u64_array(p->objs, p->nobjs));
	json_object_set_new(o, "blame", bl);
	json_object_set_new(o, "context_switches", json_integer(p->context_switches));
	json_object_set_new(o, "cut_seq", json_integer((json_int_t)p->cut_seq));
	json_object_set_new(o, "filtered", json_boolean(p->filtered));
	if (p->site_pair) /* only then: the files of other predictions stay as they were */
		json_object_set_new(o, "site_pair", json_true());
	if (p->filter_why)
		json_object_set_new(o, "filter_why", json_string(p->filter_why));
	json_object_set_new(o, "schedule",
			    json_string(predict_schedule_name(p->id, name, sizeof name)));
	return o;
}

static int write_json(const struct prediction_set *s, const struct trace *t, const char *dir)
{
	char path[4200], tmp[4300];
	json_t *root = json_object(), *arr = json_array();
	int rc = -1;
	if (!root || !arr)
		goto oom;
	json_object_set_new(root, "version", json_integer(1));
	for (size_t i = 0; i < s->n; i++) {
		json_t *p = prediction_json(&s->p[i], t);
		if (!p || json_array_append_new(arr, p) < 0)
			goto oom;
	}
	json_object_set(root, "predictions", arr);
	snprintf(path, sizeof path, "%s/predictions.json", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	errno = 0;
	if (json_dump_file(root, tmp, JSON_INDENT(2) | JSON_ENSURE_ASCII) < 0) {
		avt_write_error("cannot write '%s': %s", tmp, strerror(errno ? errno : EIO));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		avt_write_error("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
	goto out;
oom:
	avt_error("cannot write predictions: out of memory");
out:
	json_decref(arr);
	json_decref(root);
	return rc;
}

/* NNNN.sched with NNNN a positive number: its number, else 0. */
static unsigned sched_number(const char *name)
{
	size_t n = strlen(name);
	if (n < 10 || strcmp(name + n - 6, ".sched"))
		return 0;
	unsigned v = 0;
	for (size_t i = 0; i < n - 6; i++) {
		if (name[i] < '0' || name[i] > '9' || v > 100000000u)
			return 0;
		v = v * 10 + (unsigned)(name[i] - '0');
	}
	return v;
}

static int remove_stale(const char sdir[4200], size_t keep)
{
	DIR *d = opendir(sdir);
	struct dirent *de;
	if (!d) {
		avt_error("cannot read '%s': %s", sdir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		unsigned n = sched_number(de->d_name);
		char path[4200 + sizeof de->d_name];
		if (n <= keep)
			continue;
		snprintf(path, sizeof path, "%s/%s", sdir, de->d_name);
		if (unlink(path) < 0 && errno != ENOENT)
			avt_warn("cannot remove stale schedule '%s': %s", path, strerror(errno));
	}
	closedir(d);
	return 0;
}

int predict_write(const struct prediction_set *s, const struct trace *t, const char *dir)
{
	char sdir[4200], path[4300], name[64];
	snprintf(sdir, sizeof sdir, "%s/schedules", dir);
	if (mkdir(sdir, 0777) < 0 && errno != EEXIST) {
		avt_error("cannot create '%s': %s", sdir, strerror(errno));
		return -1;
	}
	if (remove_stale(sdir, s->n) < 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->p[i].id) {
			avt_error("prediction %zu has no id: schedule 0000 is the recorded order", i);
			return -1;
		}
		snprintf(path, sizeof path, "%s/%s", dir,
			 predict_schedule_name(s->p[i].id, name, sizeof name));
		if (schedule_write(s->p[i].sched, path) < 0)
			return -1;
	}
	return write_json(s, t, dir);
}
