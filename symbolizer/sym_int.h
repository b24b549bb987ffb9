/*
 * Internals shared by the symbolizer's files; not for other parts.
 *
 * Ownership: struct sym owns its modules (mods[] by id, by_addr[] is a
 * second index over the same objects), the two caches and the unwinder
 * state.  A module owns its path, its Dwfl (and so every string and DIE
 * that libdw hands out for it) and its variable table.
 */
#ifndef AVT_SYMBOLIZER_SYM_INT_H
#define AVT_SYMBOLIZER_SYM_INT_H

#include <elfutils/libdwfl.h>

#include "sym.h"
#include "sym_hash.h"

/* Where a module is in its lazy life. */
enum sym_mod_state {
	SYM_MOD_UNOPENED, /* registered, file not read yet */
	SYM_MOD_READY,    /* dwfl/dm usable */
	SYM_MOD_FALLBACK, /* unreadable or wrong build-id: module+0xOFF only */
};

/* One global variable (or ELF object symbol) of a module. */
struct sym_var {
	uint64_t lo, size;  /* absolute address range */
	const char *name;   /* libdw's string */
	Dwarf_Die type;     /* valid when has_type */
	int has_type;
};

struct sym_vartab {
	struct sym_var *v; /* sorted by lo, one entry per address */
	size_t n;
	int loaded;
};

/* The module's CUs by address range, for DWARF without .debug_aranges
 * (sym_cu.c); built on the first address libdwfl cannot place. */
struct sym_cu_range;
struct sym_cutab {
	bool built;
	Dwarf_Die *dies; /* copies of the CU DIEs */
	size_t ndies;
	struct sym_cu_range *ranges; /* sorted by start */
	size_t nranges;
	Dwarf_Addr bias;
};

struct sym_mod {
	unsigned id;
	char *path;
	const char *name; /* basename, points into path */
	uint64_t base, lo, hi;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	size_t build_id_len;
	enum sym_mod_state state;
	Dwfl *dwfl;
	Dwfl_Module *dm;
	struct sym_vartab vars;
	struct sym_cutab cutab;
};

struct sym_unwinder;

struct sym {
	struct sym_mod **mods;    /* indexed by id, NULL where unused */
	size_t nids;              /* length of mods[] */
	struct sym_mod **by_addr; /* registered modules sorted by lo */
	size_t nmods;
	struct sym_hash sites;    /* (mod, off, is_return) -> struct sym_site_ent */
	struct sym_hash vars;     /* addr -> char * name, or NULL when unknown */
	const struct sym_unwinder *unw;
	void *unw_state;          /* the backend's, freed by its release() */
	struct sym_stats stats;
	char err[512];            /* why the last sym_var_lookup failed */
};

/* An unwinder backend (strace's unwinder table). */
struct sym_unwinder {
	const char *name;
	/* Fill pcs[] for tid of pid; *state is the backend's, NULL at first. */
	int (*backtrace)(void **state, pid_t pid, pid_t tid, uint64_t *pcs, int max);
	void (*release)(void *state);
};

extern const struct sym_unwinder sym_unwinder_libunwind;
extern const struct sym_unwinder sym_unwinder_dwfl;

/* sym.c */
struct sym_mod *sym_mod_by_id(const struct sym *s, unsigned id);
struct sym_mod *sym_mod_by_addr(const struct sym *s, uint64_t addr);
/* Opens the module on first use; false when only module+0xOFF is known. */
int sym_mod_ready(struct sym_mod *m);
void sym_caches_clear(struct sym *s);

/* sym_cu.c */
/* The CU DIE around runtime address pc (libdwfl's, else from the CUs'
 * own ranges when the module has no .debug_aranges), and the bias to
 * subtract from pc for DWARF addresses; NULL if none. */
Dwarf_Die *sym_mod_addrdie(struct sym_mod *m, Dwarf_Addr pc, Dwarf_Addr *bias);
void sym_cutab_release(struct sym_cutab *t);

/* sym_site.c */
void sym_site_ent_free(void *ent);

/* sym_var.c */
void sym_vartab_release(struct sym_vartab *t);
void sym_var_name_free(void *name);

/* sym_type.c */
/* Appends to a caller's buffer, truncating silently. */
struct sym_strbuf {
	char *buf;
	size_t len, pos;
};
void sym_strbuf_add(struct sym_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append ".member[i]..." naming byte off of an object of type, and "+N" for
 * the bytes into the innermost part it names. */
void sym_type_describe(Dwarf_Die *type, uint64_t off, struct sym_strbuf *b);
/* Offset and size of path (".a[2].b") inside an object of type; NULL, or
 * why not. */
const char *sym_type_walk(Dwarf_Die *type, const char *path, uint64_t *off,
			  uint64_t *size);

/* sym_flow.c */
/* The function around runtime address pc: its range and code bytes (the
 * module's own file, never the process). */
bool sym_function_code(struct sym_mod *m, uint64_t pc, uint64_t *lo, uint64_t *hi,
		       const uint8_t **code);

/* sym_unwind.c */
void sym_unwind_release(struct sym *s);

#endif
