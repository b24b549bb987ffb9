/*
 * Messages and invariants.  Library code reports errors with avt_error()
 * and returns -1; only cli/ chooses an exit status.  BUG_ON() stays on in
 * release builds: a broken invariant aborts with its location.
 */
#ifndef AVT_TRACE_LOG_H
#define AVT_TRACE_LOG_H

#include <stdarg.h>

#define AVT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* "avtrace: " + message + newline on stderr. */
void avt_error(const char *fmt, ...) AVT_PRINTF(1, 2);
/* avt_error() for an output that could not be written (a full disk, a
 * file size limit: "cannot write 'PATH': REASON"); counted in
 * avt_nwrite_errors, which makes every command exit 2 (cli/main.c): a
 * result that was not kept must never read as a pass. */
void avt_write_error(const char *fmt, ...) AVT_PRINTF(1, 2);
/* "avtrace: warning: " + message. */
void avt_warn(const char *fmt, ...) AVT_PRINTF(1, 2);
/* Printed only when avt_verbose > 0 ("avtrace: debug: "). */
void avt_debug(const char *fmt, ...) AVT_PRINTF(1, 2);
/* Progress/summary lines on stderr, without prefix, unless avt_quiet. */
void avt_info(const char *fmt, ...) AVT_PRINTF(1, 2);

extern int avt_verbose;
extern int avt_quiet;
/* How many avt_error() lines were printed: lets cli/ say something when a
 * library call failed without a word (an error must never be silent). */
extern unsigned long avt_nerrors;
extern unsigned long avt_nwrite_errors;
/* The last avt_error() message (no prefix): for a worker whose stderr is
 * closed to report why it failed. */
extern char avt_last_error[256];

void avt_bug(const char *file, int line, const char *cond) __attribute__((noreturn));
#define BUG_ON(cond) \
	do { if (__builtin_expect(!!(cond), 0)) avt_bug(__FILE__, __LINE__, #cond); } while (0)

#endif
