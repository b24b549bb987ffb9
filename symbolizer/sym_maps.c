/*
 * Registering the modules of a live process from /proc/PID/maps.
 *
 * A module is every mapping of one ELF file; its bias comes from the
 * mapping of the first PT_LOAD's page (bias = where that page is mapped -
 * its page-aligned p_vaddr), and its range is widened to the end of the
 * last PT_LOAD in memory so that .bss, which the kernel maps anonymously
 * past the file, counts as the module's (globals live there).
 */
#include "sym_int.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/log.h"

struct mapping {
	uint64_t start, end, offset;
};

/* All mappings of one file. */
struct mfile {
	char *path;
	struct mapping *map;
	size_t nmap;
};

struct mfiles {
	struct mfile *f;
	size_t n;
};

static void mfiles_release(struct mfiles *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->f[i].path);
		free(fs->f[i].map);
	}
	free(fs->f);
}

static struct mfile *mfile_get(struct mfiles *fs, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (strcmp(fs->f[i].path, path) == 0)
			return &fs->f[i];
	struct mfile *f = realloc(fs->f, (fs->n + 1) * sizeof(*f));
	if (!f)
		return NULL;
	fs->f = f;
	f = &fs->f[fs->n];
	*f = (struct mfile){ strdup(path), NULL, 0 };
	if (!f->path)
		return NULL;
	fs->n++;
	return f;
}

static int mfile_add(struct mfile *f, const struct mapping *m)
{
	struct mapping *v = realloc(f->map, (f->nmap + 1) * sizeof(*v));
	if (!v)
		return -1;
	f->map = v;
	v[f->nmap++] = *m;
	return 0;
}

/* One line of maps: file-backed mappings only (not [heap], not deleted). */
static int parse_line(char *line, struct mapping *m, char **path)
{
	unsigned long long start, end, offset, inode;
	int pos = 0;
	if (sscanf(line, "%llx-%llx %*s %llx %*s %llu %n", &start, &end, &offset,
		   &inode, &pos) != 4 || pos == 0 || inode == 0)
		return -1;
	char *p = line + pos;
	p[strcspn(p, "\n")] = '\0';
	size_t n = strlen(p);
	if (p[0] != '/' || (n > 10 && strcmp(p + n - 10, " (deleted)") == 0))
		return -1;
	*m = (struct mapping){ start, end, offset };
	*path = p;
	return 0;
}

static int read_maps(pid_t pid, struct mfiles *fs)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(fn, "re");
	if (!fp) {
		avt_error("cannot read '%s': %s", fn, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &cap, fp) > 0) {
		struct mapping m;
		char *path;
		struct mfile *f;
		if (parse_line(line, &m, &path) < 0)
			continue;
		if (!(f = mfile_get(fs, path)) || mfile_add(f, &m) < 0)
			rc = -1;
	}
	free(line);
	fclose(fp);
	if (rc < 0)
		avt_error("cannot read '%s': out of memory", fn);
	return rc;
}

/* What a file contributes as a module. */
struct modgeom {
	uint64_t bias, lo, hi;
	uint8_t build_id[SYM_BUILD_ID_MAX];
	size_t build_id_len;
};

/* Lowest and highest PT_LOAD (page-aligned start, end in memory). */
static int load_span(Elf *elf, uint64_t *first_vaddr, uint64_t *first_off, uint64_t *end)
{
	size_t n;
	int found = 0;
	long page = sysconf(_SC_PAGESIZE);
	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t e = ph.p_vaddr + ph.p_memsz;
		if (!found || ph.p_vaddr < *first_vaddr) {
			*first_vaddr = ph.p_vaddr & ~(uint64_t)(page - 1);
			*first_off = ph.p_offset & ~(uint64_t)(page - 1);
		}
		if (!found || e > *end)
			*end = e;
		found = 1;
	}
	*end = (*end + (uint64_t)page - 1) & ~(uint64_t)(page - 1);
	return found ? 0 : -1;
}

static int elf_geometry(Elf *elf, const struct mfile *f, struct modgeom *g)
{
	GElf_Ehdr eh;
	uint64_t vaddr = 0, off = 0, end = 0;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    load_span(elf, &vaddr, &off, &end) < 0)
		return -1;
	size_t i;
	for (i = 0; i < f->nmap && f->map[i].offset != off; i++)
		;
	if (i == f->nmap)
		return -1;
	g->bias = f->map[i].start - vaddr;
	g->lo = f->map[0].start;
	g->hi = f->map[f->nmap - 1].end;
	for (i = 0; i < f->nmap; i++) {
		g->lo = f->map[i].start < g->lo ? f->map[i].start : g->lo;
		g->hi = f->map[i].end > g->hi ? f->map[i].end : g->hi;
	}
	if (g->bias + end > g->hi)
		g->hi = g->bias + end;
	const void *bid;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &bid);
	g->build_id_len = len > 0 ? ((size_t)len < SYM_BUILD_ID_MAX ? (size_t)len
								    : SYM_BUILD_ID_MAX)
				  : 0;
	memcpy(g->build_id, bid, g->build_id_len);
	return 0;
}

/* Geometry of an ELF executable or library; -1 for other files (fonts,
 * locale archives, ...) which are silently not modules. */
static int file_geometry(const struct mfile *f, struct modgeom *g)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = elf ? elf_geometry(elf, f, g) : -1;
	elf_end(elf);
	close(fd);
	return rc;
}

static int registered_at(const struct sym *s, const char *path, uint64_t lo)
{
	struct sym_mod *m = sym_mod_by_addr(s, lo);
	return m && m->lo == lo && strcmp(m->path, path) == 0;
}

static int add_file(struct sym *s, const struct mfile *f)
{
	struct modgeom g;
	if (file_geometry(f, &g) < 0 || registered_at(s, f->path, g.lo))
		return 0;
	/* After the highest id in use, so ids from a trace are never reused. */
	unsigned id = (unsigned)s->nids;
	if (sym_add_module(s, id, f->path, g.bias, g.lo, g.hi, g.build_id,
			   g.build_id_len) < 0)
		return -1;
	return 1;
}

/* Index of the executable's entry in fs, or -1. */
static long find_exe(pid_t pid, const struct mfiles *fs)
{
	char fn[64], exe[PATH_MAX];
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(fn, exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	for (size_t i = 0; i < fs->n; i++)
		if (strcmp(fs->f[i].path, exe) == 0)
			return (long)i;
	return -1;
}

int sym_add_process(struct sym *s, pid_t pid)
{
	struct mfiles fs = { 0 };
	int added = 0;
	elf_version(EV_CURRENT);
	if (read_maps(pid, &fs) < 0) {
		mfiles_release(&fs);
		return -1;
	}
	long exe = find_exe(pid, &fs);
	if (exe >= 0)
		added = add_file(s, &fs.f[exe]);
	for (size_t i = 0; i < fs.n && added >= 0; i++) {
		int rc = (long)i == exe ? 0 : add_file(s, &fs.f[i]);
		added = rc < 0 ? -1 : added + rc;
	}
	mfiles_release(&fs);
	return added;
}
