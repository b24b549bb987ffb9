/*
 * The symbolizer: code addresses -> function, file:line (with inline
 * chains); data addresses -> variable names ("srv.m", "grid[1][2]"); names
 * -> addresses (for --watch); backtraces of ptrace-stopped threads.
 *
 * A session (struct sym) holds a table of modules, each registered with the
 * load bias and mapped range it had in the traced process.  Sites are
 * module id + offset (trace/event.h): runtime address = base + offset.
 * Everything is looked up lazily and memoized, so a dump that symbolizes
 * every event costs a hash lookup per event once its sites have been seen.
 *
 * Ownership: struct sym owns every module (its path copy, its libdwfl
 * session, its variable table) and every cached result.  The strings in a
 * struct sym_loc and in a struct sym_module_info point into that storage and
 * stay valid until sym_free(), so callers may keep them but never free them.
 * Buffers passed in (buf/len) are the caller's.
 *
 * A session is not thread-safe; use one per thread.  See docs/symbolizer.md.
 */
#ifndef AVT_SYMBOLIZER_SYM_H
#define AVT_SYMBOLIZER_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Module id of a site whose module is unknown: its offset is then the
 * absolute address.  Same value as AVT_MOD_NONE in trace/event.h. */
#define SYM_MOD_NONE 0xffffu

/* Longest build-id kept (GNU build-ids are 20 bytes; 32 allows SHA-256). */
#define SYM_BUILD_ID_MAX 32

/* Inline callers kept in a struct sym_loc. */
#define SYM_INLINE_MAX 4

struct sym;

struct sym *sym_new(void);
void sym_free(struct sym *s);

/*
 * Register a module: its file on disk, load bias (runtime address = base +
 * file address), mapped range [lo, hi) and the build-id it had when it was
 * recorded (NULL/0: do not check).  The file is opened on first use; if its
 * build-id differs from the recorded one, one warning names the file and the
 * module is shown as module+0xOFF from then on.  Returns -1 if the id is
 * SYM_MOD_NONE or already registered, or the range is empty.
 */
int sym_add_module(struct sym *s, unsigned id, const char *path, uint64_t base,
		   uint64_t lo, uint64_t hi, const uint8_t *build_id,
		   size_t build_id_len);

/*
 * Register the executable and shared libraries mapped in live process pid
 * (from /proc/PID/maps), skipping those already registered at the same
 * address.  New ids count up from the highest id in use (0 when the session
 * is empty); the executable is registered first.  Call it again after the
 * process loads more libraries.  Returns the number added, or -1.
 */
int sym_add_process(struct sym *s, pid_t pid);

/* What a module was registered with (for writing trace module records). */
struct sym_module_info {
	unsigned id;
	const char *path;
	uint64_t base, lo, hi;
	const uint8_t *build_id;
	size_t build_id_len;
};

/* Number of registered modules; the i-th in id order (0 <= i < count). */
size_t sym_module_count(const struct sym *s);
int sym_module_get(const struct sym *s, size_t i, struct sym_module_info *out);
/* The module whose mapped range holds addr: its id and addr's offset. */
int sym_module_of(const struct sym *s, uint64_t addr, unsigned *id, uint64_t *off);

/*
 * A code location.  func is the function the line belongs to; when that
 * function was inlined, inline_funcs[] names the functions it was inlined
 * into, innermost first, the last being the out-of-line function that holds
 * the code (ninline counts them all; past SYM_INLINE_MAX the last slot keeps
 * the out-of-line one).  Unknown fields are NULL / 0.  file is the path as
 * the DWARF line table gives it; comp_dir is the compilation directory,
 * which a relative file is relative to (NULL if unknown).
 */
struct sym_loc {
	const char *func;
	const char *file;
	const char *comp_dir;   /* directory a relative file is relative to */
	int line;
	const char *module; /* basename of the module's path */
	uint64_t modoff;
	int ninline;
	const char *inline_funcs[SYM_INLINE_MAX];
};

/*
 * Symbolize module id + offset.  is_return: off is a return address, so the
 * call instruction before it is looked up (modoff still reports off).
 * mod == SYM_MOD_NONE means off is an absolute address (see sym_addr).
 * Returns 0 when the module is known (fields it cannot tell are NULL/0), -1
 * when it is not (out then holds only modoff).
 */
int sym_site(struct sym *s, unsigned mod, uint64_t off, int is_return,
	     struct sym_loc *out);
/* The same for an absolute address: finds the module by mapped range;
 * out->modoff is then addr - base. */
int sym_addr(struct sym *s, uint64_t addr, int is_return, struct sym_loc *out);

/* "file.c:LINE" (file's basename) when the line is known, else
 * "module+0xOFF", or "0xADDR" for an address in no module.  Returns buf. */
const char *sym_site_str(struct sym *s, unsigned mod, uint64_t off, int is_return,
			 char *buf, size_t len);

/*
 * Name of the global or static variable at data address addr, walking its
 * struct members and array elements: "srv.m", "q[3]", "grid[1][2]",
 * "cfg.a.b[1]"; "+N" when addr is N bytes into the innermost named part.
 * Unions (every pthread type is one) and members with reserved names (C
 * library internals) are not entered.  Without DWARF, ELF object symbols
 * give "name" / "name+N".
 * Returns buf, or NULL when no variable holds addr (heap, stack, unknown).
 */
const char *sym_var_name(struct sym *s, uint64_t addr, char *buf, size_t len);

/*
 * Name of stack address addr by the frame of the function at site mod+off,
 * which accessed address ea itself through its stack or frame pointer:
 * "main's stack: e.pendingIo" (sym_stack.c).  Returns buf, or NULL when
 * the frame or no variable of it at the site holds addr.
 */
const char *sym_stack_name(struct sym *s, unsigned mod, uint64_t off, uint64_t ea,
			   uint64_t addr, char *buf, size_t len);

/* A scalar global (integer, enum or pointer of 1, 2, 4 or 8 bytes, not
 * const, not a synchronization object), or a scalar member of a global
 * struct, of one module: candidates to watch in an unannotated program. */
struct sym_global {
	char name[128];    /* "counter", "shared.ptr" */
	uint64_t addr, size;
};
/* Fills out[0..max) in address order; returns how many. */
size_t sym_scalar_globals(struct sym *s, unsigned mod, struct sym_global *out, size_t max);

/*
 * Where the value a read loads may go within its function, from a walk
 * over its machine code (sym_flow.c; docs/avfilter.md).  The read is the
 * access of address addr at site mod+off: with after, the instruction
 * that ends there (a watched access: the trap stops after it), else the
 * first load after the site (an annotation's probe).
 * SYM_USE_DATA: the value only moves through registers, the frame's stack
 * and stores to the globals store[0 .. nstore) (absolute addresses), and
 * dies or is overwritten before the function returns; SYM_USE_STEERS: it
 * reaches a conditional jump, an address, a call or the return value;
 * SYM_USE_UNKNOWN: the walk could not follow it.  Returns 0, or -1 when
 * the module or the function's code cannot be read (out->use UNKNOWN).
 */
enum sym_use { SYM_USE_UNKNOWN, SYM_USE_DATA, SYM_USE_STEERS };
#define SYM_USE_STORES 8
struct sym_use_info {
	enum sym_use use;
	unsigned nstore;
	uint64_t store[SYM_USE_STORES];
};
int sym_value_use(struct sym *s, unsigned mod, uint64_t off, uint64_t addr, int after,
		  struct sym_use_info *out);
/* sym_value_use() in the shape of predict_opts.read_steers (ctx: the
 * struct sym): true ("may steer") unless the value is surely data, and
 * then the globals it is stored to in stores[0 .. *nstores). */
bool sym_read_steers(void *ctx, uint16_t mod, uint64_t off, uint64_t addr, bool watched,
		     uint64_t *stores, unsigned max, unsigned *nstores);

/* A locked update of memory at site mod+off (watched: the instruction
 * that ends there) whose only result, the flags, nothing reads: add, sub,
 * inc or dec (1), or (2), and (3), xor (4) with its flags overwritten, or
 * reaching a call or a return, before any instruction tests them.  Two
 * such updates of one class commute: their order changes no value any
 * thread sees.  0: not one (another instruction, a result read, code that
 * cannot be read or followed).  ctx: the struct sym (predict_opts.rmw_blind). */
int sym_rmw_blind(void *ctx, uint16_t mod, uint64_t off, bool watched);

/* Why the last sym_var_lookup() failed (one line, no "avtrace: "). */
const char *sym_error(const struct sym *s);

/*
 * Reverse: absolute address and size of "var", "var.member", "var[3]",
 * "var.a.b[1][2]" (the first module, in id order, that defines var wins).
 * Returns 0, or -1 with the reason in sym_error().
 */
int sym_var_lookup(struct sym *s, const char *expr, uint64_t *addr, uint64_t *size);

/*
 * Backtrace of thread tid of process pid, which the caller has stopped under
 * ptrace.  pcs[0] is the thread's pc; deeper entries are return addresses
 * (symbolize them with is_return = 1).  Returns the number of frames
 * stored (at most max), or -1.
 */
int sym_backtrace(struct sym *s, pid_t pid, pid_t tid, uint64_t *pcs, int max);

/* Unwinder backends: "libunwind" (default) and "dwfl".  sym_new() honours
 * the environment variable AVTRACE_UNWINDER.  Returns -1 for an unknown
 * name. */
int sym_set_unwinder(struct sym *s, const char *name);
const char *sym_unwinder_name(const struct sym *s);

/* Cache counters: lookups asked for and those that had to read DWARF. */
struct sym_stats {
	uint64_t site_lookups, site_misses;
	uint64_t var_lookups, var_misses;
};
void sym_get_stats(const struct sym *s, struct sym_stats *out);

#endif
