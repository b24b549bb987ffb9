/*
 * int3_floor: the bare cost of one ptrace breakpoint stop on this machine,
 * the floor under every event of avtrace's ptrace path (bench/agent).
 *
 * A child executes `int3` in a loop; the parent (its tracer) takes each
 * SIGTRAP stop with waitpid() and resumes it with PTRACE_CONT.  Both are
 * pinned to the CPU the program starts on, as avtrace pins itself and
 * its target.  Prints "int3_floor: N stops, X us/stop" (best of 3 rounds).
 *
 * Usage: int3_floor [N=100000]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double round_us(long n)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("int3_floor: fork");
		exit(2);
	}
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		for (long i = 0; i < n; i++)
			__asm__ volatile("int3");
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st)) {
		fprintf(stderr, "int3_floor: the child did not stop\n");
		exit(2);
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	double t0 = now();
	long stops = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, 0) < 0 || waitpid(pid, &st, 0) < 0)
			break;
		if (!WIFSTOPPED(st))
			break;
		stops++;
	}
	double t = now() - t0;
	if (stops != n) {
		fprintf(stderr, "int3_floor: %ld stops, expected %ld\n", stops, n);
		exit(2);
	}
	return t * 1e6 / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	if (n <= 0) {
		fprintf(stderr, "usage: int3_floor [N=100000]\n");
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	sched_setaffinity(0, sizeof set, &set);
	double best = 0;
	for (int r = 0; r < 3; r++) {
		double us = round_us(n);
		if (!r || us < best)
			best = us;
	}
	printf("int3_floor: %ld stops, %.3f us/stop\n", n, best);
	return 0;
}
