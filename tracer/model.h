/*
 * The lock model's table (model.c): who holds which lock, how deep, how
 * many readers.  The table and its changes and plain queries need no
 * tracer: the tracer keeps one per process (tracer_int.h, with the
 * questions that read its threads: model_can_run and the rest), and
 * explore/'s look-ahead keeps one to follow the locks of the events it
 * runs ahead (explore/sim.h), so both take an event the same way.
 */
#ifndef AVT_TRACER_MODEL_H
#define AVT_TRACER_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lock model entry. */
struct mlock {
	uint64_t addr;
	uint32_t owner;    /* logical id of the writer/owner, or NO_THREAD */
	uint32_t count;    /* recursion depth of the owner */
	uint32_t readers;  /* rwlock read holders */
	bool used;
	bool is_cond;      /* a condition variable seen (for stats) */
	bool acquired;     /* acquired at least once (for stats) */
};
#define NO_THREAD UINT32_MAX

/* n: the entries in use (every lock ever looked up with model_lock). */
struct model {
	struct mlock *tab;
	size_t cap, n;
};

void model_init(struct model *m);
void model_release(struct model *m);
/* addr's entry, added (free) if new. */
struct mlock *model_lock(struct model *m, uint64_t addr);
/* addr's entry, NULL if it has none. */
struct mlock *model_find(struct model *m, uint64_t addr);

/* Changes, at commit.  lid acquires obj (reader: a read lock); returns
 * whether it was a recursive acquisition; *first: the lock's first. */
bool model_acquire(struct model *m, uint64_t obj, uint32_t lid, bool reader, bool *first);
/* lid releases obj: 0 released, 1 still held (recursive), -1 not held by
 * lid nor read-held (not an event). */
int model_release_lock(struct model *m, uint64_t obj, uint32_t lid);
/* A condition wait gives obj up (if lid owns it) in one go. */
void model_drop_owner(struct model *m, uint64_t obj, uint32_t lid);
/* obj is a condition variable: true the first time. */
bool model_note_cond(struct model *m, uint64_t obj);
/* Queries. */
bool model_owns(struct model *m, uint64_t obj, uint32_t lid);
uint32_t model_holder(struct model *m, uint64_t obj); /* NO_THREAD: free or unknown */

#endif
