/*
 * The trace file: a versioned, append-only, buffered log of records.
 *
 * Layout (docs/trace-format.md): a 16-byte header (magic "AVTRACE\0",
 * u32 version, u32 header size) followed by records, each a u16 type, u16
 * zero, u32 payload length and the payload.  A reader stops cleanly at the
 * first incomplete record, so a trace cut short by a crash is readable up to
 * the last whole record.
 *
 * Ownership: struct trace_writer owns its FILE and buffer; struct trace
 * (the reader's result) owns every array and string in it; trace_free()
 * frees it all.
 */
#ifndef AVT_TRACE_TRACE_H
#define AVT_TRACE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"

#define AVT_TRACE_MAGIC "AVTRACE"
#define AVT_TRACE_VERSION 3u
#define AVT_TRACE_MIN_VERSION 2u /* version 2: the same records, no events record */

enum avt_rec_type {
	AVT_REC_MODULE = 1, /* struct avt_module_rec + path bytes */
	AVT_REC_THREAD = 2, /* struct avt_thread_rec */
	AVT_REC_EVENT = 3,  /* struct avt_event */
	AVT_REC_STACK = 4,  /* struct avt_stack_rec + depth x (u16 mod, u64 off) */
	AVT_REC_NOTE = 5,   /* free text: a warning or fact the recorder wants kept */
	AVT_REC_ALLOC = 6,  /* struct avt_alloc_rec: a heap allocation or free */
	AVT_REC_DISARM = 7, /* struct avt_disarm_rec: an access breakpoint removed */
	AVT_REC_SIGNAL = 8, /* struct avt_signal_rec: a signal delivered to a handler */
	AVT_REC_EVENTS = 9, /* events and allocs, compact (docs/trace-format.md) */
};

enum avt_alloc_kind { AVT_ALLOC_MALLOC = 1, AVT_ALLOC_CALLOC, AVT_ALLOC_REALLOC, AVT_ALLOC_FREE };

/* A heap allocation (or free) by the program itself, for naming heap
 * objects by their allocation site.  Not an event: schedules do not count
 * it and replay does not match it. */
struct avt_alloc_rec {
	uint64_t after_seq; /* events before it */
	uint64_t addr;      /* the block (the freed one for AVT_ALLOC_FREE) */
	uint64_t size;      /* 0 for a free */
	uint64_t site_off;  /* the call's return address */
	uint32_t thread;
	uint16_t site_mod;
	uint16_t kind;      /* enum avt_alloc_kind */
};

/* An access breakpoint removed during the recording because every access
 * it saw was private (one thread's own memory): after its hits-th hit,
 * replay and explore remove it too, so their events line up with the
 * recording's.  Not an event. */
struct avt_disarm_rec {
	uint64_t after_seq; /* events before it */
	uint64_t site_off;  /* the instruction */
	uint64_t hits;      /* removed right after this many hits */
	uint16_t site_mod;
	uint16_t pad[3];
};

/* An asynchronous signal (a timer's, another process's or thread's: not
 * a fault) delivered to a handler of thread `thread` after its first
 * `tindex` events.  Where it lands depends on the clock, so a replay that
 * follows a schedule holds such signals and delivers each at the point
 * the recording has (tracer/signals.c).  Not an event. */
struct avt_signal_rec {
	uint64_t after_seq; /* events before it */
	uint32_t thread;
	uint32_t tindex;    /* the thread's events before it */
	uint16_t signo;
	uint16_t pad[3];
};

/* A loaded module (executable or shared library) sites are relative to. */
struct avt_module_rec {
	uint64_t base;     /* load bias: runtime address = base + offset */
	uint64_t lo, hi;   /* mapped address range */
	uint16_t id;
	uint16_t build_id_len;
	uint8_t build_id[20];
	/* followed by the path, not NUL-terminated, to the end of the payload */
};

struct avt_thread_rec {
	uint32_t thread;    /* logical id */
	uint32_t parent;    /* logical id of the creator (UINT32_MAX for T0) */
	uint32_t nth_child; /* this is the parent's nth_child-th thread (from 0) */
	uint32_t os_tid;    /* kernel tid in the recorded run (informational) */
};

/* A call stack attached to an event (fatal signals, --stacks).
 * frames[0] is the innermost.  For a fatal signal frames[0] is the pc and
 * the rest are return addresses; for a synchronization event every frame
 * is a return address (frames[0] = the event's site).  inv identifies the
 * invocation the frame belongs to: two events of one thread whose frame at
 * the same depth (counted from the outermost) has the same nonzero inv are
 * inside the same call of that function; 0 means unknown. */
struct avt_frame {
	uint64_t off;      /* offset in module mod */
	uint16_t mod;      /* module id or AVT_MOD_NONE (off is absolute) */
	uint16_t flags;    /* reserved, 0 */
	uint32_t inv;      /* invocation serial (per thread), 0 if unknown */
};

struct avt_stack_rec {
	uint64_t seq;      /* the event it belongs to */
	uint32_t depth;
	uint32_t pad;
	/* followed by depth x struct avt_frame */
};

struct avt_stack {
	uint64_t seq;
	uint32_t depth;
	struct avt_frame *frames;
};

struct avt_module {
	struct avt_module_rec rec;
	char *path;
	uint64_t after_seq; /* events before it in the file (set by the reader):
	                       after an exec, tells which image a module is of */
};

struct avt_note {
	uint64_t after_seq; /* events before it: its position in the log */
	char *text;
};

/* A whole trace in memory (what trace_read returns). */
struct trace {
	struct avt_event *ev;
	size_t nev;
	struct avt_module *mod;
	size_t nmod;
	struct avt_thread_rec *thr;
	size_t nthr;
	struct avt_note *notes;
	size_t nnotes;
	struct avt_stack *stacks; /* in seq order */
	size_t nstacks;
	struct avt_alloc_rec *allocs; /* in trace order */
	size_t nallocs;
	struct avt_disarm_rec *disarms; /* in trace order */
	size_t ndisarms;
	struct avt_signal_rec *signals; /* in trace order */
	size_t nsignals;
	int truncated; /* the file ended inside a record (e.g. a crash) */
};

/* Bounds the reader enforces: thread ids (so n x n vector clocks stay
 * allocatable) and frames per stack record. */
#define AVT_TRACE_MAX_THREADS 65536u
#define AVT_TRACE_MAX_DEPTH 1024u

/* Reading.  On error returns NULL and writes a message (without the
 * "avtrace: " prefix) into err, naming the file and the record's offset.
 * Only a regular file is read.  A trace comes from anywhere, so every
 * invariant consumers index arrays by is checked here, once:
 *  - ev[i].seq == i; kind is a known kind (not AVT_EV_NONE);
 *  - ev[i].tindex counts the thread's events from 0, in order;
 *  - thread ids (events, thread records, the thread objects of start /
 *    create / join, which may also be UINT32_MAX for "none") are below
 *    AVT_TRACE_MAX_THREADS and, over the file, exactly 0..n-1: so
 *    trace_nthreads() is at most the number of records;
 *  - a stack follows its event (seq < events before it), stacks are in
 *    strictly increasing seq order, at most AVT_TRACE_MAX_DEPTH frames;
 *  - notes' after_seq is non-decreasing and at most the events before it;
 *    allocation records have a known kind. */
struct trace *trace_read(const char *path, char *err, size_t errlen);
void trace_free(struct trace *t);
const struct avt_module *trace_module(const struct trace *t, unsigned id);
const struct avt_thread_rec *trace_thread(const struct trace *t, unsigned id);
/* Number of threads (max logical id + 1). */
unsigned trace_nthreads(const struct trace *t);

/* Writing. */
struct trace_writer;
struct trace_writer *trace_writer_open(const char *path, char *err, size_t errlen);
int trace_write_module(struct trace_writer *w, const struct avt_module_rec *m,
		       const char *path);
int trace_write_thread(struct trace_writer *w, const struct avt_thread_rec *th);
int trace_write_event(struct trace_writer *w, const struct avt_event *ev);
int trace_write_note(struct trace_writer *w, const char *text);
int trace_write_alloc(struct trace_writer *w, const struct avt_alloc_rec *a);
int trace_write_disarm(struct trace_writer *w, const struct avt_disarm_rec *d);
/* (after_seq: the events written before it) */
int trace_write_signal(struct trace_writer *w, const struct avt_signal_rec *s);
int trace_write_stack(struct trace_writer *w, uint64_t seq, const struct avt_frame *f,
		      uint32_t depth);
/* The stack recorded for event seq, or NULL. */
const struct avt_stack *trace_stack(const struct trace *t, uint64_t seq);
int trace_writer_flush(struct trace_writer *w);
/* Flushes and closes; returns -1 if any write failed. */
int trace_writer_close(struct trace_writer *w);
uint64_t trace_writer_nevents(const struct trace_writer *w);

#endif
