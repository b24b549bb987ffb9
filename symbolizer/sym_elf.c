/*
 * Section look-up in an ELF file (sym_elf.h).
 */
#include <gelf.h>
#include <string.h>

#include "sym_elf.h"

/* Is sh (named nm) the section asked for?  NOBITS never is: it has no
 * bytes. */
static bool wanted(Elf *e, size_t shstrndx, const GElf_Shdr *sh, const char *name, uint64_t lo,
		   uint64_t hi)
{
	if (name) {
		const char *nm = elf_strptr(e, shstrndx, sh->sh_name);
		return sh->sh_type != SHT_NOBITS && nm && !strcmp(nm, name);
	}
	return sh->sh_type == SHT_PROGBITS && (sh->sh_flags & SHF_EXECINSTR) && lo >= sh->sh_addr &&
	       hi <= sh->sh_addr + sh->sh_size;
}

bool sym_elf_section(Elf *e, const char *name, uint64_t lo, uint64_t hi, struct sym_elf_sec *s)
{
	size_t shstrndx = 0;
	if (name && elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !wanted(e, shstrndx, &sh, name, lo, hi))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return false;
		*s = (struct sym_elf_sec){ d->d_buf, sh.sh_addr, sh.sh_size };
		return true;
	}
	return false;
}
