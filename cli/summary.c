/* avtrace replay --all, avtrace summary: many replays, one table. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "results.h"
#include "trace/log.h"
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

/* Prints the table of the replay results in DIR/replays; returns the test-style status:
 * 1 if any BUG or DEADLOCK, 0 otherwise, 2 if there is nothing to show. */
int summary_table(const char *dir)
{
	unsigned *nums;
	size_t n;
	if (list_numbered(dir, "replays", "json", &nums, &n) < 0 || !n) {
		avt_error("no replay results in '%s/replays' (run 'avtrace replay --all -d %s')", dir, dir);
		free(nums);
		return EXIT_USAGE;
	}
	unsigned counts[5] = { 0 };
	static const char *const names[] = { "PASS", "BUG", "INFEASIBLE", "DEADLOCK", "ERROR" };
	printf("  %-6s %-11s %-44s %s\n", "sched", "outcome", "schedule", "reason");
	for (size_t i = 0; i < n; i++) {
		char path[4200], what[256];
		json_error_t je;
		snprintf(path, sizeof path, "%s/replays/%04u.json", dir, nums[i]);
		json_t *o = json_load_file(path, 0, &je);
		const char *oc = o ? json_string_value(json_object_get(o, "outcome")) : NULL;
		const char *reason = o ? json_string_value(json_object_get(o, "reason")) : NULL;
		first_comment(dir, nums[i], what, sizeof what);
		printf("  %-6u %-11s %-44.44s %s\n", nums[i], oc ? oc : "unreadable", what,
		       reason ? reason : "");
		for (int k = 0; oc && k < 5; k++)
			if (!strcmp(oc, names[k]))
				counts[k]++;
		json_decref(o);
	}
	printf("%zu replays: %u pass, %u bug, %u deadlock, %u infeasible, %u error\n", n, counts[0],
	       counts[1], counts[3], counts[2], counts[4]);
	free(nums);
	return counts[1] || counts[3] ? 1 : 0;
}


/* One replay as its own process (the architecture's unit of work); its
 * text report goes to report (or nowhere). */
static pid_t spawn_replay(const char *dir, unsigned num, int cpu, const char *timeout,
			  const char *report)
{
	char snum[16], scpu[16];
	snprintf(snum, sizeof snum, "%u", num);
	snprintf(scpu, sizeof scpu, "%d", cpu);
	pid_t parent = getpid();
	pid_t p = fork();
	if (p == 0) {
		cli_worker_dies_with_parent(parent);
		if (!freopen(report ? report : "/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(2);
		if (report)
			execl("/proc/self/exe", "avtrace", "replay", "-d", dir, "--schedule", snum, "--cpu",
			      scpu, "--timeout", timeout, (char *)NULL);
		else
			execl("/proc/self/exe", "avtrace", "replay", "-d", dir, "--schedule", snum, "--cpu",
			      scpu, "--timeout", timeout, "--json", (char *)NULL);
		_exit(2);
	}
	return p;
}

int run_replays(const char *dir, const unsigned *nums, size_t n, unsigned jobs, const char *timeout,
		const char *report_dir)
{
	pid_t *slot = calloc(jobs, sizeof *slot);
	size_t next = 0, done = 0;
	cli_parent_phase(true);
	while (slot && done < n) {
		for (unsigned j = 0; j < jobs && next < n; j++)
			if (!slot[j]) {
				char rep[4200];
				snprintf(rep, sizeof rep, "%s/%04u.txt", report_dir ? report_dir : "", nums[next]);
				slot[j] = spawn_replay(dir, nums[next++], tracer_nth_cpu(j), timeout,
						       report_dir ? rep : NULL);
			}
		int st;
		pid_t p = wait(&st);
		if (p < 0 && errno != EINTR)
			break;
		for (unsigned j = 0; j < jobs; j++)
			if (slot[j] == p) {
				slot[j] = 0;
				done++;
				if (isatty(2))
					fprintf(stderr, "\ravtrace: %zu/%zu replays done", done, n);
			}
	}
	cli_parent_phase(false);
	if (isatty(2) && n)
		fputc('\n', stderr);
	int rc = slot ? 0 : -1;
	free(slot);
	return rc;
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
	run_replays(dir, nums, n, jobs, timeout, NULL);
	free(nums);
	return summary_table(dir);
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
