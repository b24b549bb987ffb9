/*
 * cas_spinlock_ok: cas_spinlock.c with each deposit in one critical
 * section of its compare-and-swap spinlock: correct under every schedule
 * (balance 175).
 *
 * Usage: cas_spinlock_ok [DELAY=20000000]
 */
#define CAS_SPINLOCK_OK 1
#include "cas_spinlock.c"
