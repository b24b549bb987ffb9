/*
 * meta.json, the facts of a recording (docs/INTERNALS.md): how to run the
 * program again (argv, env, executable, cwd, build-id) and how it was
 * watched.  The file may come from anywhere (a CI artifact, a colleague),
 * so meta_read() checks every field replay relies on before anyone uses
 * it.
 *
 * Ownership: struct avt_meta owns every array and string in it and the
 * parsed JSON object (for fields only some commands read); meta_free()
 * frees them all.
 */
#ifndef AVT_TRACE_META_H
#define AVT_TRACE_META_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define AVT_META_MAX_BYTES (16u << 20) /* argv and env of any real program */
#define AVT_META_MAX_WATCH 4u          /* the debug registers */
#define AVT_META_MAX_SCOPE 1024        /* characters of access_scope */

struct avt_meta {
	char **argv;        /* NULL-terminated, argc >= 1 */
	size_t argc;
	char **env;         /* NULL-terminated, or NULL: none recorded */
	size_t nenv;
	char *executable;   /* never empty */
	char *cwd;          /* never empty */
	char *build_id;     /* lowercase hex, at most 40 digits; "" if none */
	char **watch;       /* NULL-terminated; nwatch <= AVT_META_MAX_WATCH */
	size_t nwatch;
	bool heap;          /* malloc hooks were on (default true) */
	bool watch_auto;    /* the watched variables were chosen automatically
	                       (recordings before access breakpoints) */
	bool access;        /* access breakpoints were on (default false) */
	unsigned access_budget; /* their budget (0: the default) */
	char *access_scope;     /* --access-scope, or NULL */
	char *program;          /* the program named on the command line (its
	                           real path), the user's code wherever it is
	                           installed; NULL: a script, or an older
	                           recording */
	bool futex;         /* --futex: futex calls were events (default false) */
	json_t *json;       /* the whole object */
};

/* Reads and checks path (a regular file of at most AVT_META_MAX_BYTES).
 * On error returns NULL and writes "cannot read 'PATH': ..." (with the
 * line for a syntax error, or the field that is wrong) into err, without
 * the "avtrace: " prefix; errno_out (if not NULL) gets the open()'s errno,
 * 0 for any other error, so a caller can tell "no recording" apart. */
struct avt_meta *meta_read(const char *path, char *err, size_t errlen, int *errno_out);
void meta_free(struct avt_meta *m);
/* A forked process's recording: its fork path (meta "fork_path", each a
 * fork number from 1) into path[max]; *n = 0 when there is none.  -1 if
 * it is malformed. */
int meta_fork_path(const struct avt_meta *m, unsigned *path, size_t max, size_t *n);

/* Any other JSON file avtrace reads back (replays/NNNN.json, possibly from
 * another machine): a regular file of at most AVT_META_MAX_BYTES, parsed;
 * NULL with "cannot read 'PATH': ..." in err.  json_decref() the result. */
json_t *avt_json_read(const char *path, char *err, size_t errlen);

#endif
