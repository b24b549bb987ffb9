/* A replay's facts in words, added to replays/NNNN.json (cli/facts.h). */
#include "facts.h"

#include <signal.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "symbolizer/sym.h"
#include "trace/log.h"

static const struct avt_event *fatal_event(const struct replay_result *res)
{
	for (size_t i = res->nev; i-- > 0;)
		if (res->ev[i].kind == AVT_EV_FATAL_SIGNAL)
			return &res->ev[i];
	return NULL;
}

static bool has_site(const struct avt_event *e)
{
	return !(e->site_mod == AVT_MOD_NONE && e->site_off == 0);
}

bool facts_failure_site(const struct replay_result *res, unsigned *mod, uint64_t *off,
			int *is_return)
{
	const struct avt_event *last = fatal_event(res);
	if (res->signal && last) {
		*mod = last->site_mod;
		*off = last->site_off;
		*is_return = !(last->flags & AVT_F_SITE_EXACT);
		/* raised inside libc: blame the program's own innermost frame */
		for (uint32_t i = 0; last->site_mod != 0 && i < res->nbt; i++)
			if (res->bt[i].mod == 0) {
				*mod = 0;
				*off = res->bt[i].off;
				*is_return = i > 0;
				break;
			}
		return true;
	}
	if (res->outcome == RO_DEADLOCK) {
		for (size_t i = 0; i < res->nwaits; i++)
			if (res->waits[i].has_last && has_site(&res->waits[i].last)) {
				*mod = res->waits[i].last.site_mod;
				*off = res->waits[i].last.site_off;
				*is_return = !(res->waits[i].last.flags & AVT_F_SITE_EXACT);
				return true;
			}
		return false;
	}
	for (size_t i = res->nev; i-- > 0;)
		if (res->ev[i].thread == res->fail_thread && has_site(&res->ev[i])) {
			*mod = res->ev[i].site_mod;
			*off = res->ev[i].site_off;
			*is_return = !(res->ev[i].flags & AVT_F_SITE_EXACT);
			return true;
		}
	return false;
}

void facts_headline(struct names *n, const struct replay_result *res, char *buf, size_t len)
{
	char site[512];
	const char *func = NULL, *sig;
	unsigned mod;
	uint64_t off;
	int ret;
	switch (res->outcome) {
	case RO_BUG:
		if (res->signal && fatal_event(res) && facts_failure_site(res, &mod, &off, &ret)) {
			names_frame(n, mod, off, ret, site, sizeof site, &func);
			sig = sigabbrev_np(res->signal);
			snprintf(buf, len, "BUG reproduced: SIG%s in T%u at %s%s%s%s", sig ? sig : "?",
				 res->fail_thread, site, func ? " (" : "", func ? func : "", func ? ")" : "");
		} else {
			snprintf(buf, len, "BUG reproduced: %s", res->reason);
		}
		return;
	case RO_DEADLOCK:
		snprintf(buf, len, "DEADLOCK reproduced: every live thread is blocked");
		return;
	case RO_PASS: snprintf(buf, len, "PASS"); return;
	case RO_INFEASIBLE: snprintf(buf, len, "INFEASIBLE: %s", res->reason); return;
	default: snprintf(buf, len, "ERROR: %s", res->reason); return;
	}
}

json_t *facts_site_json(struct names *n, unsigned mod, uint64_t off, int is_return)
{
	struct sym_loc loc;
	json_t *o = json_object();
	memset(&loc, 0, sizeof loc);
	int known = sym_site(n->sym, mod, off, is_return, &loc);
	if (known == 0 && loc.file && loc.line > 0) {
		char path[4096];
		if (loc.file[0] != '/' && loc.comp_dir && loc.comp_dir[0] == '/')
			snprintf(path, sizeof path, "%s/%s", loc.comp_dir, loc.file);
		else
			snprintf(path, sizeof path, "%s", loc.file);
		json_object_set_new(o, "file", json_string(path));
		json_object_set_new(o, "line", json_integer(loc.line));
	}
	if (known == 0 && loc.func)
		json_object_set_new(o, "function", json_string(loc.func));
	if (known == 0 && loc.module)
		json_object_set_new(o, "module", json_string(loc.module));
	json_object_set_new(o, "offset", json_integer((json_int_t)off));
	return o;
}

static json_t *event_site(struct names *n, const struct avt_event *e)
{
	if (!has_site(e))
		return json_object();
	return facts_site_json(n, e->site_mod, e->site_off, !(e->flags & AVT_F_SITE_EXACT));
}

/* What the event is about, as the report's columns name it. */
static void event_object(struct names *n, const struct avt_event *e, char *buf, size_t len)
{
	buf[0] = 0;
	if (e->kind == AVT_EV_FATAL_SIGNAL) {
		const char *s = sigabbrev_np((int)e->size);
		snprintf(buf, len, "SIG%s", s ? s : "?");
	} else if (avt_kind_obj_is_thread(e->kind)) {
		if (e->kind != AVT_EV_START)
			snprintf(buf, len, "T%llu", (unsigned long long)e->obj);
	} else if (e->kind != AVT_EV_EXIT && e->kind != AVT_EV_BEGIN && e->kind != AVT_EV_END) {
		names_obj_or_addr(n, e->obj, buf, len);
	}
}

static json_t *interleaving_json(struct names *n, const struct replay_result *res, size_t from)
{
	json_t *a = json_array();
	for (size_t i = from; i < res->nev; i++) {
		const struct avt_event *e = &res->ev[i];
		char obj[256];
		names_at(n, e->seq);
		event_object(n, e, obj, sizeof obj);
		json_t *o = event_site(n, e);
		json_object_set_new(o, "index", json_integer((json_int_t)i));
		json_object_set_new(o, "thread", json_integer(e->thread));
		json_object_set_new(o, "kind", json_string(avt_kind_name(e->kind) ?: "?"));
		if (*obj)
			json_object_set_new(o, "object", json_string(obj));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *deadlock_json(struct names *n, const struct replay_result *res)
{
	json_t *a = json_array();
	for (size_t i = 0; i < res->nwaits; i++) {
		const struct replay_wait *w = &res->waits[i];
		char obj[256];
		if (!strcmp(w->what, "join"))
			snprintf(obj, sizeof obj, "T%llu", (unsigned long long)w->obj);
		else
			names_obj_or_addr(n, w->obj, obj, sizeof obj);
		json_t *o = w->has_last ? event_site(n, &w->last) : json_object();
		json_object_set_new(o, "thread", json_integer(w->thread));
		json_object_set_new(o, "waits_for", json_string(w->what));
		json_object_set_new(o, "object", json_string(obj));
		json_object_set_new(o, "holder",
				    w->holder != UINT32_MAX ? json_integer(w->holder) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

int facts_add(const char *jpath, struct names *n, const struct replay *rp,
	      const struct replay_result *res)
{
	json_error_t je;
	json_t *o = json_load_file(jpath, 0, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		return -1;
	}
	char head[1024];
	facts_headline(n, res, head, sizeof head);
	json_object_set_new(o, "headline", json_string(head));
	const struct schedule *s = replay_schedule(rp);
	json_t *pred = json_array();
	for (size_t i = 0; s && i < s->ncomments; i++)
		json_array_append_new(pred, json_string(s->comments[i]));
	json_object_set_new(o, "predicted", pred);
	if (res->outcome == RO_BUG || res->outcome == RO_DEADLOCK) {
		unsigned mod;
		uint64_t off;
		int ret;
		json_t *f = facts_failure_site(res, &mod, &off, &ret) ? facts_site_json(n, mod, off, ret)
								      : json_object();
		json_object_set_new(f, "thread", json_integer(res->fail_thread));
		if (res->signal) {
			const char *sg = sigabbrev_np(res->signal);
			char sig[32];
			snprintf(sig, sizeof sig, "SIG%s", sg ? sg : "?");
			json_object_set_new(f, "signal", json_string(sig));
		}
		json_object_set_new(o, "failure", f);
		json_t *fr = json_array();
		for (uint32_t i = 0; i < res->nbt; i++)
			json_array_append_new(fr, facts_site_json(n, res->bt[i].mod, res->bt[i].off, i > 0));
		json_object_set_new(o, "frames", fr);
		size_t from = res->nev > FACTS_MAX_EVENTS ? res->nev - FACTS_MAX_EVENTS : 0;
		json_object_set_new(o, "interleaving", interleaving_json(n, res, from));
		json_object_set_new(o, "interleaving_omitted", json_integer((json_int_t)from));
		if (res->outcome == RO_DEADLOCK)
			json_object_set_new(o, "deadlock", deadlock_json(n, res));
	}
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.tmp", jpath);
	errno = 0;
	int rc = json_dump_file(o, tmp, JSON_INDENT(2)) < 0 || rename(tmp, jpath) < 0 ? -1 : 0;
	json_decref(o);
	if (rc < 0) {
		avt_write_error("cannot write '%s': %s", jpath, strerror(errno ? errno : EIO));
		remove(tmp);
	}
	return rc;
}
