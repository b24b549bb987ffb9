/*
 * The exec of a sanitizer build with an environment of the program's
 * making (a feature: struct tracer_feature, features.c).
 *
 * avtrace launches an ASan program with detect_leaks=0 appended to
 * ASAN_OPTIONS (sanitizer.c): LeakSanitizer stops the world with ptrace at
 * exit, which fails on a traced process ("LeakSanitizer does not work
 * under ptrace"), and the program would exit 1 where it exits 0 natively.
 * A program that execs another with an environment of its own (execve's
 * envp: an empty one, a test runner's clean one) drops that setting, and
 * an ASan build it starts so failed at its exit (exec_noenv, bench/asan).
 *
 * So libc's execve (every exec function and posix_spawn's child end in
 * it) gets a breakpoint in every image.  At a call whose path is an ASan
 * build (sanitizer_asan_file) and whose environment does not end
 * ASAN_OPTIONS in detect_leaks=0, a copy of envp with that setting
 * (ASAN_OPTIONS extended, or added last) is written below the thread's
 * stack pointer, out of the red zone, and the call goes on with it: the
 * new image sees what a launch by avtrace would have given it, and no
 * other variable changes.  Anything else, or a copy that cannot be
 * written, goes on untouched.  Not a scheduling point and no event: the
 * recording and its replays do the same at the same call.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "ptrace_util.h"
#include "trace/log.h"
#include "tracer_int.h"

#define LSAN_OFF "detect_leaks=0"
/* Entries of an envp read at most (the kernel's own limit is in bytes). */
#define ENV_MAX 65536
/* Below the stack pointer: the red zone, and room to spare. */
#define BELOW_SP 512

int sanexec_plant(struct tracer *tr, struct tthread *t, char *why, size_t len)
{
	(void)t, (void)why, (void)len;
	static const char *const name[] = { "execve" };
	struct elfmod *m = modmap_find_name(&tr->proc->as.mods, "libc.so");
	struct elfsym sym;
	int has_symtab;
	char w[256];
	for (size_t i = 0; !m && i < tr->proc->as.mods.n; i++) /* static: its own */
		if (!strcmp(tr->proc->as.mods.m[i].path, tr->exe))
			m = &tr->proc->as.mods.m[i];
	if (!m || elf_lookup_funcs(m->path, name, 1, &sym, &has_symtab) != 1 || !sym.value)
		return 0;
	if (bpt_insert_entry(&tr->proc->as.bpts, m->bias + sym.value, sym.size, BK_EXECVE, 0, w,
			     sizeof w) < 0)
		avt_debug("no breakpoint at execve in '%s': %s", m->path, w);
	return 0;
}

/* The NUL-terminated string at addr of pid's memory into buf; false if it
 * cannot be read or is longer than len - 1. */
static bool read_str(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;
	while (got + 1 < len) {
		size_t chunk = 64 - (addr + got) % 64; /* never across a page */
		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		if (ptu_read(pid, addr + got, buf + got, chunk) < 0)
			return false;
		void *nul = memchr(buf + got, 0, chunk);
		if (nul)
			return true;
		got += chunk;
	}
	return false;
}

/* The file execve's path names, as the calling thread tid sees it. */
static bool exec_path(pid_t tid, const char *path, char *out, size_t len)
{
	if (path[0] == '/')
		return snprintf(out, len, "%s", path) < (int)len;
	char link[64], cwd[PATH_MAX];
	snprintf(link, sizeof link, "/proc/%d/cwd", (int)tid);
	ssize_t n = readlink(link, cwd, sizeof cwd - 1);
	if (n <= 0)
		return false;
	cwd[n] = 0;
	return snprintf(out, len, "%s/%s", cwd, path) < (int)len;
}

/* The envp at addr (0: none, an empty one): its entries' addresses into
 * *out (the terminating 0 not counted, *n); the index of its ASAN_OPTIONS entry in *asan (-1:
 * none) and whether that ends in detect_leaks=0.  False if unreadable. */
static bool read_env(pid_t pid, uint64_t addr, uint64_t **out, size_t *n, long *asan, bool *off,
		     char *val, size_t vlen)
{
	size_t cap = 64;
	uint64_t *v = malloc(cap * sizeof *v);
	*n = 0;
	*asan = -1;
	*off = false;
	if (v && !addr) { /* NULL: an empty environment, to Linux */
		*out = v;
		return true;
	}
	for (; v; (*n)++) {
		if (*n == cap) {
			uint64_t *nv = cap < ENV_MAX ? realloc(v, cap * 2 * sizeof *v) : NULL;
			if (!nv)
				break;
			v = nv;
			cap *= 2;
		}
		if (ptu_read_u64(pid, addr + *n * 8, &v[*n]) < 0)
			break;
		if (!v[*n]) {
			*out = v;
			return true;
		}
		char head[16];
		if (*asan >= 0 || ptu_read(pid, v[*n], head, 13) < 0 || memcmp(head, "ASAN_OPTIONS=", 13))
			continue;
		/* the first one counts, as getenv's */
		*asan = (long)*n;
		if (!read_str(pid, v[*n], val, vlen))
			break;
		size_t l = strlen(val), k = strlen(LSAN_OFF);
		*off = l >= 13 + k && !strcmp(val + l - k, LSAN_OFF);
	}
	free(v);
	return false;
}

/* A copy of envp (entries e[0 .. n), ASAN_OPTIONS at asan with value
 * val, or none) with the leak check off, written below sp: its address,
 * or 0. */
static uint64_t write_env(struct tracer *tr, uint64_t sp, const uint64_t *e, size_t n, long asan,
			  const char *val)
{
	char s[PATH_MAX + 64];
	if (asan >= 0)
		snprintf(s, sizeof s, "%s%s%s", val, strlen(val) > 13 ? ":" : "", LSAN_OFF);
	else
		snprintf(s, sizeof s, "ASAN_OPTIONS=%s", LSAN_OFF);
	size_t slen = strlen(s) + 1, count = n + (asan < 0) + 1;
	uint64_t arr = (sp - BELOW_SP - slen - count * 8) & ~(uint64_t)15, str = arr + count * 8;
	uint64_t *copy = malloc(count * sizeof *copy);
	if (!copy)
		return 0;
	memcpy(copy, e, n * sizeof *e);
	if (asan >= 0)
		copy[asan] = str;
	else
		copy[n] = str;
	copy[count - 1] = 0;
	int rc = ptu_write(tr->proc->memfd, arr, copy, count * 8) | ptu_write(tr->proc->memfd, str, s, slen);
	free(copy);
	return rc < 0 ? 0 : arr;
}

struct next sanexec_hit(struct tracer *tr, struct tthread *t, const struct bpt *b,
			struct user_regs_struct *r, const struct user_regs_struct *now)
{
	char path[PATH_MAX], file[PATH_MAX], val[PATH_MAX];
	uint64_t *env = NULL;
	size_t n;
	long asan;
	bool off;
	if (read_str(tr->proc->pid, r->rdi, path, sizeof path) &&
	    exec_path(t->tid, path, file, sizeof file) && sanitizer_asan_file(file) &&
	    read_env(tr->proc->pid, r->rdx, &env, &n, &asan, &off, val, sizeof val) && !off) {
		uint64_t copy = write_env(tr, r->rsp, env, n, asan, val);
		if (copy) {
			avt_debug("T%u: execve of ASan build '%s': %s in its environment", t->lid, file,
				  "ASAN_OPTIONS=..." LSAN_OFF);
			r->rdx = copy;
		}
	}
	free(env);
	struct user_regs_struct go = *r;
	go.rip = bpt_resume_pc(b);
	return now ? nx_regs_changed(&go, now) : nx_regs(nx(NX_RESUME), &go);
}
