/*
 * Numeric command-line arguments, parsed one way for every subcommand: a
 * number that does not fit, a sign where none is allowed, trailing text,
 * an infinite or absurd time are usage errors naming the option, never a
 * value that wrapped (--schedule 4294967296 is not schedule 0, --slice -1
 * is not 4294967295 ms).  Each function prints the error ("avtrace: CMD:
 * bad OPT 'ARG' (...)") and returns -1, or stores the value and returns 0.
 */
#ifndef AVT_CLI_ARGS_H
#define AVT_CLI_ARGS_H

#include <stdint.h>

/* Longest time limit an option takes: 11.5 days; longer is a typo or a
 * "never", which --timeout does not mean. */
#define ARG_MAX_SECONDS 1e6
/* Shortest: a step of replay takes longer than this. */
#define ARG_MIN_SECONDS 1e-3

/* Plain decimal digits, min <= value <= max. */
int arg_uint(const char *cmd, const char *opt, const char *arg, unsigned min, unsigned max,
	     unsigned *out);
/* Decimal or 0x hex, any 64-bit value (seeds). */
int arg_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out);
/* Seconds: a finite decimal number in [ARG_MIN_SECONDS, ARG_MAX_SECONDS]. */
int arg_seconds(const char *cmd, const char *opt, const char *arg, double *out);
/* A CPU number, or -1 for "do not pin". */
int arg_cpu(const char *cmd, const char *opt, const char *arg, int *out);
/* --access-scope: module file names separated by commas ("libfoo,libbar"),
 * or "all"; at most AVT_META_MAX_SCOPE characters. */
int arg_scope(const char *cmd, const char *opt, const char *arg);
/* --sync-spec FILE (docs/sync-spec.md): read and checked; -1 after
 * "avtrace: FILE:LINE: what is wrong" on stderr. */
int arg_sync_spec(const char *path, const char **text);

#endif
