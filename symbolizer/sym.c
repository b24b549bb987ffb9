/*
 * The session and its module table: registration, lookup by id and by
 * address, and opening a module's file with libdwfl on first use.
 *
 * Each module gets a Dwfl of its own rather than sharing one: modules come
 * from traces and tests as well as live processes, and two executables
 * registered at the same bias would otherwise collide in one address map.
 */
#include "sym_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/log.h"

struct sym *sym_new(void)
{
	struct sym *s = calloc(1, sizeof(*s));
	if (!s) {
		avt_error("cannot start a symbolizer session: out of memory");
		return NULL;
	}
	sym_hash_init(&s->sites);
	sym_hash_init(&s->vars);
	const char *unw = getenv("AVTRACE_UNWINDER");
	if (unw && *unw && sym_set_unwinder(s, unw) < 0)
		avt_warn("unknown unwinder '%s' in AVTRACE_UNWINDER, using '%s'", unw,
			 sym_unwinder_name(s));
	return s;
}

static void mod_free(struct sym_mod *m)
{
	sym_vartab_release(&m->vars);
	sym_cutab_release(&m->cutab);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->path);
	free(m);
}

void sym_free(struct sym *s)
{
	if (!s)
		return;
	sym_unwind_release(s);
	sym_hash_release(&s->sites, sym_site_ent_free);
	sym_hash_release(&s->vars, sym_var_name_free);
	for (size_t i = 0; i < s->nids; i++)
		if (s->mods[i])
			mod_free(s->mods[i]);
	free(s->mods);
	free(s->by_addr);
	free(s);
}

void sym_caches_clear(struct sym *s)
{
	sym_hash_clear(&s->sites, sym_site_ent_free);
	sym_hash_clear(&s->vars, sym_var_name_free);
}

struct sym_mod *sym_mod_by_id(const struct sym *s, unsigned id)
{
	return id < s->nids ? s->mods[id] : NULL;
}

/* Index of the last module in by_addr with lo <= addr, or -1. */
static long last_at_or_below(const struct sym *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmods;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->by_addr[mid]->lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

struct sym_mod *sym_mod_by_addr(const struct sym *s, uint64_t addr)
{
	long i = last_at_or_below(s, addr);
	if (i < 0 || addr >= s->by_addr[i]->hi)
		return NULL;
	return s->by_addr[i];
}

static int grow_ids(struct sym *s, unsigned id)
{
	if (id < s->nids)
		return 0;
	size_t n = id + 1u;
	struct sym_mod **mods = realloc(s->mods, n * sizeof(*mods));
	if (!mods)
		return -1;
	memset(mods + s->nids, 0, (n - s->nids) * sizeof(*mods));
	s->mods = mods;
	s->nids = n;
	return 0;
}

static int insert_by_addr(struct sym *s, struct sym_mod *m)
{
	struct sym_mod **v = realloc(s->by_addr, (s->nmods + 1) * sizeof(*v));
	if (!v)
		return -1;
	s->by_addr = v;
	size_t at = (size_t)(last_at_or_below(s, m->lo) + 1);
	memmove(v + at + 1, v + at, (s->nmods - at) * sizeof(*v));
	v[at] = m;
	s->nmods++;
	return 0;
}

static struct sym_mod *mod_new(unsigned id, const char *path, uint64_t base,
			       uint64_t lo, uint64_t hi)
{
	struct sym_mod *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return NULL;
	}
	const char *slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	m->id = id;
	m->base = base;
	m->lo = lo;
	m->hi = hi;
	return m;
}

int sym_add_module(struct sym *s, unsigned id, const char *path, uint64_t base,
		   uint64_t lo, uint64_t hi, const uint8_t *build_id,
		   size_t build_id_len)
{
	if (id >= SYM_MOD_NONE || sym_mod_by_id(s, id) || lo >= hi || !path) {
		avt_error("cannot register module %u '%s': %s", id, path ? path : "",
			  lo >= hi ? "empty range" : "bad or duplicate id");
		return -1;
	}
	struct sym_mod *m = mod_new(id, path, base, lo, hi);
	if (!m || grow_ids(s, id) < 0 || insert_by_addr(s, m) < 0) {
		avt_error("cannot register module '%s': out of memory", path);
		if (m)
			mod_free(m);
		return -1;
	}
	s->mods[id] = m;
	if (build_id && build_id_len) {
		m->build_id_len = build_id_len < SYM_BUILD_ID_MAX ? build_id_len
								  : SYM_BUILD_ID_MAX;
		memcpy(m->build_id, build_id, m->build_id_len);
	}
	/* An address cached as "in no module" may be in this one now. */
	sym_caches_clear(s);
	return 0;
}

/* dwfl_build_id_find_elf is never consulted for a module reported with
 * dwfl_report_elf; the standard debuginfo finder follows .gnu_debuglink and
 * /usr/lib/debug/.build-id. */
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int build_id_matches(struct sym_mod *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(m->dm, &bits, &vaddr);
	if (len <= 0)
		return 0;
	size_t n = (size_t)len < SYM_BUILD_ID_MAX ? (size_t)len : SYM_BUILD_ID_MAX;
	return n == m->build_id_len && memcmp(bits, m->build_id, n) == 0;
}

static void mod_fall_back(struct sym_mod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->dm = NULL;
	m->state = SYM_MOD_FALLBACK;
}

static void mod_open(struct sym_mod *m)
{
	struct stat st;
	/* the path comes from a trace, which may come from anywhere: opening
	 * a FIFO would block, a device be read without end */
	if (stat(m->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		avt_warn("cannot read module '%s': not a regular file", m->path);
		mod_fall_back(m);
		return;
	}
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl) {
		avt_warn("cannot read module '%s': %s", m->path, dwfl_errmsg(-1));
		mod_fall_back(m);
		return;
	}
	dwfl_report_begin(m->dwfl);
	/* add_p_vaddr: base is the bias, whatever the first segment's p_vaddr. */
	m->dm = dwfl_report_elf(m->dwfl, m->name, m->path, -1, m->base, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->dm) {
		avt_warn("cannot read module '%s': %s", m->path, dwfl_errmsg(-1));
		mod_fall_back(m);
		return;
	}
	if (m->build_id_len && !build_id_matches(m)) {
		avt_warn("build-id of '%s' differs from the recorded one, "
			 "showing its sites as module+offset", m->path);
		mod_fall_back(m);
		return;
	}
	m->state = SYM_MOD_READY;
}

int sym_mod_ready(struct sym_mod *m)
{
	if (m->state == SYM_MOD_UNOPENED)
		mod_open(m);
	return m->state == SYM_MOD_READY;
}

size_t sym_module_count(const struct sym *s)
{
	return s->nmods;
}

static void module_info(const struct sym_mod *m, struct sym_module_info *out)
{
	out->id = m->id;
	out->path = m->path;
	out->base = m->base;
	out->lo = m->lo;
	out->hi = m->hi;
	out->build_id = m->build_id_len ? m->build_id : NULL;
	out->build_id_len = m->build_id_len;
}

int sym_module_get(const struct sym *s, size_t i, struct sym_module_info *out)
{
	for (size_t id = 0; id < s->nids; id++) {
		if (!s->mods[id])
			continue;
		if (i-- == 0) {
			module_info(s->mods[id], out);
			return 0;
		}
	}
	return -1;
}

int sym_module_of(const struct sym *s, uint64_t addr, unsigned *id, uint64_t *off)
{
	struct sym_mod *m = sym_mod_by_addr(s, addr);
	if (!m)
		return -1;
	*id = m->id;
	*off = addr - m->base;
	return 0;
}

void sym_get_stats(const struct sym *s, struct sym_stats *out)
{
	*out = s->stats;
}
