/*
 * Modules of a traced process (from /proc/PID/maps) and the ELF facts the
 * tracer needs about them: load bias, build-id, function symbols.
 *
 * Ownership: struct modmap owns its array and the path strings.
 */
#ifndef AVT_TRACER_ELFMOD_H
#define AVT_TRACER_ELFMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct elfmod {
	char *path;
	uint64_t lo, hi;   /* whole mapped range of the file */
	uint64_t xlo, xhi; /* executable part */
	uint64_t bias;     /* runtime address = bias + ELF virtual address */
	uint8_t build_id[20];
	uint16_t build_id_len;
	int id;            /* trace module id, assigned by the tracer */
};

struct modmap {
	struct elfmod *m;
	size_t n;
};

/* Reads /proc/PID/maps: one entry per file-backed ELF mapping. */
int modmap_load(struct modmap *mm, pid_t pid);
void modmap_release(struct modmap *mm);
/* dst: a deep copy of src (0, or -1 out of memory, dst empty). */
int modmap_copy(struct modmap *dst, const struct modmap *src);
/* The module containing addr, or NULL. */
struct elfmod *modmap_find(const struct modmap *mm, uint64_t addr);
/* First module whose basename starts with prefix ("libc.so"), or NULL. */
struct elfmod *modmap_find_name(const struct modmap *mm, const char *prefix);

/* Is the module at path the user's code: not the dynamic linker nor
 * avtrace's agent, and outside the system directories (/usr/lib, /usr/bin,
 * ...) unless scope (--access-scope: "all", or file names separated by
 * commas, "libc" matching libc.so.6 but not libcrypto.so.3) names it? */
bool elfmod_user_code(const char *path, const char *scope);

/* A function symbol found in an ELF file. */
struct elfsym {
	uint64_t value;  /* ELF virtual address */
	uint64_t size;
};

/* Looks up the default-version definitions of names[0..n) in the file's
 * .dynsym and .symtab; out[i].value == 0 when not found.  Returns the number
 * found, or -1 if the file cannot be read as ELF.  *has_symtab tells whether
 * a .symtab was present (a stripped static binary has neither). */
int elf_lookup_funcs(const char *path, const char *const *names, size_t n,
		     struct elfsym *out, int *has_symtab);

/* Build-id of an ELF file; returns its length (0 if none, -1 on error). */
int elf_build_id(const char *path, uint8_t *buf, size_t len);

/* ELF checks before launch: 0 if path is an ELF executable for this machine;
 * else -1 and a reason in why ("not an ELF file", ...). *is_static is set
 * when it has no PT_INTERP. */
int elf_check_exec(const char *path, int *is_static, char *why, size_t whylen);

/* Does the ELF file call (or define) a function that starts a thread:
 * pthread_create, thrd_create, std::thread's, GLib's?  Its symbol tables
 * say; a program without one is single-threaded (a shell, a runner). */
bool elf_starts_threads(const char *path);

#endif
