/*
 * The view of the next pick (tracer_pick_view, view.c): the one type the
 * tracer fills and a policy that looks ahead reads (replay.h's budget
 * callback hands it to explore/ as it is).  Plain data: no tracer needed
 * to read or to build one (the unit tests of explore/ build their own).
 */
#ifndef AVT_TRACER_VIEW_H
#define AVT_TRACER_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The next pick, as it stands while thread self runs on alone: the
 * threads it may offer, in order, self among them (its next request taken
 * to be possible): each one offered as it is (lock 0), or, waiting to
 * acquire a mutex or spinlock that is free or held by self alone, offered
 * once that lock is free (held: self's holds on it now; its acquires and
 * releases change that); and the objects the others otherwise wait for or
 * ask for (an event of self on one, or on a lock above, may change who
 * can run).  Nothing is said (tracer_pick_view returns 0) when a thread
 * is starting or running, self is about to give way, or there are too
 * many.
 *
 * With the agent, a thread stopped at a mutex lock or unlock that the
 * agent could take after a hand-over has park (AVT_EV_ACQUIRE or
 * AVT_EV_RELEASE) and park_obj, and locks[] lists every lock held now
 * (owner TRACER_VIEW_READERS: read-held, count readers) when locks_known
 * (not too many): a look-ahead may then go on through the walks such
 * threads win (a hand-over script). */
#define TRACER_VIEW_THREADS 64
#define TRACER_VIEW_OBJS 192
#define TRACER_VIEW_LOCKS 64
#define TRACER_VIEW_READERS (UINT32_MAX - 1)
struct tracer_view {
	struct tracer_view_thread {
		uint32_t lid;
		uint32_t held;
		uint64_t lock;
		uint16_t park;
		uint64_t park_obj;
	} thr[TRACER_VIEW_THREADS];
	size_t n;
	uint64_t objs[TRACER_VIEW_OBJS];
	size_t nobjs;
	struct tracer_view_lock {
		uint64_t obj;
		uint32_t owner, count;
	} locks[TRACER_VIEW_LOCKS];
	size_t nlocks;
	bool locks_known;
};

#endif
