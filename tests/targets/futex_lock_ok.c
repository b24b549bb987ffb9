/*
 * futex_lock_ok: futex_lock.c with each deposit in one critical section of
 * its hand-written futex mutex: correct under every schedule (balance 175).
 *
 * Usage: futex_lock_ok [DELAY=20000000]
 */
#define FUTEX_LOCK_OK 1
#include "futex_lock.c"
