/* The accounts of am_proj (ledger.c). */
#ifndef AM_PROJ_LEDGER_H
#define AM_PROJ_LEDGER_H

extern long balance;
/* Adds amount to balance: the read and the write in two critical
 * sections (the lost update). */
void deposit(long amount);
/* The same in one critical section (the fix). */
void deposit_locked(long amount);

#endif
