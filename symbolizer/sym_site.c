/*
 * Code sites: module + offset -> function, file:line, inline chain.
 *
 * The first lookup of a site asks libdwfl (line table, then the DWARF
 * scopes around the pc for the function and what it was inlined into, then
 * the ELF symbol table when there is no DWARF); the result and its printed
 * form are memoized per (module, offset, is_return), so a trace that
 * revisits the same few hundred sites a million times pays for each once.
 */
#include "sym_int.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/log.h"

/* A memoized site: the location and its sym_site_str() form. */
struct sym_site_ent {
	struct sym_loc loc;
	int known;  /* the module was registered */
	char str[]; /* NUL-terminated */
};

void sym_site_ent_free(void *ent)
{
	free(ent);
}

/* DW_AT_name, following abstract_origin/specification: an inlined
 * instance and an out-of-line copy carry the name only on their origin. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

static void add_inline_caller(struct sym_loc *loc, const char *name)
{
	if (loc->ninline < SYM_INLINE_MAX)
		loc->inline_funcs[loc->ninline] = name;
	else
		loc->inline_funcs[SYM_INLINE_MAX - 1] = name;
	loc->ninline++;
}

/*
 * Fill func and the inline chain from the DIEs around pc.  dwarf_getscopes
 * finds the innermost scope, but past an inlined instance it continues
 * with the scopes of the inlined function's abstract definition; the
 * concrete chain (inlined_subroutine ... subprogram of the caller) comes
 * from dwarf_getscopes_die on that innermost scope.
 */
static void scopes_funcs(struct sym_mod *m, Dwarf_Addr pc, struct sym_loc *loc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = sym_mod_addrdie(m, pc, &bias);
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : -1;
	n = n > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : -1;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		const char *name = die_name(&chain[i]);
		if (!loc->func)
			loc->func = name ? name : "??";
		else
			add_inline_caller(loc, name ? name : "??");
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(chain);
	free(scopes);
}

/* Without DWARF: the ELF function symbol holding pc, if any. */
static const char *elf_func(struct sym_mod *m, Dwarf_Addr pc)
{
	GElf_Off symoff;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m->dm, pc, &symoff, &sym, NULL, NULL, NULL);
	if (!name)
		return NULL;
	int type = GELF_ST_TYPE(sym.st_info);
	/* The nearest preceding object or section symbol is no function name. */
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return NULL;
	if (sym.st_size && symoff >= sym.st_size)
		return NULL;
	return name;
}

/* The line of pc from its CU's line table, when libdwfl found no CU
 * (no .debug_aranges: clang's default; sym_cu.c). */
static void cu_line(struct sym_mod *m, Dwarf_Addr pc, struct sym_loc *loc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = sym_mod_addrdie(m, pc, &bias);
	Dwarf_Line *line = cu ? dwarf_getsrc_die(cu, pc - bias) : NULL;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(line, &loc->line) != 0) {
		loc->line = 0;
		return;
	}
	loc->file = file;
	Dwarf_Attribute attr;
	loc->comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
}

static void lookup_loc(struct sym_mod *m, uint64_t off, int is_return, struct sym_loc *loc)
{
	memset(loc, 0, sizeof(*loc));
	loc->module = m->name;
	loc->modoff = off;
	if (!sym_mod_ready(m))
		return;
	Dwarf_Addr pc = m->base + off - (is_return && off ? 1 : 0);
	Dwfl_Line *line = dwfl_module_getsrc(m->dm, pc);
	if (line) {
		loc->file = dwfl_lineinfo(line, NULL, &loc->line, NULL, NULL, NULL);
		if (!loc->file)
			loc->line = 0;
		else
			loc->comp_dir = dwfl_line_comp_dir(line);
	} else {
		cu_line(m, pc, loc);
	}
	scopes_funcs(m, pc, loc);
	if (!loc->func)
		loc->func = elf_func(m, pc);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void format_loc(const struct sym_loc *loc, char *buf, size_t len)
{
	if (loc->file && loc->line > 0)
		snprintf(buf, len, "%s:%d", base_name(loc->file), loc->line);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, loc->module, loc->modoff);
}

/* known: the module is registered; otherwise the site prints as
 * "#ID+0xOFF" so that the unregistered id shows. */
static struct sym_site_ent *ent_new(const struct sym_loc *loc, unsigned mod, int known)
{
	char str[512];
	if (known)
		format_loc(loc, str, sizeof(str));
	else
		snprintf(str, sizeof(str), "#%u+0x%" PRIx64, mod, loc->modoff);
	size_t n = strlen(str) + 1;
	struct sym_site_ent *e = malloc(sizeof(*e) + n);
	if (!e)
		return NULL;
	e->loc = *loc;
	e->known = known;
	memcpy(e->str, str, n);
	return e;
}

/*
 * The memoized entry of a site, computing it on first sight.  mod
 * SYM_MOD_NONE means off is an absolute address: it is re-expressed through
 * the module map (and not cached when in no module, since such addresses
 * are unbounded).  NULL for an address in no module, or out of memory.
 */
static struct sym_site_ent *site_ent(struct sym *s, unsigned mod, uint64_t off,
				     int is_return)
{
	if (mod == SYM_MOD_NONE) {
		struct sym_mod *am = sym_mod_by_addr(s, off);
		if (!am)
			return NULL;
		mod = am->id;
		off -= am->base;
	}
	uint64_t key = (uint64_t)mod << 1 | (is_return ? 1 : 0);
	struct sym_hash_slot *sl = sym_hash_find(&s->sites, key, off);
	if (sl)
		return sl->val;
	s->stats.site_misses++;
	struct sym_mod *m = sym_mod_by_id(s, mod);
	struct sym_loc loc = { .modoff = off };
	if (m)
		lookup_loc(m, off, is_return, &loc);
	struct sym_site_ent *e = ent_new(&loc, mod, m != NULL);
	if (!e || sym_hash_put(&s->sites, key, off, e) < 0) {
		free(e);
		avt_error("cannot symbolize: out of memory");
		return NULL;
	}
	return e;
}

int sym_site(struct sym *s, unsigned mod, uint64_t off, int is_return,
	     struct sym_loc *out)
{
	s->stats.site_lookups++;
	struct sym_site_ent *e = site_ent(s, mod, off, is_return);
	if (!e) {
		memset(out, 0, sizeof(*out));
		out->modoff = off;
		return -1;
	}
	*out = e->loc;
	return e->known ? 0 : -1;
}

int sym_addr(struct sym *s, uint64_t addr, int is_return, struct sym_loc *out)
{
	return sym_site(s, SYM_MOD_NONE, addr, is_return, out);
}

const char *sym_site_str(struct sym *s, unsigned mod, uint64_t off, int is_return,
			 char *buf, size_t len)
{
	if (!len)
		return buf;
	s->stats.site_lookups++;
	struct sym_site_ent *e = site_ent(s, mod, off, is_return);
	if (e) {
		size_t n = strlen(e->str);
		if (n >= len)
			n = len - 1;
		memcpy(buf, e->str, n);
		buf[n] = '\0';
	} else {
		snprintf(buf, len, "0x%" PRIx64, off);
	}
	return buf;
}
