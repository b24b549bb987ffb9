#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolizer/sym.h"
#include "trace/log.h"

static void add_mod(struct sym *s, const struct avt_module *m)
{
	sym_add_module(s, m->rec.id, m->path, m->rec.base, m->rec.lo, m->rec.hi, m->rec.build_id,
		       m->rec.build_id_len);
}

int names_open(struct names *n, const struct trace *t)
{
	memset(n, 0, sizeof *n);
	n->t = t;
	n->sym = sym_new();
	size_t nexec = 0;
	for (size_t i = 0; i < t->nnotes; i++)
		nexec += !strncmp(t->notes[i].text, "exec ", 5);
	n->ngen = nexec + 1;
	n->gen = calloc(n->ngen, sizeof *n->gen);
	n->gen_start = calloc(n->ngen, sizeof *n->gen_start);
	if (!n->sym || !n->gen || !n->gen_start) {
		names_close(n);
		return -1;
	}
	for (size_t i = 0, g = 1; i < t->nnotes; i++)
		if (!strncmp(t->notes[i].text, "exec ", 5))
			n->gen_start[g++] = t->notes[i].after_seq;
	for (size_t g = 0; g < n->ngen; g++)
		n->gen[g] = n->ngen > 1 ? sym_new() : n->sym;
	for (size_t i = 0; i < t->nmod; i++) {
		const struct avt_module *m = &t->mod[i];
		size_t g = 0;
		while (g + 1 < n->ngen && m->after_seq >= n->gen_start[g + 1])
			g++;
		add_mod(n->sym, m);
		if (n->ngen > 1 && n->gen[g])
			add_mod(n->gen[g], m);
	}
	return 0;
}

void names_at(struct names *n, uint64_t seq)
{
	while (n->cur + 1 < n->ngen && seq >= n->gen_start[n->cur + 1])
		n->cur++;
	while (n->cur > 0 && seq < n->gen_start[n->cur])
		n->cur--;
}

void names_close(struct names *n)
{
	for (size_t g = 0; n->gen && g < n->ngen; g++)
		if (n->gen[g] != n->sym)
			sym_free(n->gen[g]);
	free(n->gen);
	free(n->gen_start);
	sym_free(n->sym);
	memset(n, 0, sizeof *n);
}

const char *names_frame(struct names *n, unsigned mod, uint64_t off, int is_return,
			char *buf, size_t len, const char **func)
{
	struct sym_loc loc;
	*func = NULL;
	if (sym_site(n->sym, mod, off, is_return, &loc) == 0)
		*func = loc.func;
	return sym_site_str(n->sym, mod, off, is_return, buf, len);
}

const char *names_site(struct names *n, const struct avt_event *ev, char *buf, size_t len,
		       const char **func)
{
	*func = NULL;
	if (ev->site_mod == AVT_MOD_NONE && ev->site_off == 0) {
		buf[0] = 0;
		return NULL;
	}
	return names_frame(n, ev->site_mod, ev->site_off, !(ev->flags & AVT_F_SITE_EXACT), buf,
			   len, func);
}

const char *names_obj(struct names *n, uint64_t addr, char *buf, size_t len)
{
	struct sym *s = n->gen && n->gen[n->cur] ? n->gen[n->cur] : n->sym;
	return sym_var_name(s, addr, buf, len);
}

const char *names_obj_or_addr(struct names *n, uint64_t addr, char *buf, size_t len)
{
	if (!names_obj(n, addr, buf, len))
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}

struct trace *load_trace(const char *dir)
{
	char path[4096], err[512];
	struct stat st;
	/* a directory holds trace.avt; a file is a trace itself (replays/NNNN.avt) */
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode))
		snprintf(path, sizeof path, "%s", dir);
	else
		snprintf(path, sizeof path, "%s/trace.avt", dir);
	struct trace *t = trace_read(path, err, sizeof err);
	if (!t)
		avt_error("%s", err);
	return t;
}
