/*
 * Access breakpoints: every instruction of the program's own code that
 * can touch shared memory stops the thread before it runs, and the stop
 * is a read, write or read-modify-write event with the exact address,
 * size and kind decoded from the instruction (decode/).
 *
 * Which code: the executable and the shared libraries outside the system
 * directories (/lib, /usr/lib, ...): libc, ld.so, libstdc++ stay
 * uninstrumented, and so do the distribution's own programs (/usr/bin,
 * /bin, ...).  Each executable section is decoded function by
 * function (ELF symbols; in a module with no symbol table, the exported
 * ones and the .eh_frame FDEs between them: fde.c), and an int3 goes on
 * each instruction with a memory operand, except:
 *   - no access: lea, nop, prefetch; branches through memory (PLT, vtable
 *     calls: a code pointer, and they cannot run out of line);
 *   - thread-local: fs/gs-relative operands (TLS, the stack canary);
 *   - frame-local: rsp-based operands, and rbp-based ones in a function
 *     that sets up a frame pointer (mov %rsp,%rbp), unless the function
 *     lets the address of its frame escape: any lea X(%rsp|%rbp),reg or
 *     mov %rsp|%rbp,reg copies a frame address into a register, which may
 *     be passed to another thread (&e in pthread_create(..., &e)).  Such
 *     a function keeps all its frame accesses; the budget below removes
 *     the private ones.
 * A stop runs the displaced instruction out of line (bpt.c) from a slot
 * in a scratch area mapped near the module, so rip-relative operands
 * reach their globals.  Code that cannot be decoded or relocated is
 * skipped, counted, and said once in a trace note.
 *
 * Cost: a site whose hits have all been private - every address it
 * touched was touched by no other thread so far - is removed after
 * `budget` such hits (default 256), counting those made before a second
 * thread of the process started only 1/ALONE_FACTOR each.  One shared
 * hit keeps a site for good.  Hits made before any other thread ran say
 * little of sharing: a function that main runs on the data before it
 * starts the threads that share it (a parallel sort's first partition)
 * would otherwise lose its breakpoints before any other thread could
 * touch that data; the larger budget still sheds the breakpoints of a
 * long single-threaded start (or program).  Once threads have run, a
 * thread alone again (main between batches of workers) counts as any:
 * the sites it shares were seen shared by then.
 * The removal is an AVT_REC_DISARM record (site, hits); a replay (and
 * explore, which replays) is given those records and removes each site
 * after the same number of hits and makes no decision of its own, so
 * its events line up with the recording's.
 *
 * Kinds: from the decoded operand; a cmpxchg is decided at commit, when
 * the thread is about to run it and nothing else runs: equal to the
 * accumulator, it writes (rmw); else it only reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decode/decode.h"
#include "decode/stub.h"
#include "trace/agent_proto.h"
#include "cache.h"
#include "ptrace_util.h"
#include "access_scan.h"
#include "fde.h"
#include "remote.h"
#include "tracer_int.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Several threads touched the granule: not NO_THREAD (UINT32_MAX), which
 * means no thread yet, or the granule's next touch would make it that
 * thread's own again and a write to memory two threads share private */
#define SHARED_OWNER (UINT32_MAX - 1)
#define MAX_GRANULES 4
/* The private budget of hits made before a second thread started, in
 * budgets (the comment at the top) */
#define ALONE_FACTOR 64

struct asite {
	uint64_t addr;
	struct dec_mem mem[2];
	uint8_t nmem;
	int8_t store_src;     /* a store of this register (dec_insn's), or DEC_NOREG */
	bool shared;          /* some hit touched another thread's memory */
	bool off;             /* disarmed */
	uint32_t hits;
	uint32_t counted;     /* recording: private hits once a second thread started */
	uint32_t alone;       /* recording: private hits before */
	uint64_t disarm_at;   /* replay: remove after this many hits (0: never) */
	int agent;            /* its entry in the agent's site table (a stub), or -1 */
	uint64_t stub;        /* its stub, once the site jumps to it */
};

struct owner_slot {
	uint64_t granule;     /* address >> 3, + 1 (0: empty) */
	uint32_t owner;       /* the thread that touched it, SHARED_OWNER: several */
	uint32_t writer;      /* the last thread that wrote it, or NO_THREAD */
	uint64_t write_seq;   /* when */
};

/* The out-of-line slots of one module: slot i runs the instruction at
 * addr[i], from offset copy[i] (1 in the jump form, after its int3). */
struct slots {
	uint64_t base;
	size_t n;
	uint64_t *addr;
	uint8_t *copy;
	uint8_t *len;    /* the jump form: the bytes displaced (a cover: several instructions) */
};

struct access {
	struct dec *dec;
	struct slots *slots;
	size_t nslots;
	struct asite *site;
	size_t nsite, capsite;
	struct owner_slot *own;
	size_t owncap, nown;
	struct tracer_access_stats st;
	bool replay;          /* decisions come from opts.disarms */
	uint32_t *by_agent;   /* agent table index -> site index */
	size_t nby_agent, capby;
};

/* ---- who touched what */

static size_t hash64(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

static struct owner_slot *own_find(struct access *ac, uint64_t g)
{
	if (ac->nown * 2 >= ac->owncap) {
		size_t ncap = ac->owncap ? ac->owncap * 2 : 4096;
		struct owner_slot *n = calloc(ncap, sizeof *n);
		if (!n)
			return NULL;
		for (size_t i = 0; i < ac->owncap; i++) {
			if (!ac->own[i].granule)
				continue;
			size_t k = hash64(ac->own[i].granule) & (ncap - 1);
			while (n[k].granule)
				k = (k + 1) & (ncap - 1);
			n[k] = ac->own[i];
		}
		free(ac->own);
		ac->own = n;
		ac->owncap = ncap;
	}
	uint64_t key = g + 1;
	size_t k = hash64(key) & (ac->owncap - 1);
	while (ac->own[k].granule && ac->own[k].granule != key)
		k = (k + 1) & (ac->owncap - 1);
	if (!ac->own[k].granule) {
		ac->own[k].granule = key;
		ac->own[k].owner = NO_THREAD;
		ac->own[k].writer = NO_THREAD;
		ac->nown++;
	}
	return &ac->own[k];
}

/* Notes that thread t touched [a, a+n) (writing or not) at event seq.
 * False when the access conflicts with another thread's: it sees a store
 * another thread made after t was created, or it stores to memory
 * another thread has touched.  Reads of data set up before the thread
 * existed (a loop bound main wrote before pthread_create) and of data
 * nobody writes are private: they can never be the other half of a race. */
static bool touch(struct access *ac, const struct tthread *t, uint64_t a, uint64_t n,
		  bool write, uint64_t seq)
{
	uint32_t lid = t->lid;
	uint64_t g0 = a >> 3, g1 = (a + (n ? n : 1) - 1) >> 3;
	bool priv = true;
	if (g1 - g0 >= MAX_GRANULES) /* a long string op: its two ends */
		g0 = g1 - (MAX_GRANULES - 1);
	for (uint64_t g = g0; g <= g1; g++) {
		struct owner_slot *o = own_find(ac, g);
		if (!o)
			return false;
		if (o->owner == NO_THREAD)
			o->owner = lid;
		else if (o->owner != lid)
			o->owner = SHARED_OWNER;
		if (o->writer != NO_THREAD && o->writer != lid && o->write_seq >= t->born_seq)
			priv = false;
		if (write && o->owner == SHARED_OWNER)
			priv = false;
		if (write) {
			o->writer = lid;
			o->write_seq = seq;
		}
	}
	return priv;
}

/* ---- which code */



/* Functions the toolchain links into every executable (crtstuff, crt1):
 * their globals are their own, and they have no source line. */
static bool crt_func(const char *name)
{
	static const char *const crt[] = { "_start", "deregister_tm_clones", "register_tm_clones",
					   "__do_global_dtors_aux", "frame_dummy", "_init", "_fini",
					   "__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie" };
	for (size_t i = 0; name && i < sizeof crt / sizeof crt[0]; i++)
		if (!strcmp(name, crt[i]))
			return true;
	return false;
}

/* A sanitizer runtime linked into the program (clang -fsanitize=...):
 * its allocator, interceptors and bookkeeping are the toolchain's code,
 * as libasan.so is under /usr/lib.  Their names are reserved ones:
 * __asan_*, __interceptor_* (each interceptor's plain alias, pthread_create
 * or malloc, has its address: see module_funcs), the C++ namespaces
 * __sanitizer, __asan, ..., and the shadow-check thunks .check_*. */
static bool sanitizer_func(const char *name)
{
	static const char *const pre[] = { "__sanitizer", "__interceptor_", "___interceptor_",
					   "__interception", "__asan", "__lsan", "__ubsan",
					   "__sancov", "__tsan", "__msan", "__hwasan", "__dfsan" };
	if (!name)
		return false;
	if (!strncmp(name, ".check_", 7))
		return true;
	if (!strncmp(name, "_ZN", 3)) { /* _ZN[K]<len>__asan... */
		name += 3 + (name[3] == 'K');
		while (*name >= '0' && *name <= '9')
			name++;
	}
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
		if (!strncmp(name, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* An object file of a sanitizer runtime (a FILE symbol's name, as
 * clang's libclang_rt.asan.a names them: asan_rtl.cpp.o, ...). */
static bool sanitizer_file(const char *name)
{
	static const char *const pre[] = { "asan_", "sanitizer_", "lsan_", "ubsan_", "interception_",
					   "tsan_", "msan_", "hwasan_" };
	for (size_t i = 0; name && i < sizeof pre / sizeof pre[0]; i++)
		if (!strncmp(name, pre[i], strlen(pre[i])))
			return true;
	return false;
}

#define MAX_RT_SPANS 128
/* Where a linked-in sanitizer runtime's object files lie: the span of the
 * local functions that follow each of their FILE symbols.  Its global
 * functions without a reserved name (MemcmpInterceptorCommon) lie there
 * too: each object's code is laid out in one piece. */
struct rt_spans {
	struct func s[MAX_RT_SPANS];
	size_t n;
	bool in_rt;   /* the symbols read are a runtime object's locals */
};

static void rt_note(struct rt_spans *rt, const GElf_Sym *s, const char *name)
{
	if (GELF_ST_TYPE(s->st_info) == STT_FILE) {
		rt->in_rt = sanitizer_file(name) && rt->n < MAX_RT_SPANS;
		if (rt->in_rt)
			rt->s[rt->n++] = (struct func){ UINT64_MAX, 0, true, NULL };
		return;
	}
	if (GELF_ST_BIND(s->st_info) != STB_LOCAL) {
		rt->in_rt = false;
		return;
	}
	if (!rt->in_rt || GELF_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF)
		return;
	struct func *f = &rt->s[rt->n - 1];
	if (s->st_value < f->lo)
		f->lo = s->st_value;
	if (s->st_value + s->st_size > f->hi)
		f->hi = s->st_value + s->st_size;
}

static bool in_rt(const struct rt_spans *rt, uint64_t a)
{
	for (size_t i = 0; i < rt->n; i++)
		if (a >= rt->s[i].lo && a < rt->s[i].hi)
			return true;
	return false;
}

static bool add_func(struct func **f, size_t *n, size_t *cap, const GElf_Sym *s, const char *name)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		struct func *nf = realloc(*f, *cap * sizeof *nf);
		if (!nf)
			return false;
		*f = nf;
	}
	(*f)[*n] = (struct func){ s->st_value, s->st_value + s->st_size,
				  crt_func(name) || sanitizer_func(name), name };
	(*n)++;
	return true;
}

/* Function ranges from .symtab (or .dynsym), sorted; deduplicated.
 * *symtab tells whether there was a .symtab (if not, the module is
 * stripped: the caller looks for functions in its FDEs too). */
static size_t module_funcs(Elf *e, struct func **out, bool *symtab)
{
	size_t n = 0, cap = 0;
	struct func *f = NULL;
	Elf_Scn *scn = NULL;
	bool have_symtab = false;
	struct rt_spans *rt = calloc(1, sizeof *rt);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			have_symtab = true;
	}
	*symtab = have_symtab;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    sh.sh_type != (have_symtab ? SHT_SYMTAB : SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (rt)
				rt_note(rt, &s, name);
			if (GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value || s.st_shndx == SHN_UNDEF)
				continue;
			if (!s.st_size && !crt_func(name)) /* crtstuff's have no size: they end at the next */
				continue;
			if (!add_func(&f, &n, &cap, &s, name))
				break;
		}
	}
	if (n)
		qsort(f, n, sizeof *f, func_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (rt && in_rt(rt, f[i].lo))
			f[i].skip = true;
		if (!k || f[i].lo != f[k - 1].lo)
			f[k++] = f[i];
		else
			f[k - 1].skip |= f[i].skip; /* an alias of runtime code */
	}
	free(rt);
	for (size_t i = 0; i < k; i++)
		if (f[i].hi == f[i].lo)
			f[i].hi = i + 1 < k ? f[i + 1].lo : f[i].lo + 1;
	*out = f;
	return k;
}

/* The FDE ranges of a module, for scan_gap. */
struct fdes {
	struct fde_range *r;
	size_t n;
};

/* Code with no symbol, [at, end) (ELF addresses; code: its bytes): one
 * piece with no name (no cover), or, in groups mode, each FDE's function
 * inside as a piece named by its FDE, and the bytes between as pieces
 * with no name. */
static void scan_gap(struct access *ac, struct scan *sc, const struct fdes *fd, const uint8_t *code,
		     uint64_t at, uint64_t end, uint64_t bias)
{
	size_t i = 0, hi = fd->n;
	uint64_t p = at;
	while (sc->groups && i < hi) { /* the first FDE that ends after at */
		size_t mid = i + (hi - i) / 2;
		if (fd->r[mid].hi <= at)
			i = mid + 1;
		else
			hi = mid;
	}
	for (; sc->groups && i < fd->n && fd->r[i].lo < end; i++) {
		uint64_t flo = fd->r[i].lo > p ? fd->r[i].lo : p;
		uint64_t fhi = fd->r[i].hi < end ? fd->r[i].hi : end;
		if (flo >= fhi)
			continue;
		if (flo > p)
			scan_func(ac->dec, sc, code + (p - at), flo - p, bias + p, NULL);
		scan_func(ac->dec, sc, code + (flo - at), fhi - flo, bias + flo, fd->r[i].name);
		p = fhi;
	}
	if (p < end)
		scan_func(ac->dec, sc, code + (p - at), end - p, bias + p, NULL);
}

/* A module's candidate sites.  With a symbol table, function by
 * function; without one (stripped), the exported functions and, in the
 * code between, the functions of the FDEs, in groups mode
 * (access_scan.h). */
static void scan_file(struct access *ac, const struct elfmod *m, struct scan *sc)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	struct func *f = NULL;
	size_t nf = 0;
	Elf_Scn *scn = NULL;
	if (!e || elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	bool symtab;
	nf = module_funcs(e, &f, &symtab);
	struct fdes fr = { NULL, 0 };
	if (!symtab) {
		fr.n = fde_ranges(e, &fr.r);
		sc->groups = fr.n > 0;
	}
	bool landing_pads = false; /* C++ exceptions land anywhere in a function */
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(e, shstrndx, sh.sh_name)))
			landing_pads |= !strcmp(nm, ".gcc_except_table");
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sc->nro == 32 ||
		    !(nm = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!(sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)) || !strcmp(nm, ".got"))
			sc->ro[sc->nro++] = (struct func){ m->bias + sh.sh_addr,
							   m->bias + sh.sh_addr + sh.sh_size, false, NULL };
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(nm = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    !strncmp(nm, ".plt", 4) || !strcmp(nm, ".init") || !strcmp(nm, ".fini"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		const uint8_t *code = d->d_buf;
		uint64_t lo = sh.sh_addr, hi = sh.sh_addr + sh.sh_size, at = lo;
		/* the functions inside, in order; the gaps between them (code
		 * without a symbol) are scanned as one piece each */
		for (size_t i = 0; i <= nf && at < hi; i++) {
			uint64_t flo = i < nf ? f[i].lo : hi, fhi = i < nf ? f[i].hi : hi;
			if (fhi <= at || flo >= hi) {
				if (flo >= hi && at < hi && i == nf)
					scan_gap(ac, sc, &fr, code + (at - lo), at, hi, m->bias);
				continue;
			}
			if (flo > at)
				scan_gap(ac, sc, &fr, code + (at - lo), at, flo, m->bias);
			if (flo < at)
				flo = at;
			if (fhi > hi)
				fhi = hi;
			if (!f[i].skip)
				scan_func(ac->dec, sc, code + (flo - lo), fhi - flo, m->bias + flo, f[i].name);
			at = fhi;
		}
	}
	scan_check_covers(sc, landing_pads);
	free(fr.r);
out:
	free(f);
	free(sc->targets);
	free(sc->indirect);
	free(sc->pieces);
	free(sc->edges);
	sc->targets = NULL;
	sc->indirect = NULL;
	sc->pieces = NULL;
	sc->edges = NULL;
	sc->ntargets = sc->captargets = sc->nindirect = sc->capindirect = 0;
	sc->npieces = sc->cappieces = sc->nedges = sc->capedges = 0;
	sc->no_covers = sc->groups = false;
	if (e)
		elf_end(e);
	close(fd);
}

/* What a module's scan found, as one blob for the shared cache. */
struct scan_blob {
	uint64_t n;
	uint32_t undecodable, untrusted;
};

/* The candidate sites of module m: decoded from its file, or, in an
 * exploration's later runs, taken from the cache (cache.c) under the
 * file's identity (device, inode, size, modification time) and where it
 * is mapped. */
static void scan_module(struct access *ac, const struct elfmod *m, struct scan *sc)
{
	uint64_t key = cache_file_key(0x5ca7 ^ m->bias, m->path);
	if (key) {
		size_t len;
		const struct scan_blob *b = cache_get_blob(key, &len);
		if (b && len >= sizeof *b && len == sizeof *b + b->n * sizeof(struct cand)) {
			sc->c = b->n ? malloc(b->n * sizeof *sc->c) : NULL;
			if (b->n && !sc->c)
				return;
			if (b->n)
				memcpy(sc->c, b + 1, b->n * sizeof *sc->c);
			sc->n = sc->cap = b->n;
			sc->undecodable = b->undecodable;
			sc->untrusted = b->untrusted;
			return;
		}
	}
	scan_file(ac, m, sc);
	if (!key)
		return;
	size_t len = sizeof(struct scan_blob) + sc->n * sizeof(struct cand);
	struct scan_blob *b = malloc(len);
	if (!b)
		return;
	*b = (struct scan_blob){ sc->n, sc->undecodable, sc->untrusted };
	if (sc->n)
		memcpy(b + 1, sc->c, sc->n * sizeof *sc->c);
	cache_put_blob(key, b, len);
	free(b);
}

/* ---- scratch memory near a module */

/* Makes thread tid call mmap(hint, size, r-x, MAP_FIXED_NOREPLACE) through
 * `syscall; int3` written into the reserved head of the scratch page
 * (remote.c).  Returns the address or 0. */
static uint64_t inject_mmap(struct tracer *tr, pid_t tid, uint64_t hint, uint64_t size)
{
	struct user_regs_struct saved;
	if (!tr->proc->as.scratch || ptu_getregs(tid, &saved) < 0)
		return 0;
	int kept;
	uint64_t got = remote_mmap(tid, tr->proc->memfd, tr->proc->as.scratch + 8, &saved, hint, size,
				   MAP_FIXED_NOREPLACE, &kept);
	struct tthread *t = tr_by_tid(tr, tid);
	if (t)
		tr_keep_signal(t, kept);
	return got;
}

/* Scratch for n sites of per bytes each within rip-relative reach (±2 GB)
 * of the module. */
static uint64_t scratch_near(struct tracer *tr, pid_t tid, const struct elfmod *m, size_t n,
			     size_t per)
{
	uint64_t size = ((uint64_t)n * per + 4095) & ~4095ull;
	for (int k = 0; k < 16; k++) {
		/* below the module first: above an executable lies its heap */
		uint64_t below = (m->lo - size - (uint64_t)(k + 1) * 0x200000) & ~0xfffull;
		uint64_t got = below < m->lo ? inject_mmap(tr, tid, below, size) : 0;
		if (got)
			return got;
	}
	uint64_t above = (m->hi + 0x40000000ull) & ~0xfffull;
	return inject_mmap(tr, tid, above, size);
}

/* ---- planting */

static struct access *access_state(struct tracer *tr)
{
	if (!tr->proc->as.acc) {
		tr->proc->as.acc = calloc(1, sizeof *tr->proc->as.acc);
		if (!tr->proc->as.acc)
			return NULL;
		tr->proc->as.acc->dec = dec_new();
		if (!tr->proc->as.acc->dec) {
			free(tr->proc->as.acc);
			tr->proc->as.acc = NULL;
			return NULL;
		}
		tr->proc->as.acc->replay = tr->opts.disarms != NULL;
		/* the agent hands its access records and hand-overs back
		 * through these: it calls no feature above it */
		tr->agent_acc.park_at = access_park_at;
		tr->agent_acc.event = access_agent_event;
	}
	return tr->proc->as.acc;
}

void access_release(struct tracer *tr)
{
	struct access *ac = tr->proc->as.acc;
	if (!ac)
		return;
	dec_free(ac->dec);
	for (size_t i = 0; i < ac->nslots; i++) {
		free(ac->slots[i].addr);
		free(ac->slots[i].copy);
		free(ac->slots[i].len);
	}
	free(ac->slots);
	free(ac->site);
	free(ac->by_agent);
	free(ac->own);
	free(ac);
	tr->proc->as.acc = NULL;
}

/* The threads the recording saw access at addr (a replay; ~0 when
 * recording: unknown). */
static uint64_t recorded_lids(struct tracer *tr, const struct elfmod *m, uint64_t addr)
{
	if (!tr->opts.site_lids)
		return ~0ull;
	struct tracer_site_lids key = { (uint16_t)m->id, addr - m->bias, 0 };
	const struct tracer_site_lids *l = tr->opts.nsite_lids ?
		bsearch(&key, tr->opts.site_lids, tr->opts.nsite_lids, sizeof key, tracer_site_lids_cmp) : NULL;
	return l ? l->lids : 0;
}

int tracer_site_lids_cmp(const void *a, const void *b)
{
	const struct tracer_site_lids *x = a, *y = b;
	if (x->site_mod != y->site_mod)
		return x->site_mod < y->site_mod ? -1 : 1;
	return x->site_off < y->site_off ? -1 : x->site_off > y->site_off;
}

static uint64_t recorded_disarm(struct tracer *tr, const struct elfmod *m, uint64_t addr)
{
	for (size_t i = 0; i < tr->opts.ndisarms; i++) {
		const struct avt_disarm_rec *d = &tr->opts.disarms[i];
		if (d->site_mod == (uint16_t)m->id && d->site_off == addr - m->bias)
			return d->hits ? d->hits : 1;
	}
	return 0;
}

static void note(struct tracer *tr, const char *text)
{
	if (tr->sink.note)
		tr->sink.note(tr->sink.ctx, tr, text);
}

/* A module with avtrace.h probes says itself what it accesses. */
static bool annotated(const struct tracer *tr, const struct elfmod *m)
{
	for (size_t i = 0; i < tr->proc->as.nprobes; i++)
		if (tr->proc->as.probes[i].pc >= m->lo && tr->proc->as.probes[i].pc < m->hi)
			return true;
	return false;
}


/* The event kind and flags of a site's (first) operand. */
static enum avt_kind mem_kind(const struct dec_mem *m)
{
	return m->kind == DEC_READ ? AVT_EV_READ : m->kind == DEC_WRITE ? AVT_EV_WRITE : AVT_EV_RMW;
}

static uint16_t mem_flags(const struct dec_mem *m)
{
	uint16_t flags = AVT_F_ACCESS_BPT | AVT_F_SITE_EXACT;
	if (m->flags & DEC_F_ATOMIC)
		flags |= AVT_F_ATOMIC;
	return flags;
}

static uint64_t private_budget(const struct tracer *tr)
{
	return tr->opts.access_budget ? tr->opts.access_budget : 256;
}

/* After how many hits site s is disarmed, as things stand (0: never): the
 * recorded removal in a replay; in a recording, while no hit was shared,
 * the first hit that could use up either private budget (the agent may
 * take hits up to it in-process: it never overshoots). */
static uint64_t disarm_limit(const struct tracer *tr, const struct asite *s)
{
	if (tr->proc->as.acc->replay)
		return s->disarm_at;
	if (s->shared)
		return 0;
	uint64_t budget = private_budget(tr);
	uint64_t left = budget - s->counted, left_alone = ALONE_FACTOR * budget - s->alone;
	return s->hits + (left < left_alone ? left : left_alone);
}

/* Has site s used up a private budget?  (recording) */
static bool budget_spent(const struct tracer *tr, const struct asite *s)
{
	uint64_t budget = private_budget(tr);
	return !s->shared && (s->counted >= budget || s->alone >= ALONE_FACTOR * budget);
}

/* How many more hits site s may take in-process before one stops at
 * ptrace, where its fate is decided: the hit that reaches its disarm
 * always stops. */
static int32_t site_left(const struct tracer *tr, const struct asite *s)
{
	if (s->off)
		return 0;
	uint64_t limit = disarm_limit(tr, s);
	if (!limit)
		return AVT_AGENT_SITE_NOLIMIT;
	if (limit <= s->hits + 1)
		return 0;
	uint64_t left = limit - s->hits - 1;
	return left >= AVT_AGENT_SITE_NOLIMIT ? AVT_AGENT_SITE_NOLIMIT - 1 : (int32_t)left;
}

/* Builds site s's stub into code (to run at at), registered in the
 * agent's table; the site's jump is pointed at it once every stub of the
 * module is written. */
static bool add_stub(struct tracer *tr, struct asite *s, const struct dec_insn *in, uint8_t *code,
		     uint64_t at, uint64_t entry, uint64_t slot, uint64_t rec_lids)
{
	struct access *ac = tr->proc->as.acc;
	if (!stub_supported(in))
		return false;
	int idx = agent_access_site(tr, s->addr, (uint16_t)mem_kind(&in->mem[0]), in->mem[0].size,
				    mem_flags(&in->mem[0]), site_left(tr, s), rec_lids,
				    in->store_src != DEC_NOREG);
	if (idx < 0)
		return false;
	if ((size_t)idx >= ac->capby) {
		size_t ncap = (size_t)idx + 1024;
		uint32_t *n = realloc(ac->by_agent, ncap * sizeof *n);
		if (!n) {
			agent_access_left(tr, idx, 0);
			return false;
		}
		ac->by_agent = n;
		ac->capby = ncap;
	}
	if (!stub_encode(code, at, in, (uint32_t)idx, entry, slot + 1, slot)) {
		agent_access_left(tr, idx, 0);
		return false;
	}
	while (ac->nby_agent <= (size_t)idx)
		ac->by_agent[ac->nby_agent++] = UINT32_MAX;
	ac->by_agent[idx] = (uint32_t)(s - ac->site);
	s->agent = idx;
	return true;
}

void access_plant_module(struct tracer *tr, pid_t tid, const struct elfmod *m)
{
	/* avtrace's own agent (record --agent) is avtrace's code, not the
	 * program's: its accesses are no events */
	if (tr->access_on && m->path && tracer_asan(tr))
		sanitizer_module(tr, m);
	if (!tr->access_on || !m->path || annotated(tr, m) ||
	    !tracer_user_code(tr, m->path))
		return;
	struct access *ac = access_state(tr);
	if (!ac)
		return;
	struct scan sc = { 0 };
	scan_module(ac, m, &sc);
	ac->st.undecodable += sc.undecodable;
	if (sc.untrusted) {
		char text[600];
		snprintf(text, sizeof text, "access breakpoints: %u functions of '%s' are not instrumented: code the decoder cannot follow (data in the text, AVX-512)",
			 sc.untrusted, m->path);
		note(tr, text);
	}
	if (!sc.n) {
		free(sc.c);
		return;
	}
	/* with the agent, a stub per site after the slots (decode/stub.h) */
	uint64_t entry = agent_access_entry(tr);
	uint64_t slots = scratch_near(tr, tid, m, sc.n, BPT_SLOT_SIZE + (entry ? STUB_SIZE : 0));
	uint64_t stubs = slots + sc.n * BPT_SLOT_SIZE;
	uint8_t *stub_code = entry ? calloc(sc.n, STUB_SIZE) : NULL;
	size_t *stubbed = stub_code ? calloc(sc.n, sizeof *stubbed) : NULL; /* site index + 1 */
	if (!stubbed) {
		free(stub_code);
		stub_code = NULL;
	}
	char why[256], first[512] = "";
	unsigned skipped = 0;
	if (!slots) {
		snprintf(first, sizeof first, "access breakpoints: no scratch memory near '%s': its %zu sites are not instrumented",
			 m->path, sc.n);
		note(tr, first);
		ac->st.skipped += (unsigned)sc.n;
		free(sc.c);
		return;
	}
	struct slots *nsl = realloc(ac->slots, (ac->nslots + 1) * sizeof *nsl);
	uint64_t *addrs = calloc(sc.n, sizeof *addrs);
	uint8_t *copy = calloc(sc.n, 1), *len = calloc(sc.n, 1);
	struct slots *sl = NULL;
	if (nsl)
		ac->slots = nsl;
	if (nsl && addrs && copy && len) {
		for (size_t i = 0; i < sc.n; i++)
			addrs[i] = sc.c[i].addr;
		sl = &ac->slots[ac->nslots++];
		*sl = (struct slots){ slots, sc.n, addrs, copy, len };
	} else {
		free(addrs);
		free(copy);
		free(len);
	}
	if (ac->nsite + sc.n > ac->capsite) {
		size_t ncap = ac->nsite + sc.n;
		struct asite *ns = realloc(ac->site, ncap * sizeof *ns);
		if (!ns) {
			free(sc.c);
			return;
		}
		ac->site = ns;
		ac->capsite = ncap;
	}
	for (size_t i = 0; i < sc.n; i++) {
		const struct cand *c = &sc.c[i];
		uint64_t slot = slots + i * BPT_SLOT_SIZE;
		int rc = -1;
		if (c->cover && (rc = bpt_insert_cover_at(&tr->proc->as.bpts, c->addr, c->cover, BK_ACCESS,
							  (int)ac->nsite, slot, why, sizeof why)) == 0)
			ac->st.covers++;
		if (rc < 0 &&
		    bpt_insert_jump_at(&tr->proc->as.bpts, c->addr, BK_ACCESS, (int)ac->nsite, slot, why, sizeof why) < 0) {
			if (!skipped++)
				snprintf(first, sizeof first, "%s at %s+0x%llx", why,
					 strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path,
					 (unsigned long long)(c->addr - m->bias));
			continue;
		}
		const struct bpt *b = bpt_find(&tr->proc->as.bpts, c->addr);
		if (sl && b && b->jump) {
			sl->copy[i] = 1;
			sl->len[i] = b->len;
		}
		struct asite *s = &ac->site[ac->nsite++];
		memset(s, 0, sizeof *s);
		s->addr = c->addr;
		s->nmem = c->in.nmem;
		s->store_src = c->in.store_src;
		memcpy(s->mem, c->in.mem, sizeof s->mem);
		if (ac->replay)
			s->disarm_at = recorded_disarm(tr, m, c->addr);
		s->agent = -1;
		if (stub_code && b && b->jump &&
		    add_stub(tr, s, &c->in, stub_code + i * STUB_SIZE, stubs + i * STUB_SIZE, entry, slot,
			     recorded_lids(tr, m, c->addr)))
			stubbed[i] = ac->nsite;
	}
	if (stub_code) {
		/* the stubs first, then the sites' jumps to them */
		bool written = ptu_write(tr->proc->memfd, stubs, stub_code, sc.n * STUB_SIZE) == 0;
		for (size_t i = 0; i < sc.n; i++) {
			if (!stubbed[i])
				continue;
			struct asite *s = &ac->site[stubbed[i] - 1];
			if (!written || bpt_jump_to(&tr->proc->as.bpts, s->addr, stubs + i * STUB_SIZE) < 0) {
				agent_access_left(tr, s->agent, 0);
				s->agent = -1;
			} else {
				s->stub = stubs + i * STUB_SIZE;
				ac->st.stubs++;
			}
		}
		free(stub_code);
		free(stubbed);
	}
	ac->st.sites += (unsigned)(sc.n - skipped);
	ac->st.skipped += skipped;
	if (skipped) {
		char text[800];
		snprintf(text, sizeof text, "access breakpoints: %u instructions of '%s' cannot run out of line and are not instrumented (first: %s)",
			 skipped, m->path, first);
		note(tr, text);
	}
	free(sc.c);
}

void access_plant(struct tracer *tr, pid_t tid)
{
	access_release(tr);
	tr->access_on = tr->opts.access && !tr->opts.nwatch && !tr->proc->as.nprobes;
	if (!tr->access_on)
		return;
	if (!modmap_find_name(&tr->proc->as.mods, "ld-linux")) {
		/* its libc is inside it, and runs before anything is set up */
		note(tr, "access breakpoints: a statically linked program is not instrumented (its libc is part of it); use annotations or --watch");
		tr->access_on = false;
		return;
	}
	for (size_t i = 0; i < tr->proc->as.mods.n; i++)
		access_plant_module(tr, tid, &tr->proc->as.mods.m[i]);
	if (tr->proc->as.acc && tr->proc->as.acc->st.undecodable) {
		char text[200];
		snprintf(text, sizeof text, "access breakpoints: %u bytes of code could not be decoded and were skipped",
			 tr->proc->as.acc->st.undecodable);
		note(tr, text);
	}
}

/* ---- stops */

bool access_request(struct tracer *tr, struct tthread *t, const struct bpt *b,
		    const struct user_regs_struct *r)
{
	struct access *ac = tr->proc->as.acc;
	struct treq *q = &t->req;
	memset(q, 0, sizeof *q);
	q->hook = HK_ACCESS;
	q->site = b->addr;
	q->kind = AVT_EV_NONE;
	if (!ac || b->data < 0 || (size_t)b->data >= ac->nsite)
		return false;
	const struct asite *s = &ac->site[b->data];
	q->obj = dec_ea(&s->mem[0], r);
	q->obj2 = s->nmem > 1 ? dec_ea(&s->mem[1], r) : 0;
	q->size = (uint16_t)dec_extent(&s->mem[0], r, 0xffff);
	/* decided at commit; an access to the thread's own frames makes no
	 * event (emit_access), so it is no point a schedule counts or waits
	 * at: committed at once, the thread runs on (a deadlock's replay
	 * waits for main at its join, not at the read of its own `t1` just
	 * before; a replay raises a recorded signal at the thread's next
	 * point, not between two of its own-stack reads) */
	bool silent = own_stack(q->obj, r->rsp) && !stack_escaped(t, q->obj) && s->nmem == 1;
	q->kind = silent ? AVT_EV_NONE : AVT_EV_READ;
	t->priv->access_site = b->data;
	return silent;
}

/* cmpxchg: does the comparison succeed now?  (The thread runs it next and
 * nothing else runs in between.) */
static bool cas_succeeds(struct tracer *tr, const struct dec_mem *m, uint64_t ea,
			 const struct user_regs_struct *r)
{
	uint64_t v[2] = { 0, 0 };
	unsigned n = m->size > 16 ? 16 : m->size;
	if (ptu_read(tr->proc->pid, ea, v, n) < 0)
		return true;
	if (n == 16) /* cmpxchg16b: rdx:rax */
		return v[0] == r->rax && v[1] == r->rdx;
	uint64_t mask = n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
	return (v[0] & mask) == (r->rax & mask);
}

static void disarm(struct tracer *tr, struct asite *s)
{
	struct access *ac = tr->proc->as.acc;
	s->off = true;
	bpt_remove(&tr->proc->as.bpts, s->addr);
	ac->st.disarmed++;
	if (ac->replay)
		return;
	struct avt_disarm_rec d;
	memset(&d, 0, sizeof d);
	d.after_seq = tr->seq;
	d.hits = s->hits;
	tracer_site(tr, s->addr, &d.site_mod, &d.site_off);
	if (tr->sink.disarm)
		tr->sink.disarm(tr->sink.ctx, tr, &d);
}

/* After a hit of s (priv: every address it touched was private): the
 * private budget, a recorded disarm, and what the agent may take next. */
static void after_hit(struct tracer *tr, struct asite *s, bool priv)
{
	s->hits++;
	if (!priv)
		s->shared = true;
	else if (tr->proc->nstarted >= 2)
		s->counted++;
	else
		s->alone++;
	bool due = tr->proc->as.acc->replay ? s->disarm_at && s->hits >= s->disarm_at
					    : budget_spent(tr, s);
	if (!s->off && due)
		disarm(tr, s);
	if (s->agent >= 0)
		agent_access_left(tr, s->agent, site_left(tr, s));
}

/* AddressSanitizer's shadow memory on x86-64: (addr >> 3) + 0x7fff8000
 * for every address, [0x7fff8000, 0x10007fff8000) with the gap between
 * its two halves.  The checks instrumented code makes there before each
 * access (and the poisoning of its stack frames) are the sanitizer's
 * bookkeeping, not the program's accesses; neither are its reads of the
 * runtime's flags (__asan_option_detect_stack_use_after_return, in every
 * function with locals on the stack). */
#define ASAN_SHADOW_LO 0x7fff8000ull
#define ASAN_SHADOW_HI 0x10007fff8000ull

static bool asan_shadow(const struct tracer *tr, uint64_t ea)
{
	return tracer_asan(tr) &&
	       ((ea >= ASAN_SHADOW_LO && ea < ASAN_SHADOW_HI) || sanitizer_data(tr, ea));
}

/* A hit of s that only touched the shadow (or the runtime's own switches
 * the instrumented code reads, sanitizer_data): no event, and the site goes
 * (an instruction that checks the shadow checks nothing else); the disarm
 * is recorded, so a replay removes it at the same hit. */
static void shadow_hit(struct tracer *tr, struct asite *s)
{
	after_hit(tr, s, true);
	if (!s->off)
		disarm(tr, s);
}

/* Does a read (or rmw) of n bytes carry its value (AVT_F_VALUE)? */
static bool value_size(uint64_t n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

/* The value a read of n bytes at ea is about to load (the stop is before
 * the instruction, and no other thread runs until it has): false when n
 * is no scalar's size or the memory cannot be read (the instruction will
 * fault there). */
static bool read_value(struct tracer *tr, uint64_t ea, uint64_t n, uint64_t *v)
{
	*v = 0;
	return value_size(n) && ptu_read(tr->proc->pid, ea, v, n) == 0;
}

/* One access event of t at ea (n bytes, rsp: t's stack pointer then;
 * value: a read's, when flags has AVT_F_VALUE); false when it touched
 * memory another thread shares. */

/*
 * A thread's accesses to its own frames are not events, however the
 * address was computed (-O0 C++: `this` of an inlined std::vector
 * template's stack object, reached through a register, not rsp/rbp),
 * unless the thread let its stack escape (thread_start_arg, tracer_int.h): no other
 * thread can reach them otherwise.  Another thread's accesses to them stay
 * events.  Decided from the thread's own past only, so a replay decides
 * the same at every hit.  The hit still counts (touch, the budget).
 */
static bool emit_access(struct tracer *tr, struct tthread *t, const struct asite *s,
			enum avt_kind kind, uint16_t flags, uint64_t ea, uint64_t n, uint64_t rsp,
			uint64_t value)
{
	struct access *ac = tr->proc->as.acc;
	bool priv = touch(ac, t, ea, n, kind != AVT_EV_READ, tr->seq);
	if (own_stack(ea, rsp)) {
		if (!stack_escaped(t, ea)) {
			ac->st.own_stack++;
			return true;
		}
		flags |= AVT_F_OWN_STACK;
	}
	ac->st.events++;
	tr_emit(tr, t, kind, ea, flags & AVT_F_VALUE ? value : 0, s->addr, flags, (uint16_t)n);
	return priv;
}

void access_commit(struct tracer *tr, struct tthread *t)
{
	struct access *ac = tr->proc->as.acc;
	int idx = t->priv->access_site;
	if (!ac || idx < 0 || (size_t)idx >= ac->nsite)
		return;
	struct asite *s = &ac->site[idx];
	if (s->off) {
		/* disarmed while t stood at it (another thread's hit reached the
		 * budget): no event, in the recording as in its replays, where t
		 * may as well have been elsewhere then and pass the site with no
		 * stop; the site's events are exactly its hits up to the disarm */
		s->hits++;
		return;
	}
	const struct user_regs_struct *r = &t->priv->regs;
	uint64_t ea[2] = { t->req.obj, t->req.obj2 };
	bool priv = true, shadow = s->nmem > 0;
	for (unsigned k = 0; k < s->nmem; k++) {
		const struct dec_mem *m = &s->mem[k];
		uint64_t n = dec_extent(m, r, 0xffff);
		if (n && asan_shadow(tr, ea[k]))
			continue;
		shadow = false;
		if (!n)
			continue; /* rep with rcx = 0: touches nothing */
		enum avt_kind kind = mem_kind(m);
		if (m->flags & DEC_F_CAS && !cas_succeeds(tr, m, ea[k], r))
			kind = AVT_EV_READ;
		if (m->seg != DEC_SEG_NONE)
			continue;
		uint16_t flags = mem_flags(m);
		uint64_t value = 0;
		if (avt_kind_reads(kind) && read_value(tr, ea[k], n, &value))
			flags |= AVT_F_VALUE;
		priv &= emit_access(tr, t, s, kind, flags, ea[k], n, r->rsp, value);
	}
	/* a store of an address into t's own stack to memory outside it (a
	 * global, the heap: std::ref into std::thread's state) lets the stack
	 * escape, as a thread start's argument does (stack_escape: from the
	 * address up).  The stored value is t's own register: a replay
	 * decides the same at the same hit. */
	if (s->store_src != DEC_NOREG && s->nmem == 1 && !shadow) {
		uint64_t v = dec_reg_value(r, s->store_src);
		if (avt_stack_escapes(v, ea[0], r->rsp) && stack_escape(t, v, r->rsp))
			ac->st.stack_escapes++;
	}
	if (shadow)
		shadow_hit(tr, s);
	else
		after_hit(tr, s, priv);
}

uint64_t access_park_at(struct tracer *tr, const struct tthread *t, uint16_t *kind)
{
	struct access *ac = tr->proc->as.acc;
	int idx = t->priv->access_site;
	if (!ac || t->req.hook != HK_ACCESS || idx < 0 || (size_t)idx >= ac->nsite)
		return 0;
	const struct asite *s = &ac->site[idx];
	if (!s->stub || s->agent < 0 || s->off || s->nmem != 1 || agent_access_left_now(tr, s->agent) <= 0)
		return 0;
	*kind = (uint16_t)mem_kind(&s->mem[0]);
	return s->stub;
}

void access_agent_event(struct tracer *tr, struct tthread *t, const struct avt_event *ev)
{
	struct access *ac = tr->proc->as.acc;
	if (!ac || ev->tindex >= ac->nby_agent || ac->by_agent[ev->tindex] >= ac->nsite)
		return;
	struct asite *s = &ac->site[ac->by_agent[ev->tindex]];
	if (s->addr != ev->site_off)
		return;
	if (asan_shadow(tr, ev->obj)) {
		shadow_hit(tr, s);
		return;
	}
	/* the agent's read carries its value in seq, with AVT_F_VALUE when
	 * it could load it (avt_agent_commit_access) */
	bool priv = emit_access(tr, t, s, (enum avt_kind)ev->kind, ev->flags, ev->obj, ev->size,
				ev->obj2, ev->seq);
	after_hit(tr, s, priv);
}

uint64_t access_orig_pc(const struct tracer *tr, uint64_t pc)
{
	const struct access *ac = tr->proc->as.acc;
	for (size_t i = 0; ac && i < ac->nslots; i++) {
		const struct slots *s = &ac->slots[i];
		if (pc >= s->base && pc < s->base + s->n * BPT_SLOT_SIZE) {
			size_t k = (pc - s->base) / BPT_SLOT_SIZE;
			/* before the copy ran (its int3, its first byte): the
			 * instruction itself; at a later instruction of a cover:
			 * that one (the copies keep their lengths); in the jump
			 * back: where it is, a jump to the instruction after it */
			size_t off = (pc - s->base) % BPT_SLOT_SIZE;
			if (off <= s->copy[k])
				return s->addr[k];
			return s->copy[k] && off < 1u + s->len[k] ? s->addr[k] + off - 1 : pc;
		}
	}
	return pc;
}

const struct tracer_access_stats *tracer_access_stats(const struct tracer *tr)
{
	static const struct tracer_access_stats none;
	return tr->proc->as.acc ? &tr->proc->as.acc->st : &none;
}

bool tracer_access_on(const struct tracer *tr)
{
	return tr->access_on;
}
