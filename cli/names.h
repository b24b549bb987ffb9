/*
 * Names for what the CLI prints: sites (file:line, function) and objects
 * (variable names) of a recorded trace, through the symbolizer, cached.
 * Ownership: struct names owns its symbolizer session; the trace stays the
 * caller's and must outlive it.
 */
#ifndef AVT_CLI_NAMES_H
#define AVT_CLI_NAMES_H

#include <stddef.h>

#include "trace/trace.h"

struct sym;
/* An access a function made to its own frame: its frame names addresses
 * near ea ("main's stack: e.pendingIo"). */
struct names_frame {
	uint64_t ea, site_off, seq;
	uint16_t site_mod;
};

struct names {
	struct sym *sym;        /* every module: sites (module ids are unique) */
	struct sym **gen;       /* per exec'd image: variable names */
	uint64_t *gen_start;    /* first event seq of each image */
	size_t ngen, cur;
	uint64_t seq;           /* the event names are asked for (names_at) */
	size_t *heap;           /* indexes of allocations, sorted by address */
	size_t nheap;
	uint64_t *heap_end;     /* after_seq of each allocation's free, or UINT64_MAX */
	struct names_frame *frames; /* own-stack accesses through the frame, by ea */
	size_t nframes;
	const struct trace *t;
};

int names_open(struct names *n, const struct trace *t);
void names_close(struct names *n);
/* Names after this point are those of the image event seq ran in (a
 * program that execs reuses addresses for other variables). */
void names_at(struct names *n, uint64_t seq);
/* Site of an event: "file.c:LINE" or "module+0xOFF"; *func set (or NULL). */
const char *names_site(struct names *n, const struct avt_event *ev, char *buf, size_t len,
		       const char **func);
/* Same for a module id + offset that is a return address (stack frames). */
const char *names_frame(struct names *n, unsigned mod, uint64_t off, int is_return,
			char *buf, size_t len, const char **func);
/* Variable name of a data address, or NULL. */
const char *names_obj(struct names *n, uint64_t addr, char *buf, size_t len);
/* "counter_lock" or "0x4c1040": always something printable. */
const char *names_obj_or_addr(struct names *n, uint64_t addr, char *buf, size_t len);

/* Loads DIR/trace.avt; NULL after an error message. */
struct trace *load_trace(const char *dir);

#endif
