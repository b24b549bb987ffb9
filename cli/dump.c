/* avtrace dump: the recorded events, one per line (text or JSON). */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "names.h"
#include "trace/log.h"

static const char dump_help[] =
	"usage: avtrace dump [-d DIR] [--json] [--raw]\n"
	"\n"
	"Prints the events of DIR/trace.avt (default ./avtrace-out) in the order\n"
	"they took effect, with sites as file:line and objects as variable names\n"
	"when debug information allows.\n"
	"\n"
	"  -d, --dir DIR   output directory of a recording\n"
	"  -j, --json      one JSON object per line: seq, thread, tindex, kind,\n"
	"                  obj, obj_name, site, func, and child (create, join),\n"
	"                  mutex/cond (wait), signal (fatal_signal), size, value\n"
	"                  (what a read loaded, when recorded), flags\n"
	"      --raw       do not symbolize (module+offset sites only)\n";

static void flag_names(uint16_t f, json_t *arr)
{
	static const struct { uint16_t bit; const char *name; } names[] = {
		{ AVT_F_COND_WAKE, "cond_wake" }, { AVT_F_TIMED_OUT, "timed_out" },
		{ AVT_F_RECURSIVE, "recursive" }, { AVT_F_WATCHED, "watched" },
		{ AVT_F_ANNOTATED, "annotated" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (f & names[i].bit)
			json_array_append_new(arr, json_string(names[i].name));
}

static json_t *stack_json(struct names *n, const struct avt_stack *st, bool exact0)
{
	json_t *arr = json_array();
	char site[512];
	for (uint32_t i = 0; i < st->depth; i++) {
		const char *func = NULL;
		json_t *f = json_object();
		const struct avt_frame *fr = &st->frames[i];
		if (n)
			names_frame(n, fr->mod, fr->off, i > 0 || !exact0, site, sizeof site, &func);
		else
			snprintf(site, sizeof site, "%u+0x%llx", fr->mod, (unsigned long long)fr->off);
		json_object_set_new(f, "site", json_string(site));
		if (fr->inv)
			json_object_set_new(f, "call", json_integer(fr->inv));
		if (func)
			json_object_set_new(f, "func", json_string(func));
		json_array_append_new(arr, f);
	}
	return arr;
}

static void print_stack_text(struct names *n, const struct avt_stack *st)
{
	char site[512];
	printf("         backtrace:");
	for (uint32_t i = 0; i < st->depth; i++) {
		const char *func = NULL;
		const struct avt_frame *fr = &st->frames[i];
		if (n)
			names_frame(n, fr->mod, fr->off, i > 0, site, sizeof site, &func);
		else
			snprintf(site, sizeof site, "%u+0x%llx", fr->mod, (unsigned long long)fr->off);
		printf("%s %s %s", i ? " <-" : "", func ? func : "??", site);
	}
	putchar('\n');
}


/* A futex event's operation (its size field: the futex op with its
 * flags), as futex(2) names it, lower case: "wait_private", "wake", ... */
static const char *futex_op_name(uint16_t op, char *buf, size_t len)
{
	static const char *const names[] = {
		"wait", "wake", "fd", "requeue", "cmp_requeue", "wake_op", "lock_pi",
		"unlock_pi", "trylock_pi", "wait_bitset", "wake_bitset",
		"wait_requeue_pi", "cmp_requeue_pi", "lock_pi2",
	};
	unsigned cmd = op & 127u; /* FUTEX_CMD_MASK for the ops there are */
	snprintf(buf, len, "%s%s%s", cmd < sizeof names / sizeof names[0] ? names[cmd] : "waitv",
		 op & 128u ? "_private" : "", op & 256u ? "_clock_realtime" : "");
	return buf;
}

static void print_json(struct names *n, const struct avt_event *ev, const struct avt_stack *st)
{
	char site[512], obj[256], tmp[64];
	const char *func = NULL;
	json_t *o = json_object();
	json_object_set_new(o, "seq", json_integer((json_int_t)ev->seq));
	snprintf(tmp, sizeof tmp, "T%u", ev->thread);
	json_object_set_new(o, "thread", json_string(tmp));
	json_object_set_new(o, "tindex", json_integer(ev->tindex));
	json_object_set_new(o, "kind", json_string(avt_kind_name(ev->kind)));
	if (avt_kind_obj_is_thread(ev->kind)) {
		if (ev->kind != AVT_EV_START || ev->obj != UINT32_MAX) {
			snprintf(tmp, sizeof tmp, "T%llu", (unsigned long long)ev->obj);
			json_object_set_new(o, ev->kind == AVT_EV_START ? "parent" : "child", json_string(tmp));
		}
	} else if (ev->kind == AVT_EV_EXIT) {
		json_object_set_new(o, "code", json_integer((json_int_t)ev->obj));
	} else if (ev->kind == AVT_EV_BEGIN || ev->kind == AVT_EV_END) {
		/* atomic block boundaries have no object */
	} else {
		snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)ev->obj);
		json_object_set_new(o, "obj", json_string(tmp));
		if (n && names_obj(n, ev->obj, obj, sizeof obj))
			json_object_set_new(o, "obj_name", json_string(obj));
	}
	if (ev->kind == AVT_EV_WAIT || (ev->flags & AVT_F_COND_WAKE)) {
		uint64_t other = ev->obj2;
		snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)other);
		json_object_set_new(o, ev->kind == AVT_EV_WAIT ? "mutex" : "cond", json_string(tmp));
		if (n && names_obj(n, other, obj, sizeof obj))
			json_object_set_new(o, ev->kind == AVT_EV_WAIT ? "mutex_name" : "cond_name",
					    json_string(obj));
	}
	if (ev->kind == AVT_EV_FATAL_SIGNAL) {
		const char *s = sigabbrev_np(ev->size);
		snprintf(tmp, sizeof tmp, "SIG%s", s ? s : "?");
		json_object_set_new(o, "signal", json_string(tmp));
	}
	if (avt_kind_is_access(ev->kind))
		json_object_set_new(o, "size", json_integer(ev->size));
	if (avt_kind_reads(ev->kind) && (ev->flags & AVT_F_VALUE)) {
		snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)ev->obj2);
		json_object_set_new(o, "value", json_string(tmp));
	}
	if (ev->kind == AVT_EV_FUTEX_WAIT || ev->kind == AVT_EV_FUTEX_WAKE) {
		json_object_set_new(o, "futex_op", json_string(futex_op_name(ev->size, tmp, sizeof tmp)));
		json_object_set_new(o, ev->kind == AVT_EV_FUTEX_WAIT ? "val" : "count",
				    json_integer((json_int_t)ev->obj2));
	}
	const char *s = n ? names_site(n, ev, site, sizeof site, &func) : NULL;
	if (!n && !(ev->site_mod == AVT_MOD_NONE && !ev->site_off)) {
		snprintf(site, sizeof site, "%u+0x%llx", ev->site_mod, (unsigned long long)ev->site_off);
		s = site;
	}
	if (s && *s)
		json_object_set_new(o, "site", json_string(s));
	if (func)
		json_object_set_new(o, "func", json_string(func));
	if (ev->flags) {
		json_t *fl = json_array();
		flag_names(ev->flags, fl);
		if (json_array_size(fl))
			json_object_set_new(o, "flags", fl);
		else
			json_decref(fl);
	}
	/* a crash's backtrace, or the event's call stack (record --stacks) */
	if (st)
		json_object_set_new(o, ev->kind == AVT_EV_FATAL_SIGNAL ? "backtrace" : "stack",
				    stack_json(n, st, (ev->flags & AVT_F_SITE_EXACT) != 0));
	json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

/* An access breakpoint the recorder removed (its hits were all private). */
static void print_disarm(struct names *n, const struct trace *t, const struct avt_disarm_rec *d)
{
	const struct avt_module *m = trace_module(t, d->site_mod);
	const char *base = m && m->path ? strrchr(m->path, '/') : NULL, *func = NULL;
	char buf[512], where[600];
	snprintf(where, sizeof where, "%s+0x%llx", base ? base + 1 : m && m->path ? m->path : "?",
		 (unsigned long long)d->site_off);
	if (n && names_frame(n, d->site_mod, d->site_off, 0, buf, sizeof buf, &func))
		snprintf(where, sizeof where, "%s%s%s", buf, func ? " " : "", func ? func : "");
	printf("# disarmed the access breakpoint at %s after %llu hits (all private)\n", where,
	       (unsigned long long)d->hits);
}

static void print_text(struct names *n, const struct avt_event *ev, const struct avt_stack *st)
{
	char site[512] = "", obj[256] = "", extra[300] = "";
	const char *func = NULL;
	if (avt_kind_obj_is_thread(ev->kind))
		snprintf(obj, sizeof obj, ev->obj == UINT32_MAX ? "-" : "T%llu", (unsigned long long)ev->obj);
	else if (ev->kind == AVT_EV_EXIT)
		snprintf(obj, sizeof obj, "code %llu", (unsigned long long)ev->obj);
	else if (ev->kind == AVT_EV_BEGIN || ev->kind == AVT_EV_END)
		obj[0] = 0;
	else if (ev->kind == AVT_EV_FATAL_SIGNAL)
		snprintf(obj, sizeof obj, "SIG%s addr 0x%llx", sigabbrev_np(ev->size) ? sigabbrev_np(ev->size) : "?",
			 (unsigned long long)ev->obj);
	else if (n)
		names_obj_or_addr(n, ev->obj, obj, sizeof obj);
	else
		snprintf(obj, sizeof obj, "0x%llx", (unsigned long long)ev->obj);
	if (ev->kind == AVT_EV_WAIT && n)
		snprintf(extra, sizeof extra, " (releases %s)", names_obj_or_addr(n, ev->obj2, site, sizeof site));
	if (ev->kind == AVT_EV_FUTEX_WAIT || ev->kind == AVT_EV_FUTEX_WAKE)
		snprintf(extra, sizeof extra, " (%s, %s %llu)", futex_op_name(ev->size, site, sizeof site),
			 ev->kind == AVT_EV_FUTEX_WAIT ? "val" : "count", (unsigned long long)ev->obj2);
	if (n)
		names_site(n, ev, site, sizeof site, &func);
	else if (!(ev->site_mod == AVT_MOD_NONE && !ev->site_off))
		snprintf(site, sizeof site, "%u+0x%llx", ev->site_mod, (unsigned long long)ev->site_off);
	printf("%6llu T%-3u %-13s %s%s%s%s%s%s\n", (unsigned long long)ev->seq, ev->thread,
	       avt_kind_name(ev->kind), obj, extra, *site ? "  " : "", site, func ? " " : "",
	       func ? func : "");
	if (st && ev->kind == AVT_EV_FATAL_SIGNAL)
		print_stack_text(n, st);
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, 0, 'd' }, { "json", no_argument, 0, 'j' },
		{ "raw", no_argument, 0, 'r' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *dir = "avtrace-out";
	bool json = false, raw = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'j': json = true; break;
		case 'r': raw = true; break;
		case 'h': fputs(dump_help, stdout); return 0;
		default: return usage_error("dump", "bad option");
		}
	}
	if (optind < argc)
		return usage_error("dump", "unexpected argument '%s'", argv[optind]);
	struct trace *t = load_trace(dir);
	if (!t)
		return EXIT_USAGE;
	struct names nm, *n = NULL;
	if (!raw && names_open(&nm, t) == 0)
		n = &nm;
	size_t note = 0, dis = 0;
	for (size_t i = 0; i < t->nev; i++) {
		/* the recorder's notes (exec, watchpoints, ...) where they happened */
		for (; !json && note < t->nnotes && t->notes[note].after_seq <= i; note++)
			printf("# %s\n", t->notes[note].text);
		for (; !json && dis < t->ndisarms && t->disarms[dis].after_seq <= i; dis++)
			print_disarm(n, t, &t->disarms[dis]);
		if (n)
			names_at(n, t->ev[i].seq);
		const struct avt_stack *st = t->nstacks ? trace_stack(t, t->ev[i].seq) : NULL;
		if (json)
			print_json(n, &t->ev[i], st);
		else
			print_text(n, &t->ev[i], st);
	}
	for (; !json && note < t->nnotes; note++)
		printf("# %s\n", t->notes[note].text);
	for (; !json && dis < t->ndisarms; dis++)
		print_disarm(n, t, &t->disarms[dis]);
	if (t->truncated)
		avt_warn("trace '%s/trace.avt' ends inside a record (the recording was cut short)", dir);
	if (n)
		names_close(n);
	trace_free(t);
	return 0;
}
