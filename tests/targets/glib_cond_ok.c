/* glib_cond_ok: glib_cond_if.c's correct counterpart (the consumer waits
 * under `while`): no consumer takes from an empty queue, in any order. */
#define GLIB_COND_OK
#include "glib_cond_if.c"
