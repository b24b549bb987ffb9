/*
 * mem_dcl: broken double-checked initialization.
 *
 *   get_instance():  if (!instance) { lock; if (!instance) {
 *                        o = calloc(...); instance = o;   <- published first
 *                        o->value = 42; o->ready = 1;     <- then filled in
 *                    } unlock }  return instance;
 *   reader():        p = get_instance(); assert(p->ready == 1)  (no lock)
 *
 * Two readers.  The second (T2) first does long busy work (DELAY), so in
 * every natural run, native or serialized by the recorder, T1 has created
 * and filled the instance before T2 looks: T2 sees it, skips the lock and
 * finds ready == 1: exit 0.  The order
 *   T1 publishes instance, T2 checks instance (set) and reads ready (0)
 * fails T2's check at the line marked USE LINE (assert: SIGABRT in T2, in
 * `reader`).  Exposing it needs a stop between T1's store to instance and
 * its store to ready, and T2 loading instance then ready there.  After
 * "run T1 k" in a schedule, T1 has done the access of its k-th event and
 * waits before its next one (an annotation is let past its probe, a
 * watchpoint reports after the access), so T1's write of instance
 * (PUBLISH LINE) ends T1's step, annotated or watched.
 *
 * Built twice (tests/targets/mem/mem.h): bin/mem_dcl annotated,
 * bin/mem_dcl_plain without annotations: watch instance, and ready by the
 * address of the heap object, which main prints (with ASLR off it is the
 * same in every run): --watch instance,0xADDR:4.
 *
 * Usage: mem_dcl [DELAY=150000000]   (loop iterations)
 * Prints "instance=0x... ready-at=0x... sum=84"; exits 0, or SIGABRT.
 *
 * Annotated recording:
 *   T1: read instance (CHECK LINE), acquire init_lock (LOCK LINE),
 *       read instance (RECHECK LINE), begin (ATOMIC BEGIN), write instance
 *       (PUBLISH LINE), write ready (INIT READY), end (ATOMIC END),
 *       release init_lock (UNLOCK LINE), read instance (RETURN LINE),
 *       read ready (USE LINE), read value (VALUE LINE); the heap object is
 *       named by its allocation site (ALLOC LINE), ready at offset 4
 *   T2: read instance (CHECK LINE), read instance (RETURN LINE),
 *       read ready (USE LINE), read value (VALUE LINE)
 * Watched recording (--watch instance,0xADDR:4): the same less the
 *   annotation-only begin/end and value reads, plus a read of ready inside
 *   calloc (glibc clearing the new object) and main's reads of instance.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mem/mem.h"

struct singleton {
	int value;
	int ready;
};

struct singleton *instance;
pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static long delay;

__attribute__((noinline)) static struct singleton *get_instance(void)
{
	struct singleton *o;
	AVT_READ(&instance); if (!instance) { /* CHECK LINE */
		pthread_mutex_lock(&init_lock); /* LOCK LINE */
		AVT_READ(&instance); if (!instance) { /* RECHECK LINE */
			o = calloc(1, sizeof *o); /* ALLOC LINE */
			if (!o)
				abort();
			AVT_ATOMIC_BEGIN(); /* ATOMIC BEGIN */
			AVT_WRITE(&instance); instance = o; /* PUBLISH LINE */
			o->value = 42;
			AVT_WRITE(&o->ready); o->ready = 1; /* INIT READY */
			AVT_ATOMIC_END(); /* ATOMIC END */
		}
		pthread_mutex_unlock(&init_lock); /* UNLOCK LINE */
	}
	AVT_READ(&instance); return instance; /* RETURN LINE */
}

__attribute__((noinline)) static void *reader(void *arg)
{
	struct singleton *p;
	int v;
	if ((intptr_t)arg == 2)
		mem_busy(delay); /* the second reader comes late */
	p = get_instance();
	AVT_READ(&p->ready); assert(p->ready == 1); /* USE LINE */
	AVT_READ(&p->value); v = p->value; /* VALUE LINE */
	return (void *)(intptr_t)v;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	void *va, *vb;
	delay = argc > 1 ? strtol(argv[1], NULL, 10) : 150000000;
	if (pthread_create(&a, NULL, reader, (void *)1) != 0 ||
	    pthread_create(&b, NULL, reader, (void *)2) != 0)
		return 2;
	pthread_join(a, &va);
	pthread_join(b, &vb);
	printf("instance=%p ready-at=%p sum=%d\n", (void *)instance, (void *)&instance->ready,
	       (int)((intptr_t)va + (intptr_t)vb));
	return 0;
}
