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
 * The access feature asks tracer_asan(): ASan's shadow memory is not the
 * program's memory (access.c).
 */
#include <fcntl.h>
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

/* Reads the executable's dynamic section (DT_NEEDED) and dynamic symbols
 * (__asan_init: referenced by every ASan-instrumented program, defined in
 * it when the runtime is linked in). */
static void scan_exe(Elf *e, struct sanitizer *s)
{
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
	if (e)
		scan_exe(e, s);
	if (e)
		elf_end(e);
	close(fd);
	if (!s->asan)
		return 0;
	extern char **environ;
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
