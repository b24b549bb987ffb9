/*
 * Sync specs (docs/sync-spec.md): a small text format that says which
 * functions of a library (or of the program) are locks, condition
 * variables, once-initialisations or thread creation, so the tracer hooks
 * them like the pthread functions.  Parsed here; hooks.c plants them.
 */
#ifndef AVT_TRACER_SYNCSPEC_H
#define AVT_TRACER_SYNCSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sync_op {
	SYNC_ACQUIRE, SYNC_RELEASE, SYNC_TRY_ACQUIRE,
	SYNC_READ_ACQUIRE, SYNC_READ_RELEASE, SYNC_READ_TRY_ACQUIRE,
	SYNC_WRITE_ACQUIRE, SYNC_WRITE_RELEASE, SYNC_WRITE_TRY_ACQUIRE,
	SYNC_WAIT, SYNC_TIMED_WAIT, SYNC_SIGNAL, SYNC_BROADCAST,
	SYNC_ONCE, SYNC_ONCE_ENTER, SYNC_ONCE_LEAVE,
	SYNC_THREAD_CREATE, SYNC_THREAD_JOIN,
};

#define SYNC_NAME_MAX 64

struct sync_func {
	char name[SYNC_NAME_MAX];
	char lib[SYNC_NAME_MAX]; /* "" : the program, then any library */
	enum sync_op op;
	uint8_t arg;        /* the object: argument index, 0-based */
	uint8_t lock_arg;   /* wait, timed-wait: the lock's argument */
	int8_t bit_arg;     /* >= 0: the object is arg + (this argument) / 8 */
	bool recursive;     /* acquire: its owner may take it again */
	bool ok_nonzero;    /* try-acquire: a nonzero return is success;
	                       timed-wait: nonzero is "woken", zero "timed out" */
	int line;
};

struct sync_spec {
	struct sync_func *f;
	size_t n;
};

/* Parses text (named file in messages).  0, or -1 with "FILE:LINE: what
 * is wrong" in err (*out then empty). */
int syncspec_parse(const char *text, const char *file, struct sync_spec *out, char *err,
		   size_t errlen);
void syncspec_free(struct sync_spec *s);

/* Is name one of the built-in hooks (hookdefs.c)? */
bool syncspec_builtin_name(const char *name);

/* The built-in spec of GLib (libglib-2.0), used when libglib is loaded. */
extern const char syncspec_glib[];

#endif
