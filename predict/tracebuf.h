/*
 * Building a struct trace in memory, event by event, as the recorder
 * would write it: seq and tindex are assigned, thread records (parent,
 * nth_child) derived from start and create events.  The synthetic
 * benchmark generator and the unit tests use it; it checks nothing about
 * the events' meaning.
 *
 * Ownership: struct pr_tracebuf owns everything added until
 * pr_tracebuf_finish(), which moves it all into the returned trace (free
 * it with trace_free()) and frees the buffer.
 */
#ifndef AVT_PREDICT_TRACEBUF_H
#define AVT_PREDICT_TRACEBUF_H

#include <stdint.h>

#include "trace/trace.h"

struct pr_tracebuf;

struct pr_tracebuf *pr_tracebuf_new(void);
/* Frees an unfinished buffer and all it holds. */
void pr_tracebuf_free(struct pr_tracebuf *b);

/* Adds module id with the file path (its base name prefixes sites). */
int pr_tracebuf_module(struct pr_tracebuf *b, uint16_t id, const char *path);
/* Appends an event of thread `thread`; returns its seq or UINT64_MAX if out
 * of memory. */
uint64_t pr_tracebuf_event(struct pr_tracebuf *b, uint32_t thread, enum avt_kind kind,
			   uint64_t obj, uint64_t obj2, uint16_t site_mod, uint64_t site_off,
			   uint16_t flags);
/* Attaches a stack (frames[0] innermost) to event seq (add in seq order). */
int pr_tracebuf_stack(struct pr_tracebuf *b, uint64_t seq, const struct avt_frame *frames,
		      uint32_t depth);
int pr_tracebuf_note(struct pr_tracebuf *b, const char *text);
/* Events added so far. */
uint64_t pr_tracebuf_nevents(const struct pr_tracebuf *b);

/* The trace; NULL if out of memory.  The buffer is freed either way. */
struct trace *pr_tracebuf_finish(struct pr_tracebuf *b);

#endif
