#include "names.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolizer/sym.h"
#include "trace/log.h"

int names_open(struct names *n, const struct trace *t)
{
	n->t = t;
	n->sym = sym_new();
	if (!n->sym)
		return -1;
	for (size_t i = 0; i < t->nmod; i++) {
		const struct avt_module *m = &t->mod[i];
		sym_add_module(n->sym, m->rec.id, m->path, m->rec.base, m->rec.lo, m->rec.hi,
			       m->rec.build_id, m->rec.build_id_len);
	}
	return 0;
}

void names_close(struct names *n)
{
	sym_free(n->sym);
	n->sym = NULL;
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
	return sym_var_name(n->sym, addr, buf, len);
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
