/* glib_rwlock_ok: glib_rwlock_split.c's correct counterpart (the pair
 * updated in one write critical section): the reader never sees it torn. */
#define GLIB_RWLOCK_OK
#include "glib_rwlock_split.c"
