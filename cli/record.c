/* avtrace record */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "names.h"
#include "tree.h"
#include "trace/trace.h"
#include "trace/log.h"
#include "tracer/record.h"

static const char record_help[] =
	"usage: avtrace record [options] -- PROG [ARGS...]\n"
	"\n"
	"Runs PROG once under ptrace with ASLR off, one thread at a time (the\n"
	"current thread runs until it blocks or its time slice ends), and records\n"
	"every pthread / C11 synchronization call as it takes effect.  PROG may be\n"
	"any command (a script, a runner): every process it starts is followed,\n"
	"and each other multithreaded one is then recorded alone into\n"
	"DIR/procs/NNNN/; DIR/tree.json lists them all (docs/process-tree.md).\n"
	"Exits with PROG's own exit status (128+N when it died of signal N),\n"
	"2 on a usage or tool error, 1 if PROG deadlocked (it is then killed).\n"
	"\n"
	"options:\n"
	"  -o, --output DIR   output directory (default ./avtrace-out)\n"
	"  -f, --force        replace an existing avtrace output directory\n"
	"      --cpu N        pin avtrace and PROG to CPU N (default: the allowed\n"
	"                     CPU avtrace starts on; -1 leaves them unpinned)\n"
	"      --slice MS     preempt a thread that runs MS ms without an event\n"
	"                     (spin loops, ad hoc synchronization; 1..60000,\n"
	"                     default 10)\n"
	"      --no-heap      do not hook malloc/calloc/realloc/free (heap objects\n"
	"                     are then shown as addresses, not allocation sites)\n"
	"      --watch V[,V]  watch up to 4 variables with hardware watchpoints and\n"
	"                     record their reads and writes: a global or static by\n"
	"                     name, var.member, var[N], or 0xADDR[:SIZE]\n"
	"      --no-access    no access breakpoints.  By default a program with no\n"
	"                     avtrace.h annotations and no --watch has every load\n"
	"                     and store of its own code (not libc's) recorded as a\n"
	"                     read / write / rmw event, decoded from the instruction;\n"
	"                     sites that only touch one thread's memory are removed\n"
	"                     after a budget (see docs/memory-access.md).\n"
	"                     --no-auto-watch is the same switch\n"
	"      --access-budget N  private hits before a site is removed (default 256;\n"
	"                     those before a second thread started count 1/64)\n"
	"      --access-scope M[,M]  access breakpoints in these modules too, even\n"
	"                     in the system directories (by file name: libfoo\n"
	"                     matches libfoo.so.1; all: every module but ld.so);\n"
	"                     the program named is the user's code wherever it\n"
	"                     is installed if it can start threads; sh -c,\n"
	"                     make, a script's interpreter are not\n"
	"      --sync-spec FILE  these functions are locks, condition variables,\n"
	"                     once or thread create/join too (docs/sync-spec.md;\n"
	"                     GLib's are known without one); replays use it too\n"
	"      --futex        the program's own futex calls (a hand-written lock,\n"
	"                     GLib's bit locks, C++ atomic wait) as futex_wait /\n"
	"                     futex_wake events and scheduling points, by a\n"
	"                     seccomp filter that stops PROG at each futex call\n"
	"                     (libc's own are let go at once); replays, explore\n"
	"                     and verify do the same.  Off by default: PROG and\n"
	"                     every process it starts keep the filter, and one\n"
	"                     left running untraced gets ENOSYS from futex\n"
	"                     (docs/futex.md)\n"
	"      --stacks       record each event's call stack, with the identity of\n"
	"                     each function call (for the atomicity detector;\n"
	"                     walked by the modules' unwind tables)\n"
	"      --stack-depth N  frames per event with --stacks (default 8, at most 16)\n"
	"      --no-stacks    no call stacks (the default)\n"
	"      --no-agent     do not preload avtrace's in-process agent into PROG.\n"
	"                     By default it is (not when $AVTRACE_AGENT is 0):\n"
	"                     mutex, rwlock and spinlock operations that do not\n"
	"                     block, condition variable signals, and access\n"
	"                     breakpoints in the jump form (5 bytes or more, or\n"
	"                     a short one displaced with what follows it),\n"
	"                     cost no ptrace stop, in the recording (not with\n"
	"                     --stacks) and in its replays; the trace is the same\n"
	"                     (docs/agent.md)\n"
	"      --agent        preload it, or fail saying why it cannot be\n"
	"  -q, --quiet        no summary line\n"
	"  -v, --verbose      debug messages\n";

int default_cpu(void)
{
	return tracer_default_cpu();
}

/* The in-process agent for a recording: want 1 (--agent), 0 (--no-agent)
 * or -1 (neither: on, unless $AVTRACE_AGENT is 0, off or no, or the
 * library is not found).  Sets *lib (NULL: the ptrace path alone);
 * EXIT_USAGE when --agent cannot be had.  With call stacks the agent is
 * preloaded but stays passive in the recording (a stack is walked at a
 * ptrace stop; the tracer does not enable it), and its replays use it. */
int agent_choice(int want, const char **lib)
{
	*lib = NULL;
	const char *env = getenv("AVTRACE_AGENT");
	if (want < 0 && env && (!strcmp(env, "0") || !strcmp(env, "off") || !strcmp(env, "no")))
		want = 0;
	if (want == 0)
		return 0;
	*lib = tracer_agent_lib_default();
	if (!*lib && want > 0) {
		avt_error("cannot find libavtrace-agent.so next to avtrace or in ../lib/avtrace (set AVTRACE_AGENT_LIB)");
		return EXIT_USAGE;
	}
	if (!*lib)
		avt_debug("no libavtrace-agent.so next to avtrace: recording on ptrace alone");
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' }, { "force", no_argument, 0, 'f' },
		{ "cpu", required_argument, 0, 'c' }, { "slice", required_argument, 0, 's' },
		{ "quiet", no_argument, 0, 'q' }, { "verbose", no_argument, 0, 'v' },
		{ "no-heap", no_argument, 0, 'H' }, { "watch", required_argument, 0, 'w' },
		{ "no-auto-watch", no_argument, 0, 'W' }, { "no-access", no_argument, 0, 'W' },
		{ "access-budget", required_argument, 0, 'B' }, { "access-scope", required_argument, 0, 0x101 },
		{ "stacks", no_argument, 0, 'K' }, { "stack-depth", required_argument, 0, 'k' },
		{ "no-stacks", no_argument, 0, 'N' }, { "agent", no_argument, 0, 'A' },
		{ "no-agent", no_argument, 0, 'n' }, { "sync-spec", required_argument, 0, 0x102 },
		{ "futex", no_argument, 0, 0x103 },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct record_opts o = { .dir = "avtrace-out", .cpu = default_cpu(), .keep_stdin = !isatty(0), .slice_ms = 10,
				 .tree = true };
	int c;
	static const char *watch[5];
	size_t nwatch = 0;
	int agent = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:fqvh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': o.dir = optarg; break;
		case 'f': o.force = true; break;
		case 'c':
			if (arg_cpu("record", "--cpu", optarg, &o.cpu) < 0)
				return EXIT_USAGE;
			break;
		case 's':
			/* milliseconds; 0 or a wrapped -1 would turn preemption off */
			if (arg_uint("record", "--slice", optarg, 1, 60000, &o.slice_ms) < 0)
				return EXIT_USAGE;
			break;
		case 'H': o.no_heap = true; break;
		case 'W': o.no_auto_watch = true; break;
		case 'B':
			if (arg_uint("record", "--access-budget", optarg, 1, 1000000000, &o.access_budget) < 0)
				return EXIT_USAGE;
			break;
		case 0x101:
			if (arg_scope("record", "--access-scope", optarg) < 0)
				return EXIT_USAGE;
			o.access_scope = optarg;
			break;
		case 0x102:
			if (arg_sync_spec(optarg, &o.sync_spec) < 0)
				return EXIT_USAGE;
			o.sync_spec_name = optarg;
			break;
		case 0x103: o.futex = true; break;
		case 'K': o.stack_depth = o.stack_depth ? o.stack_depth : 8; break;
		case 'N': o.stack_depth = 0; break;
		case 'A': agent = 1; break;
		case 'n': agent = 0; break;
		case 'k':
			if (arg_uint("record", "--stack-depth", optarg, 1, 16, &o.stack_depth) < 0)
				return EXIT_USAGE;
			break;
		case 'w':
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				if (nwatch == 4)
					return usage_error("record", "--watch takes at most 4 variables (x86 has 4 debug registers)");
				watch[nwatch++] = tok;
			}
			break;
		case 'q': avt_quiet = 1; break;
		case 'v': avt_verbose++; break;
		case 'h': fputs(record_help, stdout); return 0;
		default: return usage_error("record", "bad option");
		}
	}
	if (optind >= argc)
		return usage_error("record", "no program to record");
	if (agent_choice(agent, &o.agent_lib))
		return EXIT_USAGE;
	o.argv = argv + optind;
	o.watch = watch;
	o.nwatch = nwatch;
	return record_run(&o, NULL);
}

/* What each blocked thread waits for, its objects by name where the
 * recording's debug information names them ("barrier start_line"); the
 * tracer's own words (addresses) when the trace cannot be read. */
static void deadlock_names(const struct record_result *res, const char *dir, char *buf, size_t len)
{
	struct trace *t = res->nblocked ? load_trace(dir) : NULL;
	struct names n;
	if (!t || names_open(&n, t) < 0) {
		snprintf(buf, len, "%s", res->deadlock_desc);
		trace_free(t);
		return;
	}
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < res->nblocked && off < len; i++) {
		const struct record_blocked *b = &res->blocked[i];
		char obj[256], holder[32] = "";
		if (b->holder != UINT32_MAX)
			snprintf(holder, sizeof holder, " held by T%u", b->holder);
		int k = snprintf(buf + off, len - off, "%sT%u waits for %s %s%s", off ? "; " : "", b->lid,
				 b->what, names_obj_or_addr(&n, b->obj, obj, sizeof obj), holder);
		if (k > 0)
			off += (size_t)k;
	}
	names_close(&n);
	trace_free(t);
}

static int record_said(const struct record_opts *opts, int rc, enum tstep st, const struct record_result *rres,
		       struct tracer_stats *stats);

/* Records o->argv; prints the summary; returns record's exit status (the
 * target's, 1 if it deadlocked, 2 on error).  *stats gets the counts.
 * With o->tree, the other multithreaded processes too (cli/tree.c). */
int record_run(const struct record_opts *opts, struct tracer_stats *stats)
{
	struct record_opts o = *opts;
	struct recorder *rec = record_start(&o);
	if (!rec)
		return EXIT_USAGE;
	enum tstep st;
	while ((st = record_step(rec)) == TSTEP_CONTINUE)
		;
	struct record_result res;
	int rc = record_finish(rec, st, &res);
	record_free(rec);
	int status = record_said(&o, rc, st, &res, stats);
	if (status != EXIT_USAGE && !tracer_interrupted() && o.tree && tree_record_rest(&o, &res, record_run) < 0)
		status = EXIT_USAGE;
	record_tree_free(&res);
	return status;
}

/* What record_run says of one recording; its exit status. */
static int record_said(const struct record_opts *opts, int rc, enum tstep st, const struct record_result *rres,
		       struct tracer_stats *stats)
{
	struct record_opts o = *opts;
	struct record_result res = *rres;
	if (tracer_interrupted()) {
		char ev[32];
		avt_error("interrupted by SIG%s: killed '%s'; %s/trace.avt keeps the %s events recorded so far",
			  sigabbrev_np(tracer_interrupted()) ?: "?", o.argv[0], o.dir,
			  fmt_thousands(res.stats.events, ev, sizeof ev));
		return 128 + tracer_interrupted();
	}
	if (rc < 0 || st == TSTEP_ERROR)
		return EXIT_USAGE;
	char ev[32];
	const struct tracer_stats *s = &res.stats;
	if (stats)
		*stats = res.stats;
	avt_info("avtrace: recorded %u thread%s, %s events (%u mutex%s, %u condvar%s) in %.2f s -> %s/",
		 s->threads, s->threads == 1 ? "" : "s", fmt_thousands(s->events, ev, sizeof ev),
		 s->mutexes, s->mutexes == 1 ? "" : "es", s->condvars, s->condvars == 1 ? "" : "s",
		 res.seconds, o.dir);
	if (o.agent_lib)
		avt_info("avtrace: %s events through the in-process agent",
			 fmt_thousands(s->agent_events, ev, sizeof ev));
	if (res.access_on) {
		char ae[32], os[32], in[64] = "";
		if (res.access.stubs)
			snprintf(in, sizeof in, "; %u taken in-process", res.access.stubs);
		avt_info("avtrace: access breakpoints: %u site%s, %s access events (%s on threads' own stacks left out); %u site%s disarmed (private after %u hits)%s%s",
			 res.access.sites, res.access.sites == 1 ? "" : "s",
			 fmt_thousands(res.access.events, ae, sizeof ae),
			 fmt_thousands(res.access.own_stack, os, sizeof os), res.access.disarmed,
			 res.access.disarmed == 1 ? "" : "s", o.access_budget ? o.access_budget : 256, in,
			 res.access.skipped ? "; some sites skipped (see the trace notes)" : "");
	}
	if (s->execs)
		avt_info("avtrace: followed %u exec%s", s->execs, s->execs == 1 ? "" : "s");
	if (res.deadlock) {
		char desc[2048];
		deadlock_names(&res, o.dir, desc, sizeof desc);
		avt_error("'%s' deadlocked: %s; killed it", o.argv[0], desc);
		return 1;
	}
	return res.exit_status;
}
