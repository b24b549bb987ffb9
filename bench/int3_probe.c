/*
 * The floor of an access event: a child executes int3 N times in a loop
 * under PTRACE_CONT, both pinned to one CPU; prints microseconds per stop.
 * Built and run by bench/access.  Usage: int3_probe [N=200000] [CPU=0]
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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		for (long i = 0; i < n; i++)
			__asm__ volatile("int3");
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	struct timespec t0, t1;
	long stops = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ptrace(PTRACE_CONT, pid, 0, 0);
	while (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st)) {
		stops++;
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%.3f\n", stops ? s * 1e6 / (double)stops : 0.0);
	return 0;
}
