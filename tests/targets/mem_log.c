/*
 * mem_log: an unlocked buffered log append (atomicity violation).
 *
 *   append(msg):  i = log_index;  log_buf[i] = msg;  log_index = i + 1;
 *
 * Two writers call append() once each, with no lock.  The second writer
 * (T2) first does long busy work (DELAY), so in every natural run, native
 * or serialized by the recorder, T1's append is over before T2's begins:
 * log_index ends at 2, log_buf holds both messages, exit 0.  The order
 *   T1 reads log_index (0), T2 appends whole (slot 0, index 1),
 *   T1 writes slot 0 and index 1
 * overwrites T2's entry and loses one: main's check fails at the line
 * marked CHECK LINE (assert: SIGABRT in T0, in main).
 *
 * Built twice (tests/targets/mem/mem.h): bin/mem_log annotated, bin/mem_log_plain
 * without annotations (watch log_index, log_buf[0], log_buf[1]).
 * Each annotation shares its line with the access it announces, so the
 * annotated event (at the probe, before the access) and the watched one
 * (at the accessing instruction) name the same line.
 *
 * Usage: mem_log [DELAY=150000000]   (loop iterations)
 * Prints "log_index=N"; exits 0, or SIGABRT when an entry was lost.
 *
 * Annotated recording, per writer Tk (k = 1, 2; slot k-1):
 *   begin  (ATOMIC BEGIN)   read log_index (READ INDEX)
 *   write log_buf[k-1] (WRITE SLOT)   write log_index (WRITE INDEX)
 *   end (ATOMIC END)
 * Watched recording (--watch log_index,log_buf[0],log_buf[1]):
 *   read log_index, write log_buf[k-1], write log_index, per writer, and
 *   main's reads: log_index at PRINT LINE, all three at CHECK LINE.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem/mem.h"

#define SLOTS 8

long log_index;
long log_buf[SLOTS];
static long delay;

__attribute__((noinline)) static void append(long msg)
{
	long i;
	AVT_ATOMIC_BEGIN(); /* ATOMIC BEGIN */
	AVT_READ(&log_index); i = log_index; /* READ INDEX */
	AVT_WRITE(&log_buf[i]); log_buf[i] = msg; /* WRITE SLOT */
	AVT_WRITE(&log_index); log_index = i + 1; /* WRITE INDEX */
	AVT_ATOMIC_END(); /* ATOMIC END */
}

__attribute__((noinline)) static void *writer(void *arg)
{
	long msg = (long)arg;
	if (msg == 2)
		mem_busy(delay); /* the second writer comes late */
	append(msg);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;
	if (pthread_create(&a, NULL, writer, (void *)1L) != 0 ||
	    pthread_create(&b, NULL, writer, (void *)2L) != 0)
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("log_index=%ld\n", log_index); /* PRINT LINE */
	assert(log_index == 2 && log_buf[0] + log_buf[1] == 3); /* CHECK LINE */
	return 0;
}
