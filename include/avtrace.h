/*
 * avtrace.h: annotations for avtrace (https://... see README), optional.
 *
 *   AVT_READ(ptr)        the program is about to read *ptr
 *   AVT_WRITE(ptr)       the program is about to write *ptr
 *   AVT_ATOMIC_BEGIN()   the code up to the matching AVT_ATOMIC_END() is
 *   AVT_ATOMIC_END()     meant to run atomically (blocks may nest)
 *
 * Each macro is a USDT probe (<sys/sdt.h>, provider "avtrace"): a single
 * nop in the code plus an entry in the ELF note section .note.stapsdt.
 * There is no function call and no library to link, so an annotated
 * program costs nothing when it is not traced, and the probes are visible
 * to gdb ("info probes"), perf and bpftrace too.  avtrace plants a
 * breakpoint on each probe's nop and reads the address from the probe's
 * argument.  Build with plain `cc -pthread`; C99/C11 and C++ alike.
 */
#ifndef AVTRACE_H
#define AVTRACE_H

#include <sys/sdt.h>

/* The size is a compile-time constant; the address is whatever register
 * or memory operand the compiler chose (sdt records where). */
#define AVT_READ(ptr)  STAP_PROBE2(avtrace, read, (ptr), sizeof(*(ptr)))
#define AVT_WRITE(ptr) STAP_PROBE2(avtrace, write, (ptr), sizeof(*(ptr)))
#define AVT_ATOMIC_BEGIN() STAP_PROBE(avtrace, atomic_begin)
#define AVT_ATOMIC_END()   STAP_PROBE(avtrace, atomic_end)

#endif
