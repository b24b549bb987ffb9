/*
 * Reads-from pairs of a run (guided's feedback, explore.c's counts).
 */
#ifndef AVT_EXPLORE_RF_H
#define AVT_EXPLORE_RF_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

/* The reads-from pairs of a run, as keys: for each event that reads an
 * object, the (thread, site) of the last event before it that wrote the
 * object, or none (the initial value), with the reader's (thread, site)
 * and the object.  Sorted and distinct, malloc'ed into *keys.  -1 after
 * avt_error(). */
int xp_rf_keys(const struct avt_event *ev, size_t n, uint64_t **keys, size_t *nkeys);

/* A pair's parts: an abstract event (thread, site), never 0 (0 is the
 * initial value), and the key of reader's read of obj from writer. */
uint64_t xp_rf_event(uint32_t thread, uint64_t site);
uint64_t xp_rf_key(uint64_t obj, uint64_t reader, uint64_t writer);
/* Sorts keys[0..n) and drops the repeats; their number. */
size_t xp_rf_sort(uint64_t *keys, size_t n);

#endif
