#include "log.h"

#include <stdio.h>
#include <stdlib.h>

int avt_verbose;
int avt_quiet;
unsigned long avt_nerrors;
unsigned long avt_nwrite_errors;
char avt_last_error[256];

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "avtrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* An error: counted, kept as the last one, and printed. */
static void verror(const char *fmt, va_list ap)
{
	va_list again;
	avt_nerrors++;
	va_copy(again, ap);
	vsnprintf(avt_last_error, sizeof avt_last_error, fmt, ap);
	vreport("", fmt, again);
	va_end(again);
}

void avt_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

void avt_write_error(const char *fmt, ...)
{
	va_list ap;
	avt_nwrite_errors++;
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

void avt_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void avt_debug(const char *fmt, ...)
{
	va_list ap;
	if (avt_verbose <= 0)
		return;
	va_start(ap, fmt);
	vreport("debug: ", fmt, ap);
	va_end(ap);
}

void avt_info(const char *fmt, ...)
{
	va_list ap;
	if (avt_quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* An invariant broke: this is avtrace's bug, not the user's; abort so a core
 * and the location reach whoever fixes it. */
void avt_bug(const char *file, int line, const char *cond)
{
	fprintf(stderr, "avtrace: internal error at %s:%d: %s\n", file, line, cond);
	abort();
}
