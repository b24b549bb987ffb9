/*
 * Sync specs: the parser (the format is docs/sync-spec.md) and GLib's.
 *
 * A spec is lines of words.  `library NAME` says where the functions of
 * the lines below it are (a loaded module whose file name starts with
 * NAME; `library program`: the program, then any library, the default);
 * any other line is `FUNCTION OPERATION [OPTION...]`.  Every mistake is
 * "FILE:LINE: what is wrong": a spec that says something else than its
 * author meant would make avtrace model locks that are not there.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncspec.h"
#include "tracer.h"

static const struct {
	const char *word;
	enum sync_op op;
} ops[] = {
	{ "acquire", SYNC_ACQUIRE }, { "release", SYNC_RELEASE },
	{ "try-acquire", SYNC_TRY_ACQUIRE },
	{ "read-acquire", SYNC_READ_ACQUIRE }, { "read-release", SYNC_READ_RELEASE },
	{ "read-try-acquire", SYNC_READ_TRY_ACQUIRE },
	{ "write-acquire", SYNC_WRITE_ACQUIRE }, { "write-release", SYNC_WRITE_RELEASE },
	{ "write-try-acquire", SYNC_WRITE_TRY_ACQUIRE },
	{ "wait", SYNC_WAIT }, { "timed-wait", SYNC_TIMED_WAIT },
	{ "signal", SYNC_SIGNAL }, { "broadcast", SYNC_BROADCAST },
	{ "once", SYNC_ONCE }, { "once-enter", SYNC_ONCE_ENTER }, { "once-leave", SYNC_ONCE_LEAVE },
	{ "thread-create", SYNC_THREAD_CREATE }, { "thread-join", SYNC_THREAD_JOIN },
};
#define NOPS (sizeof ops / sizeof ops[0])

struct pstate {
	const char *file;
	int line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int perr(struct pstate *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%d: ", p->file, p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool is_name(const char *w)
{
	if (!(isalpha((unsigned char)*w) || *w == '_'))
		return false;
	for (; *w; w++)
		if (!(isalnum((unsigned char)*w) || *w == '_' || *w == '.' || *w == '-' || *w == '+'))
			return false;
	return true;
}

static bool takes_lock_arg(enum sync_op op)
{
	return op == SYNC_WAIT || op == SYNC_TIMED_WAIT;
}

static bool is_try(enum sync_op op)
{
	return op == SYNC_TRY_ACQUIRE || op == SYNC_READ_TRY_ACQUIRE || op == SYNC_WRITE_TRY_ACQUIRE;
}

static bool has_object(enum sync_op op)
{
	return op != SYNC_THREAD_CREATE && op != SYNC_THREAD_JOIN;
}

/* "N" of "key=N": an argument number 1..6 (the register arguments). */
static int arg_number(struct pstate *p, const char *key, const char *v, uint8_t *out)
{
	if (!(v[0] >= '1' && v[0] <= '6' && !v[1]))
		return perr(p, "%s=%s: an argument number from 1 to 6 (the first six arguments)", key, v);
	*out = (uint8_t)(v[0] - '1');
	return 0;
}

/* One OPTION word of a function line. */
static int option(struct pstate *p, struct sync_func *f, const char *w)
{
	const char *eq = strchr(w, '=');
	size_t klen = eq ? (size_t)(eq - w) : strlen(w);
	const char *v = eq ? eq + 1 : NULL;
	if (!eq && !strcmp(w, "recursive")) {
		if (f->op != SYNC_ACQUIRE && f->op != SYNC_TRY_ACQUIRE)
			return perr(p, "'recursive' is for acquire and try-acquire only");
		f->recursive = true;
		return 0;
	}
	if (eq && klen == 3 && !strncmp(w, "arg", 3)) {
		if (!has_object(f->op))
			return perr(p, "%s takes no object argument", ops[f->op].word);
		return arg_number(p, "arg", v, &f->arg);
	}
	if (eq && klen == 4 && !strncmp(w, "lock", 4)) {
		if (!takes_lock_arg(f->op))
			return perr(p, "'lock=' is for wait and timed-wait only");
		return arg_number(p, "lock", v, &f->lock_arg);
	}
	if (eq && klen == 3 && !strncmp(w, "bit", 3)) {
		if (f->op != SYNC_ACQUIRE && f->op != SYNC_RELEASE && f->op != SYNC_TRY_ACQUIRE)
			return perr(p, "'bit=' is for acquire, release and try-acquire only");
		uint8_t b = 0;
		if (arg_number(p, "bit", v, &b) < 0)
			return -1;
		f->bit_arg = (int8_t)b;
		return 0;
	}
	if (eq && klen == 2 && !strncmp(w, "ok", 2)) {
		if (!is_try(f->op) && f->op != SYNC_TIMED_WAIT)
			return perr(p, "'ok=' is for the try-acquires and timed-wait only");
		if (strcmp(v, "zero") && strcmp(v, "nonzero"))
			return perr(p, "ok=%s: 'ok=zero' or 'ok=nonzero'", v);
		f->ok_nonzero = !strcmp(v, "nonzero");
		return 0;
	}
	return perr(p, "unknown option '%s' (arg=N, lock=N, bit=N, recursive, ok=zero|nonzero)", w);
}

static int op_word(struct pstate *p, const char *w, enum sync_op *op)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].word, w)) {
			*op = ops[i].op;
			return 0;
		}
	char list[400] = "";
	for (size_t i = 0; i < NOPS; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", ops[i].word);
	return perr(p, "unknown operation '%s' (%s)", w, list);
}

static int add_func(struct pstate *p, struct sync_spec *s, char **words, size_t nw, const char *lib)
{
	if (!is_name(words[0]) || strlen(words[0]) >= SYNC_NAME_MAX)
		return perr(p, "'%s' is not a function name", words[0]);
	if (nw < 2)
		return perr(p, "%s: an operation is missing (acquire, release, wait, ...)", words[0]);
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, words[0]))
			return perr(p, "%s is already given at line %d", words[0], s->f[i].line);
	struct sync_func f;
	memset(&f, 0, sizeof f);
	snprintf(f.name, sizeof f.name, "%s", words[0]);
	snprintf(f.lib, sizeof f.lib, "%s", lib);
	f.line = p->line;
	f.bit_arg = -1;
	f.lock_arg = 1;
	if (op_word(p, words[1], &f.op) < 0)
		return -1;
	for (size_t i = 2; i < nw; i++)
		if (option(p, &f, words[i]) < 0)
			return -1;
	if (takes_lock_arg(f.op) && f.lock_arg == f.arg)
		return perr(p, "%s: the lock (argument %d) cannot be the condition's own argument",
			    f.name, f.lock_arg + 1);
	if (f.bit_arg >= 0 && f.bit_arg == f.arg)
		return perr(p, "%s: bit= and arg= name the same argument", f.name);
	struct sync_func *nf = realloc(s->f, (s->n + 1) * sizeof *nf);
	if (!nf)
		return perr(p, "out of memory");
	s->f = nf;
	s->f[s->n++] = f;
	return 0;
}

/* Splits line (in place) into at most max words; # starts a comment. */
static size_t split(char *line, char **words, size_t max, bool *too_many)
{
	size_t n = 0;
	*too_many = false;
	char *c = strchr(line, '#');
	if (c)
		*c = 0;
	for (char *w = strtok(line, " \t\r"); w; w = strtok(NULL, " \t\r")) {
		if (n == max) {
			*too_many = true;
			break;
		}
		words[n++] = w;
	}
	return n;
}

static int parse_line(struct pstate *p, char *line, struct sync_spec *s, char *lib, size_t liblen)
{
	char *w[10];
	bool too_many;
	size_t nw = split(line, w, 10, &too_many);
	if (too_many)
		return perr(p, "too many words");
	if (!nw)
		return 0;
	if (!strcmp(w[0], "library")) {
		if (nw != 2)
			return perr(p, "'library NAME': one name (a module's file name, or 'program')");
		if (!is_name(w[1]) || strlen(w[1]) >= liblen)
			return perr(p, "'%s' is not a library's file name", w[1]);
		snprintf(lib, liblen, "%s", strcmp(w[1], "program") ? w[1] : "");
		return 0;
	}
	return add_func(p, s, w, nw, lib);
}

int syncspec_parse(const char *text, const char *file, struct sync_spec *out, char *err,
		   size_t errlen)
{
	struct pstate p = { file, 0, err, errlen };
	char lib[SYNC_NAME_MAX] = "";
	memset(out, 0, sizeof *out);
	const char *at = text;
	while (*at) {
		const char *nl = strchr(at, '\n');
		size_t len = nl ? (size_t)(nl - at) : strlen(at);
		p.line++;
		char buf[1024];
		if (len >= sizeof buf) {
			perr(&p, "line longer than %zu characters", sizeof buf - 1);
			syncspec_free(out);
			return -1;
		}
		memcpy(buf, at, len);
		buf[len] = 0;
		if (parse_line(&p, buf, out, lib, sizeof lib) < 0) {
			syncspec_free(out);
			return -1;
		}
		at += len + (nl ? 1 : 0);
	}
	return 0;
}

void syncspec_free(struct sync_spec *s)
{
	free(s->f);
	s->f = NULL;
	s->n = 0;
}

/* GLib 2.x (gthread-posix.c, gthread.c, gbitlock.c).  GMutex and GCond
 * are futex words; GRecMutex and GRWLock wrap a pthread lock allocated
 * on first use (the inner pthread call is the outer's, not an event of
 * its own); g_once_init_enter is called only when *location is still 0
 * (the header's macro looks first). */
const char syncspec_glib[] =
	"library libglib-2.0.so\n"
	"g_mutex_lock acquire\n"
	"g_mutex_trylock try-acquire ok=nonzero\n"
	"g_mutex_unlock release\n"
	"g_rec_mutex_lock acquire recursive\n"
	"g_rec_mutex_trylock try-acquire recursive ok=nonzero\n"
	"g_rec_mutex_unlock release\n"
	"g_rw_lock_writer_lock write-acquire\n"
	"g_rw_lock_writer_trylock write-try-acquire ok=nonzero\n"
	"g_rw_lock_writer_unlock write-release\n"
	"g_rw_lock_reader_lock read-acquire\n"
	"g_rw_lock_reader_trylock read-try-acquire ok=nonzero\n"
	"g_rw_lock_reader_unlock read-release\n"
	"g_cond_wait wait arg=1 lock=2\n"
	"g_cond_wait_until timed-wait arg=1 lock=2 ok=nonzero\n"
	"g_cond_timed_wait timed-wait arg=1 lock=2 ok=nonzero\n"
	"g_cond_signal signal\n"
	"g_cond_broadcast broadcast\n"
	"g_once_impl once\n"
	"g_once_init_enter once-enter\n"
	"g_once_init_enter_pointer once-enter\n"
	"g_once_init_leave once-leave\n"
	"g_once_init_leave_pointer once-leave\n"
	"g_bit_lock acquire bit=2\n"
	"g_bit_trylock try-acquire bit=2 ok=nonzero\n"
	"g_bit_unlock release bit=2\n"
	"g_pointer_bit_lock acquire bit=2\n"
	"g_pointer_bit_trylock try-acquire bit=2 ok=nonzero\n"
	"g_pointer_bit_unlock release bit=2\n"
	"g_thread_new thread-create\n"
	"g_thread_try_new thread-create\n"
	"g_thread_join thread-join\n";

/* Not one of the built-in hooks (a spec adds functions; it does not
 * change what pthread_mutex_lock means). */
static int check_builtin(const struct sync_spec *s, const char *file, char *err, size_t errlen,
			 bool (*builtin)(const char *))
{
	for (size_t i = 0; i < s->n; i++)
		if (builtin(s->f[i].name)) {
			snprintf(err, errlen, "%s:%d: %s is one of avtrace's own hooks: a spec cannot change it",
				 file, s->f[i].line, s->f[i].name);
			return -1;
		}
	return 0;
}

int tracer_sync_spec_check(const char *text, const char *name, char *err, size_t errlen)
{
	struct sync_spec s;
	if (syncspec_parse(text, name, &s, err, errlen) < 0)
		return -1;
	int rc = check_builtin(&s, name, err, errlen, syncspec_builtin_name);
	syncspec_free(&s);
	return rc;
}

#define SPEC_MAX_BYTES (1u << 20)

int tracer_sync_spec_load(const char *path, char **text, char *err, size_t errlen)
{
	*text = NULL;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read sync spec '%s': %s", path, strerror(errno));
		return -1;
	}
	char *buf = malloc(SPEC_MAX_BYTES + 1);
	size_t n = buf ? fread(buf, 1, SPEC_MAX_BYTES + 1, f) : 0;
	bool bad = !buf || ferror(f);
	fclose(f);
	if (bad || n > SPEC_MAX_BYTES || memchr(buf, 0, n)) {
		snprintf(err, errlen, "cannot read sync spec '%s': %s", path,
			 bad ? "read error" : n > SPEC_MAX_BYTES ? "larger than 1 MiB" : "not a text file");
		free(buf);
		return -1;
	}
	buf[n] = 0;
	if (tracer_sync_spec_check(buf, path, err, errlen) < 0) {
		free(buf);
		return -1;
	}
	*text = buf;
	return 0;
}
