/*
 * Data addresses -> variable names, and names -> addresses.
 *
 * Each module's globals and statics are gathered once, on the first
 * question about an address in it: DW_TAG_variable DIEs whose location is a
 * lone DW_OP_addr, then the ELF object symbols DWARF did not cover (other
 * CUs, or no DWARF at all).  The table is sorted by address and searched by
 * bisection; the final names are memoized per address, so a trace that
 * names the same lock a million times builds its name once.
 */
#include "sym_int.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/log.h"

#define MAX_SCOPE_DEPTH 32

void sym_var_name_free(void *name)
{
	free(name);
}

void sym_vartab_release(struct sym_vartab *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
	t->loaded = 0;
}

/* A growing array of entries while the table is built. */
struct varvec {
	struct sym_var *v;
	size_t n, cap;
};

static int push(struct varvec *vv, const struct sym_var *var)
{
	if (vv->n == vv->cap) {
		size_t cap = vv->cap ? vv->cap * 2 : 256;
		struct sym_var *v = realloc(vv->v, cap * sizeof(*v));
		if (!v)
			return -1;
		vv->v = v;
		vv->cap = cap;
	}
	vv->v[vv->n++] = *var;
	return 0;
}

/* The static address of a variable: a location that is exactly one
 * DW_OP_addr (or its DWARF 5 indexed form). */
static int static_address(Dwarf_Die *die, uint64_t *addr)
{
	Dwarf_Attribute attr, res;
	Dwarf_Op *ops;
	size_t n;
	if (!dwarf_attr(die, DW_AT_location, &attr) ||
	    dwarf_getlocation(&attr, &ops, &n) != 0 || n != 1)
		return -1;
	if (ops[0].atom == DW_OP_addr) {
		*addr = ops[0].number;
		return 0;
	}
	if (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) {
		Dwarf_Addr a;
		if (dwarf_getlocation_attr(&attr, ops, &res) == 0 &&
		    dwarf_formaddr(&res, &a) == 0) {
			*addr = a;
			return 0;
		}
	}
	return -1;
}

static int add_dwarf_var(struct varvec *vv, Dwarf_Die *die, Dwarf_Addr bias)
{
	Dwarf_Attribute attr;
	struct sym_var var = { 0 };
	uint64_t addr;
	var.name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	if (!var.name || static_address(die, &addr) < 0 || addr == 0)
		return 0;
	var.lo = addr + bias;
	if (dwarf_formref_die(dwarf_attr_integrate(die, DW_AT_type, &attr), &var.type)) {
		Dwarf_Word size;
		var.has_type = 1;
		if (dwarf_aggregate_size(&var.type, &size) == 0)
			var.size = size;
	}
	return push(vv, &var);
}

/* Variables at file scope and the statics inside functions and blocks. */
static int collect_scope(struct varvec *vv, Dwarf_Die *parent, Dwarf_Addr bias, int depth)
{
	Dwarf_Die child;
	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int rc = 0;
		switch (dwarf_tag(&child)) {
		case DW_TAG_variable:
			rc = add_dwarf_var(vv, &child, bias);
			break;
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
			rc = collect_scope(vv, &child, bias, depth + 1);
			break;
		}
		if (rc < 0)
			return -1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int collect_dwarf(struct varvec *vv, Dwfl_Module *dm)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = NULL;
	while ((cu = dwfl_module_nextcu(dm, cu, &bias)))
		if (collect_scope(vv, cu, bias, 0) < 0)
			return -1;
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct sym_var *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Among entries at one address, typed and larger first: they win. */
	if (x->has_type != y->has_type)
		return y->has_type - x->has_type;
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* Index of the last entry with lo <= addr in v[0..n), or -1. */
static long find_at_or_below(const struct sym_var *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* ELF object symbols: fill sizes DWARF could not tell (int a[] defined
 * elsewhere) and add what DWARF lacks. */
static int collect_elf(struct varvec *vv, Dwfl_Module *dm)
{
	size_t ndwarf = vv->n;
	int nsym = dwfl_module_getsymtab(dm);
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(dm, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_size)
			continue;
		long j = find_at_or_below(vv->v, ndwarf, addr);
		if (j >= 0 && vv->v[j].lo == addr) {
			if (!vv->v[j].size)
				vv->v[j].size = sym.st_size;
			continue;
		}
		struct sym_var var = { .lo = addr, .size = sym.st_size, .name = name };
		if (push(vv, &var) < 0)
			return -1;
	}
	return 0;
}

/* Sort and keep one entry per address. */
static void finish_table(struct varvec *vv)
{
	if (!vv->n)
		return;
	qsort(vv->v, vv->n, sizeof(*vv->v), by_lo);
	size_t out = 0;
	for (size_t i = 0; i < vv->n; i++)
		if (out == 0 || vv->v[out - 1].lo != vv->v[i].lo)
			vv->v[out++] = vv->v[i];
	vv->n = out;
}

static int vartab_load(struct sym_mod *m)
{
	struct varvec vv = { 0 };
	if (m->vars.loaded)
		return 0;
	m->vars.loaded = 1;
	if (collect_dwarf(&vv, m->dm) < 0)
		goto oom;
	/* collect_elf bisects the DWARF part, so it must be sorted first. */
	finish_table(&vv);
	if (collect_elf(&vv, m->dm) < 0)
		goto oom;
	finish_table(&vv);
	m->vars.v = vv.v;
	m->vars.n = vv.n;
	return 0;
oom:
	free(vv.v);
	avt_error("cannot read the variables of '%s': out of memory", m->path);
	return -1;
}

static const struct sym_var *var_at(struct sym_mod *m, uint64_t addr)
{
	if (!sym_mod_ready(m) || vartab_load(m) < 0)
		return NULL;
	long i = find_at_or_below(m->vars.v, m->vars.n, addr);
	if (i < 0)
		return NULL;
	const struct sym_var *v = &m->vars.v[i];
	return addr - v->lo < (v->size ? v->size : 1) ? v : NULL;
}

static const struct sym_var *var_named(struct sym *s, const char *name);

/* The name of addr, freshly allocated, or NULL. */
static char *compute_name(struct sym *s, uint64_t addr)
{
	struct sym_mod *m = sym_mod_by_addr(s, addr);
	const struct sym_var *v = m ? var_at(m, addr) : NULL;
	if (!v)
		return NULL;
	char buf[512];
	struct sym_strbuf b = { buf, sizeof(buf), 0 };
	sym_strbuf_add(&b, "%s", v->name);
	if (!v->has_type) {
		/* a copy relocation: the executable holds the live copy of a
		 * library's variable but only the library's DWARF has its type */
		const struct sym_var *def = var_named(s, v->name);
		if (def && def->has_type && (!def->size || !v->size || def->size == v->size)) {
			Dwarf_Die type = def->type;
			sym_type_describe(&type, addr - v->lo, &b);
			return strdup(buf);
		}
	}
	if (v->has_type) {
		Dwarf_Die type = v->type;
		sym_type_describe(&type, addr - v->lo, &b);
	} else if (addr != v->lo) {
		sym_strbuf_add(&b, "+%" PRIu64, addr - v->lo);
	}
	return strdup(buf);
}

const char *sym_var_name(struct sym *s, uint64_t addr, char *buf, size_t len)
{
	s->stats.var_lookups++;
	struct sym_hash_slot *sl = sym_hash_find(&s->vars, addr, 0);
	const char *name;
	if (sl) {
		name = sl->val;
	} else {
		s->stats.var_misses++;
		char *fresh = compute_name(s, addr);
		/* Unknown addresses are memoized too, as NULL. */
		if (sym_hash_put(&s->vars, addr, 0, fresh) < 0) {
			free(fresh);
			avt_error("cannot name variables: out of memory");
			return NULL;
		}
		name = fresh;
	}
	if (!name || !len)
		return NULL;
	size_t n = strlen(name);
	n = n < len ? n : len - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

/* The first module in id order defining name; typed entries preferred. */
static const struct sym_var *var_named(struct sym *s, const char *name)
{
	const struct sym_var *found = NULL;
	for (size_t id = 0; id < s->nids && !(found && found->has_type); id++) {
		struct sym_mod *m = s->mods[id];
		if (!m || !sym_mod_ready(m) || vartab_load(m) < 0)
			continue;
		for (size_t i = 0; i < m->vars.n; i++) {
			const struct sym_var *v = &m->vars.v[i];
			if (strcmp(v->name, name) == 0 && (!found || v->has_type > found->has_type)) {
				found = v;
				if (v->has_type)
					break;
			}
		}
	}
	return found;
}

const char *sym_error(const struct sym *s)
{
	return s->err;
}

int sym_var_lookup(struct sym *s, const char *expr, uint64_t *addr, uint64_t *size)
{
	char name[256];
	size_t n = strcspn(expr, ".[");
	if (n == 0 || n >= sizeof(name)) {
		snprintf(s->err, sizeof s->err, "cannot resolve '%s': expected a variable name", expr);
		return -1;
	}
	memcpy(name, expr, n);
	name[n] = '\0';
	const struct sym_var *v = var_named(s, name);
	if (!v) {
		snprintf(s->err, sizeof s->err, "cannot resolve '%s': no global variable '%s'", expr, name);
		return -1;
	}
	uint64_t off = 0, sz = v->size;
	const char *why = NULL;
	if (v->has_type) {
		Dwarf_Die type = v->type;
		why = sym_type_walk(&type, expr + n, &off, &sz);
		if (!why && !expr[n] && v->size) /* ELF knows the size of int a[] */
			sz = v->size;
	} else if (expr[n]) {
		why = "no type information (no DWARF)";
	}
	if (why) {
		snprintf(s->err, sizeof s->err, "cannot resolve '%s': %s", expr, why);
		return -1;
	}
	*addr = v->lo + off;
	*size = sz;
	return 0;
}

/* Peels typedefs and cv-qualifiers; sets *is_const when a const was seen. */
static int peel(Dwarf_Die *type, int *is_const)
{
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(type);
		if (tag == DW_TAG_const_type)
			*is_const = 1;
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
			return 0;
		Dwarf_Attribute attr;
		if (!dwarf_formref_die(dwarf_attr_integrate(type, DW_AT_type, &attr), type))
			return -1; /* void */
	}
	return -1;
}

/* A scalar the program might race on: integer, enum, pointer, 1-8 bytes,
 * not const; and not one of the synchronization types (their accesses are
 * the pthread events already). */
static int scalar_size(Dwarf_Die *type, uint64_t *size)
{
	Dwarf_Die t = *type;
	int is_const = 0;
	const char *tn = dwarf_diename(&t);
	if (tn && (!strncmp(tn, "pthread_", 8) || !strncmp(tn, "sem_t", 5) || !strncmp(tn, "mtx_t", 5) ||
		   !strncmp(tn, "cnd_t", 5) || !strncmp(tn, "FILE", 4)))
		return -1;
	if (peel(&t, &is_const) < 0 || is_const)
		return -1;
	int tag = dwarf_tag(&t);
	if (tag != DW_TAG_base_type && tag != DW_TAG_pointer_type && tag != DW_TAG_enumeration_type)
		return -1;
	Dwarf_Word sz;
	if (dwarf_aggregate_size(&t, &sz) != 0 || !sz || sz > 8 || (sz & (sz - 1)))
		return -1;
	*size = sz;
	return 0;
}

static int add_global(struct sym_global *out, size_t max, size_t *n, const char *name,
		      const char *member, uint64_t addr, uint64_t size)
{
	if (*n >= max)
		return -1;
	struct sym_global *g = &out[(*n)++];
	snprintf(g->name, sizeof g->name, member ? "%s.%s" : "%s", name, member);
	g->addr = addr;
	g->size = size;
	return 0;
}

size_t sym_scalar_globals(struct sym *s, unsigned mod, struct sym_global *out, size_t max)
{
	struct sym_mod *m = sym_mod_by_id(s, mod);
	size_t n = 0;
	if (!m || !sym_mod_ready(m) || vartab_load(m) < 0)
		return 0;
	for (size_t i = 0; i < m->vars.n; i++) {
		const struct sym_var *v = &m->vars.v[i];
		uint64_t size;
		if (!v->has_type || v->name[0] == '_')
			continue;
		Dwarf_Die t = v->type;
		if (scalar_size(&t, &size) == 0) {
			if (add_global(out, max, &n, v->name, NULL, v->lo, size) < 0)
				break;
			continue;
		}
		/* one level into a struct: "shared.ptr" */
		int is_const = 0;
		const char *tn = dwarf_diename(&t);
		if ((tn && !strncmp(tn, "pthread_", 8)) || peel(&t, &is_const) < 0 || is_const ||
		    dwarf_tag(&t) != DW_TAG_structure_type)
			continue;
		Dwarf_Die mem;
		if (dwarf_child(&t, &mem) != 0)
			continue;
		do {
			Dwarf_Attribute attr;
			Dwarf_Die mt;
			Dwarf_Word off;
			const char *mn = dwarf_diename(&mem);
			if (dwarf_tag(&mem) != DW_TAG_member || !mn || mn[0] == '_' ||
			    !dwarf_formref_die(dwarf_attr_integrate(&mem, DW_AT_type, &attr), &mt) ||
			    dwarf_formudata(dwarf_attr(&mem, DW_AT_data_member_location, &attr), &off) != 0)
				continue;
			if (scalar_size(&mt, &size) == 0 && add_global(out, max, &n, v->name, mn, v->lo + off, size) < 0)
				return n;
		} while (dwarf_siblingof(&mem, &mem) == 0);
	}
	return n;
}
