/*
 * fail_once: a failure no schedule controls.  Each run reads a counter
 * from the file COUNTER (missing: 0), writes it back plus one, and aborts
 * when it read 1: the second run of the program fails whatever its thread
 * order, every other run passes.  Two workers take work_lock once each,
 * so that there are thread orders to explore.
 *
 * Recorded first (counter 0: it passes), the program's next run fails and
 * the replay that checks that run (counter 2 or more) does not: it parts
 * from the failed run where that one aborted.  An explored failure that
 * its replay does not confirm.
 *
 * Usage: fail_once COUNTER
 */
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static int work;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&work_lock);
	work++;
	pthread_mutex_unlock(&work_lock);
	return NULL;
}

/* This run's number (the counter before it), the counter advanced; by
 * read(2) and write(2): no stdio buffer, whose allocation would make runs
 * that find the file differ from the one that did not. */
static int count_run(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = 0;
		close(fd);
	}
	int count = atoi(buf);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		int len = snprintf(buf, sizeof buf, "%d\n", count + 1);
		if (write(fd, buf, (size_t)len) != len)
			count = -1;
		close(fd);
	}
	return count;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	if (argc < 2)
		return 2;
	int count = count_run(argv[1]);
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (count == 1)
		abort(); /* FAIL LINE */
	printf("work=%d\n", work);
	return 0;
}
