/*
 * pipe_handoff: a thread set aside in an unmodelled kernel wait, woken,
 * that computes for a while and then blocks again.  The worker reads a
 * byte from pipe `ph_go` (main writes it after a usleep, so under avtrace
 * the worker is asleep in read() first and is set aside as an unknown
 * kernel wait), writes a byte to `ph_ack`, computes for about 0.1 s with
 * no call at all and reads a byte from `ph_more`.  main writes `ph_go`,
 * waits for `ph_ack`, writes `ph_more` and joins the worker.
 *
 * Usage: pipe_handoff
 * Prints "ph_done=1"; exit 0.  Natively it takes about 0.1 s of CPU; a
 * recording must too (it used to hang for ever in the worker's second
 * read: its stale wait had the tracer stop watching it after 20 ms).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int ph_go[2], ph_ack[2], ph_more[2];
int ph_done;
char ph_byte;

/* From the ack to the blocking read nothing stops the thread: no call
 * but the two syscalls, and a frame whose address never escapes (so
 * access breakpoints leave it alone). */
__attribute__((noinline)) static int ack_compute_read(int ack, int more)
{
	unsigned long x = 1;
	if (write(ack, "a", 1) != 1)
		return 0;
	for (unsigned long i = 0; i < 100000000ul; i++)
		x = x * 31 + i;
	return read(more, &ph_byte, 1) == 1 && x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	char c;
	if (read(ph_go[0], &c, 1) != 1)
		return NULL;
	ph_done = ack_compute_read(ph_ack[1], ph_more[0]);
	return NULL;
}

int main(void)
{
	char c;
	if (pipe(ph_go) || pipe(ph_ack) || pipe(ph_more))
		return 2;
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	usleep(1000);
	if (write(ph_go[1], "g", 1) != 1 || read(ph_ack[0], &c, 1) != 1 ||
	    write(ph_more[1], "m", 1) != 1)
		return 2;
	pthread_join(t, NULL);
	printf("ph_done=%d\n", ph_done);
	return 0;
}
