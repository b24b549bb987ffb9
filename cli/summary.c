/* avtrace replay --all, avtrace summary: many replays, one table. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "results.h"
#include "trace/log.h"
#include "trace/meta.h"
#include "trace/schedule.h"
#include "tracer/tracer.h"

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* Numbers NNNN of DIR/SUB/NNNN.EXT, sorted; -1 if SUB is missing. */
static int list_numbered(const char *dir, const char *sub, const char *ext, unsigned **out,
			 size_t *n)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, sub);
	DIR *d = opendir(path);
	*out = NULL;
	*n = 0;
	if (!d)
		return -1;
	struct dirent *e;
	size_t cap = 0;
	while ((e = readdir(d))) {
		unsigned num;
		char tail[16];
		if (sscanf(e->d_name, "%4u.%15s", &num, tail) != 2 || strcmp(tail, ext) ||
		    strlen(e->d_name) != 5 + strlen(ext))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			unsigned *nn = realloc(*out, cap * sizeof *nn);
			if (!nn)
				break;
			*out = nn;
		}
		(*out)[(*n)++] = num;
	}
	closedir(d);
	qsort(*out, *n, sizeof **out, cmp_uint);
	return 0;
}

static void first_comment(const char *dir, unsigned num, char *buf, size_t len)
{
	char path[4200], err[256];
	snprintf(path, sizeof path, "%s/schedules/%04u.sched", dir, num);
	struct schedule *s = schedule_read(path, err, sizeof err);
	buf[0] = 0;
	if (s && s->ncomments)
		snprintf(buf, len, "%s", s->comments[0]);
	schedule_free(s);
}

/* Prints the table of the replay results in DIR/replays (from the results
 * model); returns the test-style status: 1 if any BUG or DEADLOCK, 0
 * otherwise, 2 if there is nothing to show. */
int summary_table(const char *dir)
{
	unsigned *nums;
	size_t n;
	if (list_numbered(dir, "replays", "json", &nums, &n) < 0 || !n) {
		avt_error("no replay results in '%s/replays' (run 'avtrace replay --all -d %s')", dir, dir);
		free(nums);
		return EXIT_USAGE;
	}
	struct results r;
	results_init(&r, dir);
	for (size_t i = 0; i < n; i++)
		results_add_replay(&r, nums[i]);
	free(nums);
	unsigned counts[5] = { 0 };
	static const char *const names[] = { "PASS", "BUG", "INFEASIBLE", "DEADLOCK", "ERROR" };
	printf("  %-6s %-11s %-44s %s\n", "sched", "outcome", "schedule", "reason");
	for (size_t i = 0; i < r.nrows; i++) {
		const json_t *o = r.rows[i].replay;
		char what[256];
		const char *oc = o ? json_string_value(json_object_get(o, "outcome")) : NULL;
		const char *reason = o ? json_string_value(json_object_get(o, "reason")) : NULL;
		first_comment(dir, r.rows[i].schedule, what, sizeof what);
		printf("  %-6u %-11s %-44.44s %s\n", r.rows[i].schedule, oc ? oc : "unreadable", what,
		       reason ? reason : "");
		for (int k = 0; oc && k < 5; k++)
			if (!strcmp(oc, names[k]))
				counts[k]++;
	}
	printf("%zu replays: %u pass, %u bug, %u deadlock, %u infeasible, %u error\n", r.nrows, counts[0],
	       counts[1], counts[3], counts[2], counts[4]);
	int rc = r.nbugs ? 1 : 0;
	results_release(&r);
	return rc;
}

/* One replay as its own process (the architecture's unit of work); with
 * text, its text report goes to DIR/replays/NNNN.txt, else nowhere (its
 * results are DIR/replays/NNNN.json either way).  Its messages go to err
 * (worker_errors), or nowhere when err < 0. */
static pid_t spawn_replay(const char *dir, unsigned num, int cpu, const char *timeout, bool text,
			  int err)
{
	char snum[16], scpu[16], report[4200];
	snprintf(snum, sizeof snum, "%u", num);
	snprintf(scpu, sizeof scpu, "%d", cpu);
	snprintf(report, sizeof report, "%s/replays/%04u.txt", dir, num);
	pid_t parent = getpid();
	fflush(NULL); /* else the child's freopen writes the parent's buffer again */
	pid_t p = fork();
	if (p == 0) {
		cli_worker_dies_with_parent(parent);
		if (!freopen(text ? report : "/dev/null", "w", stdout) ||
		    (err >= 0 ? dup2(err, STDERR_FILENO) < 0 : !freopen("/dev/null", "w", stderr)))
			_exit(2);
		execl("/proc/self/exe", "avtrace", "replay", "-d", dir, "--schedule", snum, "--cpu", scpu,
		      "--timeout", timeout, text ? (char *)NULL : "--json", (char *)NULL);
		_exit(2);
	}
	return p;
}

/* The replays under way, jobs at a time, and which have ended. */
struct replay_pool {
	pid_t *slot;   /* [jobs]: the worker in each CPU's slot, 0 if none */
	int *err;      /* [jobs]: its messages (a memfd: a full disk has room
	                  for them), -1 if none */
	size_t *which; /* [jobs]: its index in nums */
	bool *ended;   /* [n] */
	size_t next, done, told;
};

/* Starts replays in the free slots. */
static void pool_fill(struct replay_pool *p, const struct replay_batch *b)
{
	for (unsigned j = 0; j < b->jobs && p->next < b->n; j++)
		if (!p->slot[j]) {
			p->which[j] = p->next;
			if (p->err[j] < 0 || ftruncate(p->err[j], 0) < 0 ||
			    lseek(p->err[j], 0, SEEK_SET) < 0) {
				if (p->err[j] >= 0)
					close(p->err[j]);
				p->err[j] = memfd_create("avtrace-replay-err", MFD_CLOEXEC);
			}
			p->slot[j] = spawn_replay(b->dir, b->nums[p->next++], tracer_nth_cpu(j), b->timeout,
						  b->text, p->err[j]);
		}
}

/* A replay worker exited 2: the results it could not write are an error of
 * the whole batch (its other messages, of a replay that could not run, are
 * its outcome "error" in its results).  fd: its stderr (a memfd). */
void cli_worker_errors(int fd)
{
	char buf[4096];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *line = buf, *end; *line; line = end + (*end != 0)) {
		end = line + strcspn(line, "\n");
		*end = 0;
		if (!strncmp(line, "avtrace: cannot write", 21))
			avt_write_error("%s", line + 9);
	}
}

/* Worker pid ended (status st): its slot is free; tells b->done of the
 * replays that have ended with every one before them. */
static void pool_reap(struct replay_pool *p, const struct replay_batch *b, pid_t pid, int st)
{
	for (unsigned j = 0; j < b->jobs; j++) {
		if (p->slot[j] != pid || !pid)
			continue;
		p->slot[j] = 0;
		if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_USAGE)
			cli_worker_errors(p->err[j]);
		p->ended[p->which[j]] = true;
		p->done++;
		if (isatty(2) && !b->done) /* with done, the caller shows them */
			fprintf(stderr, "\ravtrace: %zu/%zu replays done", p->done, b->n);
	}
	while (p->told < b->n && p->ended[p->told] && !tracer_interrupted()) {
		fflush(stdout);
		if (b->done)
			b->done(b->ctx, p->told);
		p->told++;
	}
}

/* A stop signal: the replays under way end now (their programs die with
 * them, PTRACE_O_EXITKILL); what they did not finish is not told, and
 * their text reports go. */
static void pool_stop(struct replay_pool *p, const struct replay_batch *b)
{
	char path[4200];
	for (unsigned j = 0; j < b->jobs; j++)
		if (p->slot[j]) {
			kill(p->slot[j], SIGKILL);
			waitpid(p->slot[j], NULL, 0);
			p->slot[j] = 0;
			snprintf(path, sizeof path, "%s/replays/%04u.txt", b->dir, b->nums[p->which[j]]);
			if (b->text)
				remove(path);
		}
}

int run_replays(const struct replay_batch *b)
{
	struct replay_pool p = { .slot = calloc(b->jobs, sizeof *p.slot),
				 .which = calloc(b->jobs, sizeof *p.which),
				 .err = malloc(b->jobs * sizeof *p.err),
				 .ended = calloc(b->n ? b->n : 1, sizeof *p.ended) };
	int rc = p.slot && p.which && p.ended && p.err ? 0 : -1;
	for (unsigned j = 0; p.err && j < b->jobs; j++)
		p.err[j] = -1;
	char rdir[4200];
	snprintf(rdir, sizeof rdir, "%s/replays", b->dir);
	mkdir(rdir, 0777); /* where the text reports go (replay makes it too) */
	/* a stop signal is only noted (no parent phase): the replays that
	 * ended are kept, and the caller tells what they found.  Polled, so
	 * that a signal just before a wait cannot leave it waiting for a
	 * replay that never ends. */
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	while (rc == 0 && p.done < b->n && !tracer_interrupted()) {
		pool_fill(&p, b);
		int st = 0;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid < 0 && errno != EINTR)
			rc = -1;
		if (pid == 0)
			nanosleep(&tick, NULL);
		pool_reap(&p, b, pid > 0 ? pid : 0, st);
	}
	if (p.slot)
		pool_stop(&p, b);
	for (size_t i = p.told; b->text && b->done && p.ended && i < b->n; i++) {
		char path[4200]; /* ended after a stop, never told: no report */
		snprintf(path, sizeof path, "%s/replays/%04u.txt", b->dir, b->nums[i]);
		if (p.ended[i])
			remove(path);
	}
	if (isatty(2) && b->n && !b->done)
		fputc('\n', stderr);
	free(p.slot);
	free(p.which);
	for (unsigned j = 0; p.err && j < b->jobs; j++)
		if (p.err[j] >= 0)
			close(p.err[j]);
	free(p.err);
	free(p.ended);
	return rc == 0 && tracer_interrupted() ? tracer_interrupted() : rc;
}

/* Runs every schedule of DIR, jobs at a time, each on its own CPU. */
int replay_all(const char *dir, unsigned jobs, const char *timeout)
{
	unsigned *nums;
	size_t n;
	if (list_numbered(dir, "schedules", "sched", &nums, &n) < 0 || !n) {
		avt_error("no schedules in '%s/schedules' (record or predict first)", dir);
		free(nums);
		return EXIT_USAGE;
	}
	struct replay_batch b = { .dir = dir, .nums = nums, .n = n, .jobs = jobs, .timeout = timeout };
	int sig = run_replays(&b);
	free(nums);
	int rc = summary_table(dir);
	return sig > 0 ? 128 + sig : rc;
}

int cmd_summary(int argc, char **argv)
{
	const char *dir = "avtrace-out", *sarif = NULL;
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-d") || !strcmp(argv[i], "--dir")) && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--sarif") && i + 1 < argc)
			sarif = argv[++i];
		else if (!strcmp(argv[i], "--help")) {
			puts("usage: avtrace summary [-d DIR] [--sarif FILE]\n\n"
			     "Merges DIR/replays/*.json (written by 'avtrace replay', one per schedule,\n"
			     "possibly by many machines sharing DIR) into one table.  Exit status 1 if a\n"
			     "bug or deadlock was reproduced, 0 if not, 2 on error.\n\n"
			     "options:\n"
			     "  -d, --dir DIR     recording directory (default ./avtrace-out)\n"
			     "      --sarif FILE  also write each distinct reproduced bug as SARIF 2.1.0\n"
			     "                    to FILE (docs/json-output.md)");
			return 0;
		} else
			return usage_error("summary", "unexpected argument '%s'", argv[i]);
	}
	int rc = summary_table(dir);
	if (sarif && rc != EXIT_USAGE) {
		struct results r;
		if (results_load(&r, dir) < 0)
			return EXIT_USAGE;
		if (sarif_write(&r, sarif) < 0)
			rc = EXIT_USAGE;
		results_release(&r);
	}
	return rc;
}
