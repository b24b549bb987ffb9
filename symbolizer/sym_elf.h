/*
 * Section look-up in an ELF file, shared by the symbolizer's flow walk
 * (sym_flow.c: the code of a function) and the tracer's FDE reader
 * (tracer/fde.c: .eh_frame).  Pure libelf: no session, no process.
 *
 * Ownership: the bytes point into e's own data (libelf's), valid until
 * elf_end(e); the caller frees nothing.
 */
#ifndef AVT_SYMBOLIZER_SYM_ELF_H
#define AVT_SYMBOLIZER_SYM_ELF_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

/* A section's bytes, whole, and where it is loaded (ELF addresses). */
struct sym_elf_sec {
	const uint8_t *bytes;
	uint64_t addr, size;
};

/* The first section of e named name, or, with name NULL, the first code
 * section (PROGBITS, executable) that holds ELF addresses [lo, hi).
 * False if there is none, or its bytes cannot be had whole (the look-up
 * does not go on to a later match). */
bool sym_elf_section(Elf *e, const char *name, uint64_t lo, uint64_t hi, struct sym_elf_sec *s);

#endif
