/*
 * Walking DWARF types: which member / element holds a byte offset inside a
 * variable (describe, for sym_var_name), and which offset a path of
 * ".member" / "[N]" components names (walk, for sym_var_lookup).
 *
 * describe() stops at unions (which member is meant is a guess; every
 * pthread type is one) and before members with reserved names (C library
 * internals): a lock is "srv.m", not "srv.m.__data.__lock".  walk() enters
 * anything the user spells out.
 */
#include "sym_int.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 8
#define MAX_DEPTH 32
#define UNKNOWN_COUNT UINT64_MAX

void sym_strbuf_add(struct sym_strbuf *b, const char *fmt, ...)
{
	if (b->pos >= b->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->buf + b->pos, b->len - b->pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->pos = b->pos + (size_t)n < b->len ? b->pos + (size_t)n : b->len - 1;
}

static int type_of(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute attr;
	return dwarf_formref_die(dwarf_attr_integrate(die, DW_AT_type, &attr), type) ? 0 : -1;
}

static int type_size(Dwarf_Die *type, uint64_t *size)
{
	Dwarf_Word w;
	if (dwarf_aggregate_size(type, &w) != 0)
		return -1;
	*size = w;
	return 0;
}

/* "__x" and "_X" are the C library's own names: its internals
 * (sigset_t.__val, FILE._IO_read_ptr) mean nothing to the user. */
static int reserved_name(const char *name)
{
	return name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'));
}

/* Byte offset of a member in its struct; union members have none (0). */
static int member_offset(Dwarf_Die *mem, uint64_t *off)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;
	*off = 0;
	if (dwarf_attr_integrate(mem, DW_AT_data_member_location, &attr)) {
		if (dwarf_formudata(&attr, &w) == 0) {
			*off = w;
			return 0;
		}
		/* DWARF 2 style: a location expression DW_OP_plus_uconst N. */
		Dwarf_Op *ops;
		size_t n;
		if (dwarf_getlocation(&attr, &ops, &n) == 0 && n == 1 &&
		    ops[0].atom == DW_OP_plus_uconst) {
			*off = ops[0].number;
			return 0;
		}
		return -1;
	}
	if (dwarf_attr_integrate(mem, DW_AT_data_bit_offset, &attr) &&
	    dwarf_formudata(&attr, &w) == 0)
		*off = w / 8;
	return 0;
}

/* The first member of struct st whose bytes hold off (a member of unknown
 * size, a flexible array, holds everything from its start). */
static int member_at(Dwarf_Die *st, uint64_t off, Dwarf_Die *mem, uint64_t *moff)
{
	Dwarf_Die child;
	if (dwarf_child(st, &child) != 0)
		return -1;
	do {
		Dwarf_Die mtype;
		uint64_t o, size;
		if (dwarf_tag(&child) != DW_TAG_member || member_offset(&child, &o) < 0 ||
		    type_of(&child, &mtype) < 0 || off < o)
			continue;
		if (type_size(&mtype, &size) < 0 || off - o < size) {
			*mem = child;
			*moff = o;
			return 0;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

struct arr_info {
	int ndims;
	uint64_t lower[MAX_DIMS];
	uint64_t count[MAX_DIMS];  /* UNKNOWN_COUNT: open-ended */
	uint64_t stride[MAX_DIMS]; /* bytes per step of this index */
	Dwarf_Die elem;
};

static int subrange(Dwarf_Die *sr, uint64_t *lower, uint64_t *count)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;
	*lower = 0; /* C's default */
	if (dwarf_attr_integrate(sr, DW_AT_lower_bound, &attr) &&
	    dwarf_formudata(&attr, &w) == 0)
		*lower = w;
	if (dwarf_attr_integrate(sr, DW_AT_count, &attr))
		*count = dwarf_formudata(&attr, &w) == 0 ? w : UNKNOWN_COUNT;
	else if (dwarf_attr_integrate(sr, DW_AT_upper_bound, &attr))
		*count = dwarf_formudata(&attr, &w) == 0 ? w - *lower + 1 : UNKNOWN_COUNT;
	else
		*count = UNKNOWN_COUNT;
	return 0;
}

/* Dimensions of an array type; only the first may be open-ended. */
static int array_info(Dwarf_Die *arr, struct arr_info *ai)
{
	uint64_t esize;
	Dwarf_Die child;
	if (type_of(arr, &ai->elem) < 0 || type_size(&ai->elem, &esize) < 0 ||
	    dwarf_child(arr, &child) != 0)
		return -1;
	ai->ndims = 0;
	do {
		if (dwarf_tag(&child) != DW_TAG_subrange_type)
			continue;
		if (ai->ndims == MAX_DIMS)
			return -1;
		subrange(&child, &ai->lower[ai->ndims], &ai->count[ai->ndims]);
		ai->ndims++;
	} while (dwarf_siblingof(&child, &child) == 0);
	if (ai->ndims == 0)
		return -1;
	ai->stride[ai->ndims - 1] = esize;
	for (int k = ai->ndims - 2; k >= 0; k--) {
		if (ai->count[k + 1] == UNKNOWN_COUNT)
			return -1;
		ai->stride[k] = ai->stride[k + 1] * ai->count[k + 1];
	}
	return 0;
}

static void describe(Dwarf_Die *type, uint64_t off, struct sym_strbuf *b, int depth);

static int describe_struct(Dwarf_Die *st, uint64_t off, struct sym_strbuf *b, int depth)
{
	Dwarf_Die mem, mtype;
	uint64_t moff;
	if (member_at(st, off, &mem, &moff) < 0 || type_of(&mem, &mtype) < 0)
		return -1;
	const char *name = dwarf_diename(&mem);
	if (name && reserved_name(name))
		return -1;
	if (name) /* an anonymous struct/union member adds no name */
		sym_strbuf_add(b, ".%s", name);
	describe(&mtype, off - moff, b, depth + 1);
	return 0;
}

static int describe_array(Dwarf_Die *arr, uint64_t off, struct sym_strbuf *b, int depth)
{
	struct arr_info ai;
	if (array_info(arr, &ai) < 0 || ai.stride[0] == 0)
		return -1;
	if (ai.count[0] != UNKNOWN_COUNT && off / ai.stride[0] >= ai.count[0])
		return -1;
	for (int k = 0; k < ai.ndims; k++) {
		uint64_t idx = off / ai.stride[k];
		sym_strbuf_add(b, "[%" PRIu64 "]", idx + ai.lower[k]);
		off -= idx * ai.stride[k];
	}
	describe(&ai.elem, off, b, depth + 1);
	return 0;
}

/* Append the member/element path of byte off inside type, then "+N" for
 * what is left over. */
static void describe(Dwarf_Die *type, uint64_t off, struct sym_strbuf *b, int depth)
{
	Dwarf_Die t;
	int done = -1;
	/* Unions are not entered: which member is meant would be a guess. */
	if (depth < MAX_DEPTH && dwarf_peel_type(type, &t) == 0) {
		switch (dwarf_tag(&t)) {
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
			done = describe_struct(&t, off, b, depth);
			break;
		case DW_TAG_array_type:
			done = describe_array(&t, off, b, depth);
			break;
		}
	}
	if (done < 0 && off)
		sym_strbuf_add(b, "+%" PRIu64, off);
}

void sym_type_describe(Dwarf_Die *type, uint64_t off, struct sym_strbuf *b)
{
	describe(type, off, b, 0);
}

/* Member called name of struct/union st, looking inside anonymous members. */
static int member_named(Dwarf_Die *st, const char *name, Dwarf_Die *mtype,
			uint64_t *moff, int depth)
{
	Dwarf_Die child;
	if (depth >= MAX_DEPTH || dwarf_child(st, &child) != 0)
		return -1;
	do {
		uint64_t o;
		Dwarf_Die t, inner;
		if (dwarf_tag(&child) != DW_TAG_member || member_offset(&child, &o) < 0 ||
		    type_of(&child, &t) < 0)
			continue;
		const char *n = dwarf_diename(&child);
		if (n && strcmp(n, name) == 0) {
			*mtype = t;
			*moff = o;
			return 0;
		}
		if (!n && dwarf_peel_type(&t, &inner) == 0 &&
		    member_named(&inner, name, mtype, moff, depth + 1) == 0) {
			*moff += o;
			return 0;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

/* Where walk() is: a type, or dim indices into an array already given. */
struct walk {
	Dwarf_Die type;
	struct arr_info ai;
	int dim; /* -1: not inside an array */
	uint64_t off, size;
};

static const char *walk_member(struct walk *w, const char **p)
{
	char name[256];
	size_t n = strspn(*p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	if (n == 0 || n >= sizeof(name))
		return "expected a member name after '.'";
	memcpy(name, *p, n);
	name[n] = '\0';
	*p += n;
	Dwarf_Die t, mtype;
	uint64_t moff;
	if (w->dim >= 0)
		return "member of an array";
	if (dwarf_peel_type(&w->type, &t) != 0 ||
	    (dwarf_tag(&t) != DW_TAG_structure_type && dwarf_tag(&t) != DW_TAG_union_type &&
	     dwarf_tag(&t) != DW_TAG_class_type))
		return "member of something not a struct or union";
	if (member_named(&t, name, &mtype, &moff, 0) < 0)
		return "no such member";
	w->type = mtype;
	w->off += moff;
	if (type_size(&mtype, &w->size) < 0)
		w->size = 0;
	return NULL;
}

static const char *walk_index(struct walk *w, const char **p)
{
	char *end;
	uint64_t idx = strtoull(*p, &end, 0);
	if (end == *p || *end != ']')
		return "expected a number and ']' after '['";
	*p = end + 1;
	if (w->dim < 0) {
		Dwarf_Die t;
		if (dwarf_peel_type(&w->type, &t) != 0 || dwarf_tag(&t) != DW_TAG_array_type ||
		    array_info(&t, &w->ai) < 0)
			return "index into something not an array";
		w->dim = 0;
	}
	uint64_t lower = w->ai.lower[w->dim], count = w->ai.count[w->dim];
	if (idx < lower || (count != UNKNOWN_COUNT && idx - lower >= count))
		return "index out of bounds";
	w->off += (idx - lower) * w->ai.stride[w->dim];
	w->size = w->ai.stride[w->dim];
	if (++w->dim == w->ai.ndims) {
		w->type = w->ai.elem;
		w->dim = -1;
	}
	return NULL;
}

const char *sym_type_walk(Dwarf_Die *type, const char *path, uint64_t *off,
			  uint64_t *size)
{
	struct walk w = { .type = *type, .dim = -1 };
	if (type_size(type, &w.size) < 0)
		w.size = 0;
	while (*path) {
		const char *why;
		char c = *path++;
		if (c == '.')
			why = walk_member(&w, &path);
		else if (c == '[')
			why = walk_index(&w, &path);
		else
			why = "expected '.' or '['";
		if (why)
			return why;
	}
	*off = w.off;
	*size = w.size;
	return NULL;
}
