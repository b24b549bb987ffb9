/*
 * The "yield T n" steps of an explored run (replay/policy.c, under a
 * picker): a thread's picks in a row that made no event, noted where the
 * picker moves on to another thread.
 */
#ifndef AVTRACE_REPLAY_YIELDS_H
#define AVTRACE_REPLAY_YIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct yields {
	uint32_t last;    /* thread picked last (UINT32_MAX: none) */
	size_t nev;       /* the run's events when it was picked */
	uint32_t pending; /* its picks in a row that made no event */
};

void yields_init(struct yields *y);

/* A pick of thread lid with nev events made so far.  cont: the last
 * thread's turn was ended by the clock in a computation, which is no
 * decision (replay/policy.c's computing()).  Returns the count n of a
 * "yield T<*of> n" step that goes before this pick, or 0 for none. */
uint32_t yields_pick(struct yields *y, uint32_t lid, bool cont, size_t nev, uint32_t *of);

#endif
