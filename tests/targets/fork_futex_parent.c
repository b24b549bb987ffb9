/*
 * fork_futex_parent: the parent makes a futex call of its own after it
 * forked a multithreaded child, and tells the child what it returned
 * (through shared memory); the child exits 0 iff it returned 0.
 *
 * Under avtrace --futex the child is recorded alone by its fork path
 * (docs/process-tree.md): the parent, re-run to fork it, is let go once it
 * has.  It keeps avtrace's futex filter, whose calls fail with ENOSYS when
 * nobody traces it (tracer/futex.c): avtrace keeps it traced (tree.c).
 *
 * Usage: fork_futex_parent
 * Prints "child status N"; exits 0 iff the child exited 0.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	atomic_int reported;  /* the parent's call is made */
	long rc;              /* what it returned */
	int err;              /* its errno */
};

static void *nothing(void *arg)
{
	return arg;
}

/* The child: a second thread (so it is recorded alone), then the
 * parent's answer. */
static int child(struct shared *sh)
{
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		return 2;
	while (!atomic_load(&sh->reported))
		sched_yield();
	if (sh->rc != 0)
		fprintf(stderr, "the parent's futex returned %ld (errno %d)\n", sh->rc, sh->err);
	return sh->rc == 0 ? 0 : 1;
}

int main(void)
{
	static uint32_t word;
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	pid_t p = fork();
	if (p == 0)
		_exit(child(sh));
	/* a wake of nobody: 0 natively */
	sh->rc = syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	sh->err = sh->rc < 0 ? errno : 0;
	atomic_store(&sh->reported, 1);
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return 2;
	printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
