/* avtrace predict: mine the recording for schedules that expose bugs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "names.h"
#include "prediction.h"
#include "symbolizer/sym.h"
#include "trace/meta.h"
#include "predict/pattern.h"
#include "predict/predict.h"
#include "trace/log.h"

static const char predict_help[] =
	"usage: avtrace predict [-d DIR] [--max N] [--no-deadlocks] [--no-sidetrack] [--no-penelope]\n"
	"                       [--no-pecan] [--no-order] [--pattern FILE]\n"
	"\n"
	"Analyses DIR/trace.avt (default ./avtrace-out) offline and writes one\n"
	"schedule per predicted bug: DIR/predictions.json and\n"
	"DIR/schedules/NNNN.sched (0001, 0002, ... in rank order: fewer threads\n"
	"and context switches first).  Detectors (docs/predict.md):\n"
	"  sidetrack  atomicity violations: a function takes the same lock twice\n"
	"             and another thread's critical section fits between\n"
	"  penelope   the five single-variable access patterns (RWR, RWW, WWR, WRW,\n"
	"             WWW) from read/write events\n"
	"  pecan      access anomalies matched against patterns: races, atomicity\n"
	"             violations, two-variable atomic-set violations, and --pattern's\n"
	"  deadlock   lock-order cycles across threads, even if the run survived\n"
	"  order      a read in a critical section taking its value from another\n"
	"             thread's later write on the same lock\n"
	"Atomicity patterns whose every event lies in code the recording did not\n"
	"instrument (a system library's own locks; record --access-scope) are not\n"
	"predicted: their data was never seen.\n"
	"Then 'avtrace replay --all' (or 'avtrace test') tells which are real.\n"
	"\n"
	"  -d, --dir DIR       recording directory\n"
	"  -v, --verbose       debug lines (the model's size, ...)\n"
	"      --max N         the N best ranked predictions (default 100)\n"
	"      --no-deadlocks  skip the deadlock predictor\n"
	"      --no-sidetrack  skip the atomicity predictor\n"
	"      --no-penelope   skip the access-pattern predictor\n"
	"      --no-pecan      skip pecan's built-in patterns\n"
	"      --no-order      skip the reads-from reorderings\n"
	"      --pattern FILE  more patterns for pecan, one a line (docs/predict.md):\n"
	"                      NAME [consecutive]: AT THREAD VAR REGION, ...\n"
	"      --atomic F[,F]  only calls of these functions are meant to be atomic\n"
	"                      (default: every function call, with record --stacks;\n"
	"                      the call stacks are needed for this option)\n"
	"      --filter        drop the predictions AVFilter flags (their schedule\n"
	"                      changes a read the run depends on: docs/avfilter.md);\n"
	"                      by default they are kept, ranked last and marked\n";

/* Is the frame at mod+off in a system header (a library's template or
 * inline wrapper compiled into the program: std::mutex::lock's
 * __gthread_mutex_lock in gthr-default.h)? */
static bool in_system_header(struct names *n, unsigned mod, uint64_t off, bool is_return)
{
	struct sym_loc loc;
	if (sym_site(n->sym, mod, off, is_return, &loc) != 0 || !loc.file)
		return false;
	return !strncmp(loc.file, "/usr/include/", 13) || !strncmp(loc.file, "/usr/lib/gcc/", 13) ||
	       strstr(loc.file, "/include/c++/");
}

/* The site of event seq as the program's code calls it: the event's own,
 * or with call stacks, the innermost frame outside the system headers
 * (a std::lock_guard's lock: "account.cc:23", not "gthr-default.h:749"). */
static void user_site(struct names *n, const struct trace *t, uint64_t seq, char *buf,
		      size_t len)
{
	const struct avt_event *e = &t->ev[seq];
	const char *func;
	names_site(n, e, buf, len, &func);
	if (e->site_mod == AVT_MOD_NONE ||
	    !in_system_header(n, e->site_mod, e->site_off, !(e->flags & AVT_F_SITE_EXACT)))
		return;
	const struct avt_stack *s = t->nstacks ? trace_stack(t, e->seq) : NULL;
	for (uint32_t k = 1; s && k < s->depth; k++) {
		const struct avt_frame *f = &s->frames[k];
		if (!in_system_header(n, f->mod, f->off, true)) {
			names_frame(n, f->mod, f->off, 1, buf, len, &func);
			return;
		}
	}
}

/* "vec.c:22 / vec.c:17 / vec.c:40": the sites of a prediction's events. */
const char *prediction_where(struct names *n, const struct trace *t, const struct prediction *p,
			     char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < p->nevents && off < len; i++) {
		uint64_t seq = p->events[i];
		if (seq >= t->nev)
			continue;
		char site[256];
		names_at(n, seq);
		user_site(n, t, seq, site, sizeof site);
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " / " : "", site);
	}
	return buf;
}

/* The schedules' first comment, which replay prints as "predicted:",
 * re-worded with names: "1: sidetrack after-window — T1 acquire shared.m
 * at checkthenact.c:55, T2 acquire shared.m at checkthenact.c:71, ...". */
void name_predictions(struct prediction_set *set, const struct trace *t)
{
	struct names n;
	if (names_open(&n, t) < 0)
		return;
	for (size_t i = 0; i < set->n; i++) {
		struct prediction *p = &set->p[i];
		char text[2048], obj[256], site[256];
		char dets[64];
		size_t off = (size_t)snprintf(text, sizeof text, "%u: %s %s —", p->id,
					      predict_detectors(p, dets, sizeof dets), p->pattern);
		for (unsigned k = 0; k < p->nevents && off < sizeof text; k++) {
			if (p->events[k] >= t->nev)
				continue;
			const struct avt_event *e = &t->ev[p->events[k]];
			const char *func;
			names_at(&n, e->seq);
			names_obj_or_addr(&n, e->obj, obj, sizeof obj);
			names_site(&n, e, site, sizeof site, &func);
			off += (size_t)snprintf(text + off, sizeof text - off, "%s T%u %s %s at %s", k ? "," : "",
						e->thread, avt_kind_name(e->kind), obj, site);
		}
		/* SideTrack's blame: the calls that should have been atomic */
		for (unsigned k = 0; k < p->nblame && off < sizeof text; k++) {
			const char *func = NULL;
			names_frame(&n, p->blame[k].mod, p->blame[k].off, 1, site, sizeof site, &func);
			off += (size_t)snprintf(text + off, sizeof text - off, "%s%s (%s)",
						k ? ", " : "; not atomic: ", func ? func : "?", site);
		}
		if (p->sched && p->sched->ncomments) {
			char *c = strdup(text);
			if (c) {
				free(p->sched->comments[0]);
				p->sched->comments[0] = c;
			}
		}
	}
	names_close(&n);
}

/* --atomic FUNC[,FUNC]: the callback predict asks about a function. */

static bool is_atomic_func(void *ctx, uint16_t mod, uint64_t off)
{
	struct atomic_funcs *a = ctx;
	char site[256];
	const char *func = NULL;
	names_frame(&a->n, mod, off, 1, site, sizeof site, &func);
	for (size_t i = 0; func && i < a->count; i++)
		if (!strcmp(func, a->names[i]))
			return true;
	return false;
}

int atomic_funcs_parse(struct atomic_funcs *a, char *arg)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		if (a->count == sizeof a->names / sizeof a->names[0])
			return -1;
		a->names[a->count++] = tok;
	}
	return 0;
}

/* Arms o->atomic when functions were named; names come from t. */
void atomic_funcs_arm(struct atomic_funcs *a, const struct trace *t, struct predict_opts *o)
{
	if (!a->count || names_open(&a->n, t) < 0)
		return;
	a->open = true;
	o->atomic = is_atomic_func;
	o->atomic_ctx = a;
}

void atomic_funcs_release(struct atomic_funcs *a)
{
	if (a->open)
		names_close(&a->n);
	a->open = false;
}

void print_dropped(const struct prediction_set *set)
{
	if (set->ndropped)
		printf("%zu more not predicted: a read before the violation would load another value than recorded, so its thread could go elsewhere (docs/predict.md, \"Reads before the violation\"; -v names them)\n",
		       set->ndropped);
}

int print_lockwords(const struct prediction_set *set, const struct trace *t)
{
	struct names n;
	char name[256];
	if (!set->words.n)
		return 0;
	if (names_open(&n, t) < 0)
		return -1;
	for (size_t i = 0; i < set->words.n; i++) {
		const struct pr_lockword *w = &set->words.w[i];
		names_obj_or_addr(&n, w->addr, name, sizeof name);
		if (w->lock) {
			printf("lock word %s: %u acquire/release pair%s (a locked write takes it, its owner's next store gives it back)\n",
			       name, w->pairs, w->pairs == 1 ? "" : "s");
			continue;
		}
		printf("note: %s looks like a lock word (futex calls or a failed compare-and-swap on it) but is not taken for a lock: %s",
		       name, w->why);
		if (w->at != UINT64_MAX)
			printf(" (event %llu of T%u", (unsigned long long)w->at, w->thread);
		if (w->at != UINT64_MAX && w->holder != UINT32_MAX)
			printf(", T%u held it", w->holder);
		printf("%s\n", w->at != UINT64_MAX ? ")" : "");
	}
	names_close(&n);
	return 0;
}

int print_predictions(const struct prediction_set *set, const struct trace *t)
{
	struct names n;
	char where[512], thr[64];
	if (names_open(&n, t) < 0)
		return -1;
	printf("  %-4s %-14s %-15s %-9s %-40s %s\n", "#", "detector", "pattern", "threads", "where",
	       "switches");
	for (size_t i = 0; i < set->n; i++) {
		const struct prediction *p = &set->p[i];
		size_t off = 0;
		thr[0] = 0;
		for (unsigned k = 0; k < p->nthreads && off < sizeof thr; k++)
			off += (size_t)snprintf(thr + off, sizeof thr - off, "%sT%u", k ? "," : "", p->threads[k]);
		char det[64];
		printf("  %-4u %-14s %-15s %-9s %-40s %u%s\n", p->id, predict_detectors(p, det, sizeof det),
		       p->pattern, thr, prediction_where(&n, t, p, where, sizeof where),
		       p->context_switches, p->filtered ? "  flagged by AVFilter" : "");
	}
	names_close(&n);
	return 0;
}

struct avt_meta *recorded_scope(const char *dir, struct predict_opts *o)
{
	char path[4096], err[512];
	snprintf(path, sizeof path, "%s/meta.json", dir);
	struct avt_meta *meta = meta_read(path, err, sizeof err, NULL);
	if (meta) {
		o->scope_known = true;
		o->scope = meta->access_scope;
		o->program = meta->program;
	}
	return meta;
}

int cmd_predict(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, 0, 'd' }, { "max", required_argument, 0, 'm' },
		{ "no-deadlocks", no_argument, 0, 'D' }, { "no-sidetrack", no_argument, 0, 'S' },
		{ "atomic", required_argument, 0, 'A' }, { "no-penelope", no_argument, 0, 'P' },
		{ "filter", no_argument, 0, 'F' },
		{ "no-pecan", no_argument, 0, 'C' }, { "pattern", required_argument, 0, 'p' },
		{ "no-order", no_argument, 0, 'O' }, { "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *dir = "avtrace-out";
	struct pr_patterns pats = { NULL, 0, 0 };
	struct predict_opts o = { .deadlocks = true, .sidetrack = true, .penelope = true,
				  .pecan = true, .order = true, .patterns = &pats };
	struct atomic_funcs af = { .count = 0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'v': avt_verbose++; break;
		case 'm':
			if (arg_uint("predict", "--max", optarg, 1, 1000000, &o.max_predictions) < 0)
				return EXIT_USAGE;
			break;
		case 'D': o.deadlocks = false; break;
		case 'S': o.sidetrack = false; break;
		case 'P': o.penelope = false; break;
		case 'F': o.filter = true; break;
		case 'C': o.pecan = false; break;
		case 'O': o.order = false; break;
		case 'p':
			if (pr_patterns_load(&pats, optarg) < 0) {
				pr_patterns_release(&pats);
				return EXIT_USAGE;
			}
			break;
		case 'A':
			if (atomic_funcs_parse(&af, optarg) < 0)
				return usage_error("predict", "--atomic takes at most 16 functions");
			break;
		case 'h': fputs(predict_help, stdout); return 0;
		default: return usage_error("predict", "bad option");
		}
	}
	if (optind < argc)
		return usage_error("predict", "unexpected argument '%s'", argv[optind]);
	struct trace *t = load_trace(dir);
	if (!t)
		return EXIT_USAGE;
	struct prediction_set set;
	int rc = EXIT_USAGE;
	atomic_funcs_arm(&af, t, &o);
	struct avt_meta *meta = recorded_scope(dir, &o);
	struct names vn;
	bool vn_open = names_open(&vn, t) == 0;
	if (vn_open) { /* AVFilter asks where changed reads' values go */
		o.read_steers = sym_read_steers;
		o.read_ctx = vn.sym;
		o.rmw_blind = sym_rmw_blind;
	}
	int prc = predict_run(t, &o, &set);
	if (vn_open)
		names_close(&vn);
	if (prc == 0) {
		name_predictions(&set, t);
		if (predict_write(&set, t, dir) == 0) {
			printf("%zu prediction%s -> %s/schedules/\n", set.n, set.n == 1 ? "" : "s", dir);
			print_dropped(&set);
			print_lockwords(&set, t);
			if (set.n)
				print_predictions(&set, t);
			rc = 0;
		}
		prediction_set_release(&set);
	}
	atomic_funcs_release(&af);
	meta_free(meta);
	trace_free(t);
	pr_patterns_release(&pats);
	return rc;
}
