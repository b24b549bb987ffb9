/*
 * Programs built with a sanitizer (-fsanitize=address, leak, thread, ...):
 * what the launch must do so that they run under avtrace as they run
 * natively.
 *
 *   - Its runtime first: gcc links the sanitizer runtime as a shared
 *     library (libasan.so.N, libtsan.so.N, libhwasan.so.N), which refuses
 *     to start unless it is the first library in the initial list ("ASan
 *     runtime does not come first ...").  The agent's LD_PRELOAD would
 *     come before it, so the runtime is named in LD_PRELOAD before the
 *     agent (agent.c asks sanitizer_first()): the same library the
 *     program loads anyway, found by the same search, in the order the
 *     program's own symbol lookups see natively.  clang links the runtime
 *     into the program itself: nothing to put first.
 *   - No leak check at exit: LeakSanitizer stops the world with ptrace,
 *     which fails on a traced process ("LeakSanitizer does not work under
 *     ptrace") and exits 1 where the native run exits 0.  detect_leaks=0 is
 *     appended to ASAN_OPTIONS (the last setting of a flag wins), once: a
 *     replay is given the recording's environment, which has it already.
 *
 *   - An allocator of its own first: a program linked with a library that
 *     defines malloc (jemalloc, tcmalloc, mimalloc: redis-server with
 *     jemalloc) gets that library's malloc natively, since it comes before
 *     libc in the lookup.  The agent's malloc (preloaded, so before both)
 *     would take every call to glibc's, and the allocator's own functions
 *     the agent does not define (malloc_usable_size, mallctl) then meet
 *     blocks it never made: redis-server died of SIGSEGV in jemalloc's
 *     malloc_usable_size at its first allocation.  Such a library is named
 *     in LD_PRELOAD before the agent, as a sanitizer runtime is: its
 *     malloc comes first again and the agent's heap stubs go unused (the
 *     heap is then not recorded, as on ptrace: the heap hooks are libc's).
 *
 * The access feature asks tracer_asan(): ASan's shadow memory is not the
 * program's memory (access.c).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer_int.h"

#define LSAN_OFF "detect_leaks=0"

/* A DT_NEEDED runtime that insists on being the first library. */
static bool first_runtime(const char *soname)
{
	static const char *const rt[] = { "libasan.so", "libtsan.so", "libhwasan.so" };
	for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
		if (!strncmp(soname, rt[i], strlen(rt[i])))
			return true;
	return false;
}

/* Does the ELF file at path define malloc?  (elfmod.c's lookup, cached) */
static bool defines_malloc(const char *path)
{
	static const char *const names[] = { "malloc" };
	struct elfsym sym[1];
	int has_symtab;
	return elf_lookup_funcs(path, names, 1, sym, &has_symtab) > 0;
}

/* The file of needed library name, searched for as ld.so does for a
 * program (RPATH, LD_LIBRARY_PATH, RUNPATH, then the default directories;
 * ld.so.cache's other directories are not read): true with it in out. */
static bool find_needed(const char *name, const char *exe, const char *rpath,
			const char *runpath, const char *ldpath, char *out, size_t outlen)
{
	if (strchr(name, '/'))
		return snprintf(out, outlen, "%s", name) < (int)outlen && access(out, R_OK) == 0;
	char origin[PATH_MAX];
	snprintf(origin, sizeof origin, "%s", exe);
	char *slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(origin, ".");
	const char *lists[] = { runpath ? NULL : rpath, ldpath, runpath,
				"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib" };
	for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
		for (const char *p = lists[l]; p && *p;) {
			size_t n = strcspn(p, ":;");
			char dir[PATH_MAX];
			if (n >= 7 && !strncmp(p, "$ORIGIN", 7))
				snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 7), p + 7);
			else if (n >= 9 && !strncmp(p, "${ORIGIN}", 9))
				snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 9), p + 9);
			else
				snprintf(dir, sizeof dir, "%.*s", (int)n, p);
			if (snprintf(out, outlen, "%s/%s", *dir ? dir : ".", name) < (int)outlen &&
			    access(out, R_OK) == 0)
				return true;
			p += n;
			p += *p != 0;
		}
	}
	return false;
}

/* Among the executable's needed libraries, one that defines malloc (not
 * libc): its soname in s->first, unless a sanitizer runtime is there. */
static void scan_allocator(struct sanitizer *s, const char *exe, char needed[][64], size_t n,
			   const char *rpath, const char *runpath, const char *ldpath)
{
	char path[PATH_MAX];
	for (size_t i = 0; i < n && !s->first[0]; i++)
		if (strncmp(needed[i], "libc.so", 7) &&
		    find_needed(needed[i], exe, rpath, runpath, ldpath, path, sizeof path) &&
		    defines_malloc(path)) {
			strcpy(s->first, needed[i]);
			s->allocator = true;
		}
}

/* Reads the executable's dynamic section (DT_NEEDED) and dynamic symbols
 * (__asan_init: referenced by every ASan-instrumented program, defined in
 * it when the runtime is linked in); with allocator, also which needed
 * library defines malloc. */
static void scan_exe(Elf *e, struct sanitizer *s, const char *exe, const char *ldpath,
		     bool allocator)
{
	char needed[32][64];
	size_t nneeded = 0;
	char rpath[1024] = "", runpath[1024] = "";
	bool has_rpath = false, has_runpath = false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name = NULL;
			if (sh.sh_type == SHT_DYNAMIC) {
				GElf_Dyn dyn;
				if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED)
					name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
				if (name && nneeded < 32 && strlen(name) < 64)
					strcpy(needed[nneeded++], name);
				const char *rp;
				if ((dyn.d_tag == DT_RPATH || dyn.d_tag == DT_RUNPATH) &&
				    (rp = elf_strptr(e, sh.sh_link, dyn.d_un.d_val))) {
					bool run = dyn.d_tag == DT_RUNPATH;
					snprintf(run ? runpath : rpath, sizeof rpath, "%s", rp);
					*(run ? &has_runpath : &has_rpath) = true;
				}
				if (name && first_runtime(name) && !s->first[0] &&
				    strlen(name) < sizeof s->first)
					strcpy(s->first, name);
				if (name && !strncmp(name, "libasan.so", 10))
					s->asan = true;
			} else {
				GElf_Sym sym;
				if (gelf_getsym(d, (int)i, &sym))
					name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (name && !strcmp(name, "__asan_init"))
					s->asan = true;
			}
		}
	}
	if (allocator && !s->first[0] && !s->asan)
		scan_allocator(s, exe, needed, nneeded, has_rpath ? rpath : NULL,
			       has_runpath ? runpath : NULL, ldpath);
}

/* name's value in env (NAME=...), or NULL */
static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

/* base with ASAN_OPTIONS ending in detect_leaks=0 (added if missing). */
static char **leak_check_off(char *const *base)
{
	size_t n = 0;
	while (base && base[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	bool seen = false;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *v = base[i];
		size_t len = strlen(v);
		if (!seen && !strncmp(v, "ASAN_OPTIONS=", 13)) {
			seen = true;
			bool has = len >= 13 + strlen(LSAN_OFF) &&
				   !strcmp(v + len - strlen(LSAN_OFF), LSAN_OFF);
			char *s = malloc(len + strlen(LSAN_OFF) + 2);
			if (s)
				snprintf(s, len + strlen(LSAN_OFF) + 2, "%s%s%s", v,
					 has ? "" : len > 13 ? ":" : "", has ? "" : LSAN_OFF);
			env[k++] = s;
		} else {
			env[k++] = strdup(v);
		}
		if (!env[k - 1])
			goto fail;
	}
	if (!seen && !(env[k++] = strdup("ASAN_OPTIONS=" LSAN_OFF)))
		goto fail;
	return env;
fail:
	for (size_t i = 0; i < k; i++)
		free(env[i]);
	free(env);
	return NULL;
}

/* Is path a shared sanitizer runtime (libasan.so.8, libubsan.so.1, ...)? */
bool sanitizer_runtime(const char *path)
{
	static const char *const rt[] = { "libasan.so", "libtsan.so", "libhwasan.so", "liblsan.so",
					  "libubsan.so", "libclang_rt." };
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++)
		if (!strncmp(b, rt[i], strlen(rt[i])))
			return true;
	return false;
}

int sanitizer_prepare(struct tracer *tr)
{
	struct sanitizer *s = &tr->san;
	if (s->prepared)
		return 0;
	s->prepared = true;
	int fd = open(tr->exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* check_exe saw it: the launch says why */
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	extern char **environ;
	if (e)
		scan_exe(e, s, tr->exe, env_get(tr->opts.envp ? tr->opts.envp : environ, "LD_LIBRARY_PATH"),
			 true);
	if (e)
		elf_end(e);
	close(fd);
	if (s->allocator)
		avt_debug("sanitizer: '%s' defines malloc: preloaded before the agent", s->first);
	if (!s->asan)
		return 0;
	s->env = leak_check_off(tr->opts.envp ? tr->opts.envp : environ);
	if (!s->env) {
		avt_error("out of memory");
		return -1;
	}
	tr->opts.envp = s->env;
	return 0;
}

/* The runtime's global variables in module m (the program, with clang's
 * runtime linked in, or libasan.so): reserved names, __asan_* and the
 * like.  Instrumented code reads some (access.c: not the program's
 * memory). */
void sanitizer_module(struct tracer *tr, const struct elfmod *m)
{
	struct sanitizer *s = &tr->san;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_size || s->ndata == 64 ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)) ||
			    (strncmp(name, "__asan_", 7) && strncmp(name, "__sanitizer_", 12) &&
			     strncmp(name, "__lsan_", 7) && strncmp(name, "__ubsan_", 8)))
				continue;
			s->data[s->ndata].lo = m->bias + sym.st_value;
			s->data[s->ndata++].hi = m->bias + sym.st_value + sym.st_size;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

bool sanitizer_data(const struct tracer *tr, uint64_t a)
{
	for (size_t i = 0; i < tr->san.ndata; i++)
		if (a >= tr->san.data[i].lo && a < tr->san.data[i].hi)
			return true;
	return false;
}

const char *sanitizer_first(const struct tracer *tr)
{
	return tr->san.first[0] ? tr->san.first : NULL;
}

bool sanitizer_asan_file(const char *path)
{
	struct sanitizer s;
	memset(&s, 0, sizeof s);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		scan_exe(e, &s, path, NULL, false);
		elf_end(e);
	}
	close(fd);
	return s.asan;
}

bool tracer_asan(const struct tracer *tr)
{
	return tr->san.asan;
}

void sanitizer_free(struct tracer *tr)
{
	for (char **e = tr->san.env; e && *e; e++)
		free(*e);
	free(tr->san.env);
	tr->san.env = NULL;
}
