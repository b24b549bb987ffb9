/*
 * Which code is the user's (docs/memory-access.md): the executable and
 * the libraries outside the system directories, and the system libraries
 * named in --access-scope.  The tracer instruments only that code; the
 * predictor does not reorder what lies wholly outside it (predict.c).
 */
#ifndef AVT_TRACE_SCOPE_H
#define AVT_TRACE_SCOPE_H

#include <stdbool.h>

/* Is the module at path code of the user's under scope (--access-scope:
 * comma-separated file names without version, "all", or NULL)? */
bool avt_user_code_path(const char *path, const char *scope);

#endif
