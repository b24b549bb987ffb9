/* glib_bank_ok: glib_bank.c's correct counterpart (one critical section
 * per deposit): 175 under every order. */
#define GLIB_BANK_OK
#include "glib_bank.c"
