/*
 * tree_spawn: tree_runner with posix_spawn() instead of fork()+execv(),
 * as real runners do (glibc implements it with clone(CLONE_VM|CLONE_VFORK)
 * and exec in the child: avtrace must follow a vfork-like child too).
 * For each argument in turn it spawns the program (no arguments), waits
 * for it and prints PASS or FAIL (issue 28, tests/e2e/test_tree28.sh).
 *
 * Usage: tree_spawn PROGRAM...
 * Exits 0 iff every program exited 0; 1 if any failed or could not be
 * spawned; 2 on a usage error.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* One program: its wait status, or -1 when it could not be spawned. */
static int spawn_one(const char *prog)
{
	char *argv[] = {(char *)prog, NULL};
	pid_t pid;
	int err = posix_spawn(&pid, prog, NULL, NULL, argv, environ);
	if (err != 0) {
		fprintf(stderr, "tree_spawn: %s: %s\n", prog, strerror(err));
		return -1;
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
		fprintf(stderr, "usage: tree_spawn PROGRAM...\n");
		return 2;
	}
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		int st = spawn_one(argv[i]);
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
