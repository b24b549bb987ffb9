/* Numeric command-line arguments (args.h). */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cli.h"
#include "trace/meta.h"
#include "tracer/tracer.h"

/* Digits in base (10 or 16) only: strtoull alone accepts blanks, a sign
 * (and negates: "-1" is ULLONG_MAX) and saturates silently. */
static int digits(const char *s, int base, uint64_t *out)
{
	char *end;

	if (!*s)
		return -1;
	for (const char *c = s; *c; c++)
		if (base == 16 ? !isxdigit((unsigned char)*c) : !isdigit((unsigned char)*c))
			return -1;
	errno = 0;
	*out = strtoull(s, &end, base);
	return errno || *end ? -1 : 0;
}

int arg_uint(const char *cmd, const char *opt, const char *arg, unsigned min, unsigned max,
	     unsigned *out)
{
	uint64_t v;

	if (digits(arg, 10, &v) < 0 || v < min || v > max) {
		usage_error(cmd, "bad %s '%s' (a whole number, %u..%u)", opt, arg, min, max);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int arg_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	int hex = arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X');

	if (digits(hex ? arg + 2 : arg, hex ? 16 : 10, out) < 0) {
		usage_error(cmd, "bad %s '%s' (a whole number, 0..%llu, or 0x hex)", opt, arg,
			    (unsigned long long)UINT64_MAX);
		return -1;
	}
	return 0;
}

int arg_seconds(const char *cmd, const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	/* strtod also takes "inf", "nan", hex floats and leading blanks */
	bool decimal = (isdigit((unsigned char)arg[0]) || arg[0] == '.') &&
		       strspn(arg, "0123456789.eE+-") == strlen(arg);
	v = decimal ? strtod(arg, &end) : NAN;
	if (isnan(v) || *end || errno || !isfinite(v) || v < ARG_MIN_SECONDS ||
	    v > ARG_MAX_SECONDS) {
		usage_error(cmd, "bad %s '%s' (seconds, %g..%g)", opt, arg, ARG_MIN_SECONDS,
			    ARG_MAX_SECONDS);
		return -1;
	}
	*out = v;
	return 0;
}

int arg_cpu(const char *cmd, const char *opt, const char *arg, int *out)
{
	uint64_t v;

	if (arg[0] == '-' && arg[1] == '1' && !arg[2]) {
		*out = -1;
		return 0;
	}
	if (digits(arg, 10, &v) < 0 || v >= CPU_SETSIZE) {
		usage_error(cmd, "bad %s '%s' (a CPU number, 0..%d, or -1 for none)", opt, arg,
			    CPU_SETSIZE - 1);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int arg_sync_spec(const char *path, const char **text)
{
	char err[512];
	char *t;
	if (tracer_sync_spec_load(path, &t, err, sizeof err) < 0) {
		fprintf(stderr, "avtrace: %s\n", err);
		return -1;
	}
	*text = t; /* the process's, to its end */
	return 0;
}

int arg_scope(const char *cmd, const char *opt, const char *arg)
{
	size_t len = strlen(arg);
	bool ok = len > 0 && len <= AVT_META_MAX_SCOPE && !strchr(arg, '/') &&
		  arg[0] != ',' && arg[len - 1] != ',' && !strstr(arg, ",,");
	for (const char *c = arg; ok && *c; c++)
		ok = isgraph((unsigned char)*c);
	if (!ok) {
		usage_error(cmd, "bad %s '%s' (module file names separated by commas, such as libfoo,libstdc++, or all)",
			    opt, arg);
		return -1;
	}
	return 0;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "avtrace: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'avtrace %s --help')\n", cmd);
	return EXIT_USAGE;
}
