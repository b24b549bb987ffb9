#include "elfmod.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "trace/scope.h"

static Elf *elf_open_fd(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	Elf *e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		return NULL;
	}
	return e;
}

/* Lowest PT_LOAD vaddr, page aligned: what the first mapping's start
 * corresponds to, hence bias = first mapping start - this. */
static int elf_first_load(Elf *e, uint64_t *vaddr)
{
	size_t n;
	if (elf_getphdrnum(e, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
			return 0;
		}
	}
	return -1;
}

static int build_id_of(Elf *e, uint8_t *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4)) {
				size_t n = nh.n_descsz < len ? nh.n_descsz : len;
				memcpy(buf, (char *)d->d_buf + doff, n);
				return (int)n;
			}
		}
	}
	return 0;
}

int elf_build_id(const char *path, uint8_t *buf, size_t len)
{
	int fd;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return -1;
	int n = build_id_of(e, buf, len);
	elf_end(e);
	close(fd);
	return n;
}

static struct elfmod *modmap_get(struct modmap *mm, const char *path)
{
	for (size_t i = 0; i < mm->n; i++)
		if (!strcmp(mm->m[i].path, path))
			return &mm->m[i];
	struct elfmod *m = realloc(mm->m, (mm->n + 1) * sizeof *m);
	if (!m)
		return NULL;
	mm->m = m;
	m = &mm->m[mm->n++];
	memset(m, 0, sizeof *m);
	m->path = strdup(path);
	m->id = -1;
	return m;
}

/* Fills bias and build-id from the file; drops entries that are not ELF. */
static void modmap_finish(struct modmap *mm)
{
	size_t j = 0;
	for (size_t i = 0; i < mm->n; i++) {
		struct elfmod *m = &mm->m[i];
		int fd;
		Elf *e = elf_open_fd(m->path, &fd);
		uint64_t v0;
		if (!e || elf_first_load(e, &v0) != 0 || !m->xhi) {
			if (e) {
				elf_end(e);
				close(fd);
			}
			free(m->path);
			continue;
		}
		m->bias = m->lo - v0;
		/* .bss lies past the file-backed mappings: cover it, so that
		 * variables there belong to the module */
		size_t nph;
		if (elf_getphdrnum(e, &nph) == 0)
			for (size_t k = 0; k < nph; k++) {
				GElf_Phdr ph;
				if (gelf_getphdr(e, (int)k, &ph) && ph.p_type == PT_LOAD) {
					uint64_t end = (m->bias + ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
					if (end > m->hi)
						m->hi = end;
				}
			}
		int n = build_id_of(e, m->build_id, sizeof m->build_id);
		m->build_id_len = n > 0 ? (uint16_t)n : 0;
		elf_end(e);
		close(fd);
		mm->m[j++] = *m;
	}
	mm->n = j;
}

int modmap_load(struct modmap *mm, pid_t pid)
{
	char path[64], line[4352];
	memset(mm, 0, sizeof *mm);
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off;
		char perms[8], file[4096] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, file) < 4)
			continue;
		if (file[0] != '/')
			continue;
		struct elfmod *m = modmap_get(mm, file);
		if (!m)
			break;
		if (!m->lo || lo < m->lo)
			m->lo = lo;
		if (hi > m->hi)
			m->hi = hi;
		if (perms[2] == 'x') {
			if (!m->xlo || lo < m->xlo)
				m->xlo = lo;
			if (hi > m->xhi)
				m->xhi = hi;
		}
	}
	fclose(f);
	modmap_finish(mm);
	return 0;
}

void modmap_release(struct modmap *mm)
{
	for (size_t i = 0; i < mm->n; i++)
		free(mm->m[i].path);
	free(mm->m);
	memset(mm, 0, sizeof *mm);
}

struct elfmod *modmap_find(const struct modmap *mm, uint64_t addr)
{
	for (size_t i = 0; i < mm->n; i++)
		if (addr >= mm->m[i].lo && addr < mm->m[i].hi)
			return &mm->m[i];
	return NULL;
}

struct elfmod *modmap_find_name(const struct modmap *mm, const char *prefix)
{
	for (size_t i = 0; i < mm->n; i++) {
		const char *b = strrchr(mm->m[i].path, '/');
		b = b ? b + 1 : mm->m[i].path;
		if (!strncmp(b, prefix, strlen(prefix)))
			return &mm->m[i];
	}
	return NULL;
}

/* One symbol table: a definition counts if it is a function (or IFUNC)
 * with a value; among versions prefer the default one (versym without the
 * hidden bit), since that is what programs link against. */
static void scan_symtab(Elf *e, Elf_Scn *scn, const char *const *names, size_t n,
			struct elfsym *out, int *quality)
{
	GElf_Shdr sh;
	gelf_getshdr(scn, &sh);
	Elf_Data *d = elf_getdata(scn, NULL);
	Elf_Data *ver = NULL;
	if (sh.sh_type == SHT_DYNSYM) {
		Elf_Scn *s = NULL;
		while ((s = elf_nextscn(e, s))) {
			GElf_Shdr vsh;
			if (gelf_getshdr(s, &vsh) && vsh.sh_type == SHT_GNU_versym)
				ver = elf_getdata(s, NULL);
		}
	}
	size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	for (size_t i = 0; d && i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value || sym.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!nm)
			continue;
		int q = 2;
		GElf_Versym vs;
		if (ver && gelf_getversym(ver, (int)i, &vs))
			q = (vs & 0x8000) ? 1 : 2;
		if (GELF_ST_BIND(sym.st_info) == STB_LOCAL)
			q = 1;
		for (size_t k = 0; k < n; k++) {
			if (strcmp(nm, names[k]) || q <= quality[k])
				continue;
			out[k].value = sym.st_value;
			out[k].size = sym.st_size;
			quality[k] = q;
		}
	}
}

static int lookup_funcs(const char *path, const char *const *names, size_t n,
			struct elfsym *out, int *has_symtab)
{
	int fd;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return -1;
	int *quality = calloc(n ? n : 1, sizeof *quality);
	memset(out, 0, n * sizeof *out);
	*has_symtab = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			*has_symtab = 1;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			scan_symtab(e, scn, names, n, out, quality);
	}
	int found = 0;
	for (size_t k = 0; k < n; k++)
		found += out[k].value != 0;
	free(quality);
	elf_end(e);
	close(fd);
	return found;
}

/* The answer as the shared cache keeps it (cache.c: every explored run
 * looks up the same hooks in the same libc). */
struct lookup_blob {
	int32_t found, has_symtab;
	struct elfsym out[];
};

int elf_lookup_funcs(const char *path, const char *const *names, size_t n,
		     struct elfsym *out, int *has_symtab)
{
	uint64_t key = cache_file_key(0x10c, path);
	if (key) {
		for (size_t i = 0; i < n; i++)
			key = cache_key(key, names[i], strlen(names[i]) + 1);
		size_t len;
		const struct lookup_blob *b = cache_get_blob(key, &len);
		if (b && len == sizeof *b + n * sizeof *out) {
			memcpy(out, b->out, n * sizeof *out);
			*has_symtab = b->has_symtab;
			return b->found;
		}
	}
	int found = lookup_funcs(path, names, n, out, has_symtab);
	size_t len = sizeof(struct lookup_blob) + n * sizeof *out;
	struct lookup_blob *b = key && found >= 0 ? malloc(len) : NULL;
	if (b) {
		b->found = found;
		b->has_symtab = *has_symtab;
		memcpy(b->out, out, n * sizeof *out);
		cache_put_blob(key, b, len);
		free(b);
	}
	return found;
}

int elf_check_exec(const char *path, int *is_static, char *why, size_t whylen)
{
	int fd;
	*is_static = 0;
	Elf *e = elf_open_fd(path, &fd);
	if (!e) {
		snprintf(why, whylen, "not an ELF file");
		return -1;
	}
	GElf_Ehdr eh;
	int rc = 0;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(e) != ELFCLASS64) {
		snprintf(why, whylen, "not an x86-64 ELF file");
		rc = -1;
	} else if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		snprintf(why, whylen, "not an ELF executable");
		rc = -1;
	} else {
		size_t nph;
		*is_static = 1;
		if (elf_getphdrnum(e, &nph) == 0)
			for (size_t i = 0; i < nph; i++) {
				GElf_Phdr ph;
				if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
					*is_static = 0;
			}
	}
	elf_end(e);
	close(fd);
	return rc;
}

/* Functions that start a thread: a program that links none of them runs
 * one thread (a shell, make, env, timeout), whatever it execs. */
static bool thread_start_name(const char *nm)
{
	static const char *const names[] = { "pthread_create", "thrd_create", "g_thread_new",
					     "g_thread_try_new", "g_thread_create", "g_thread_create_full",
					     "g_thread_pool_new", "g_thread_pool_new_full" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(nm, names[i]))
			return true;
	return !strncmp(nm, "_ZNSt6thread15_M_start_thread", 29); /* std::thread, jthread */
}

bool elf_starts_threads(const char *path)
{
	int fd;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return false;
	bool found = false;
	Elf_Scn *scn = NULL;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < count && !found; i++) {
			GElf_Sym sym;
			const char *nm = gelf_getsym(d, (int)i, &sym) ? elf_strptr(e, sh.sh_link, sym.st_name) : NULL;
			found = nm && thread_start_name(nm);
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

int modmap_copy(struct modmap *dst, const struct modmap *src)
{
	memset(dst, 0, sizeof *dst);
	if (!src->n)
		return 0;
	dst->m = calloc(src->n, sizeof *dst->m);
	if (!dst->m)
		return -1;
	for (size_t i = 0; i < src->n; i++) {
		dst->m[i] = src->m[i];
		dst->m[i].path = strdup(src->m[i].path);
		dst->n = i + 1;
		if (!dst->m[i].path) {
			modmap_release(dst);
			return -1;
		}
	}
	return 0;
}

bool elfmod_user_code(const char *path, const char *scope)
{
	return avt_user_code_path(path, scope);
}
