/*
 * tree_runner: a home-made test runner, the shape of `make check`'s,
 * ctest's and meson test's: for each argument in turn it fork()s, the
 * child execv()s the program (no arguments), the runner waits for it and
 * prints PASS or FAIL.  The runner itself stays single-threaded; the
 * programs it runs (tree_bank, tree_bank_ok) are the multithreaded
 * processes avtrace must record (issue 28, tests/e2e/test_tree28.sh).
 *
 * Usage: tree_runner PROGRAM...
 * Exits 0 iff every program exited 0; 1 if any failed or could not be
 * run; 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* One program: its wait status, or -1 when it could not be run. */
static int run_one(const char *prog)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("tree_runner: fork");
		return -1;
	}
	if (pid == 0) {
		char *argv[] = {(char *)prog, NULL};
		execv(prog, argv);
		perror(prog);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tree_runner PROGRAM...\n");
		return 2;
	}
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		int st = run_one(argv[i]);
		int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (ok)
			printf("PASS %s\n", argv[i]);
		else if (st == -1)
			printf("FAIL %s (not run)\n", argv[i]);
		else if (WIFSIGNALED(st))
			printf("FAIL %s (signal %d)\n", argv[i], WTERMSIG(st));
		else
			printf("FAIL %s (exit %d)\n", argv[i], WEXITSTATUS(st));
		fflush(stdout);
		failed += !ok;
	}
	printf("%d of %d failed\n", failed, argc - 1);
	return failed ? 1 : 0;
}
