/*
 * Schedule files (docs/schedule-format.md).  The reader is strict because a
 * schedule is often written or edited by hand to try an interleaving: a typo
 * silently read as something else would send replay after the wrong bug, so
 * every malformed line is an error with its line number.
 */
#include "schedule.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "log.h"

#define HEADER_WORD "avtrace-schedule"
#define SPACE " \t\r\v\f"

struct schedule *schedule_new(void)
{
	return calloc(1, sizeof(struct schedule));
}

void schedule_free(struct schedule *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncomments; i++)
		free(s->comments[i]);
	free(s->comments);
	free(s->steps);
	free(s);
}

/* Grows *arr so element n fits; *cap may lag behind n for arrays that
 * callers filled by hand. */
static int grow(void **arr, size_t *cap, size_t n, size_t elsize)
{
	size_t newcap;
	void *p;

	if (n < *cap)
		return 0;
	newcap = n ? n * 2 : 16;
	p = realloc(*arr, newcap * elsize);
	if (!p)
		return -1;
	*arr = p;
	*cap = newcap;
	return 0;
}

int schedule_append_run(struct schedule *s, uint32_t thread, uint32_t count)
{
	struct sched_step *last = s->nsteps ? &s->steps[s->nsteps - 1] : NULL;

	if (count == 0 || s->has_free)
		return -1;
	if (last && last->kind == SCHED_RUN && last->thread == thread &&
	    last->count <= UINT32_MAX - count) {
		last->count += count;
		return 0;
	}
	if (grow((void **)&s->steps, &s->stepcap, s->nsteps, sizeof(*s->steps)) < 0)
		return -1;
	s->steps[s->nsteps++] = (struct sched_step){ .thread = thread, .count = count };
	return 0;
}

int schedule_append_yield(struct schedule *s, uint32_t thread, uint32_t count)
{
	struct sched_step *last = s->nsteps ? &s->steps[s->nsteps - 1] : NULL;

	if (count == 0 || s->has_free)
		return -1;
	if (last && last->kind == SCHED_YIELD && last->thread == thread &&
	    last->count <= UINT32_MAX - count) {
		last->count += count;
		return 0;
	}
	if (grow((void **)&s->steps, &s->stepcap, s->nsteps, sizeof(*s->steps)) < 0)
		return -1;
	s->steps[s->nsteps++] = (struct sched_step){ .thread = thread, .count = count,
						     .kind = SCHED_YIELD };
	return 0;
}

int schedule_add_comment(struct schedule *s, const char *text)
{
	char *copy;

	if (grow((void **)&s->comments, &s->commentcap, s->ncomments,
		 sizeof(*s->comments)) < 0)
		return -1;
	copy = strdup(text);
	if (!copy)
		return -1;
	/* A line break would end the comment and start a malformed line. */
	for (char *c = copy; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	s->comments[s->ncomments++] = copy;
	return 0;
}

struct schedule *schedule_from_events(const struct avt_event *ev, size_t n)
{
	struct schedule *s = schedule_new();

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (schedule_append_run(s, ev[i].thread, 1) < 0) {
			schedule_free(s);
			return NULL;
		}
	}
	s->has_free = 1;
	return s;
}

uint64_t schedule_total_events(const struct schedule *s)
{
	uint64_t total = 0;

	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].kind == SCHED_RUN)
			total += s->steps[i].count;
	return total;
}

/* ---- reading --------------------------------------------------------- */

struct parser {
	const char *path;
	unsigned long line;
	char *err;
	size_t errlen;
	struct schedule *s;
};

static int parse_fail(struct parser *p, const char *fmt, ...) AVT_PRINTF(2, 3);

static int parse_fail(struct parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%lu: %s", p->path, p->line, msg);
	return -1;
}

/* The next whitespace-separated word of *pos, NUL-terminated in place;
 * NULL at the end of the line. */
static char *next_word(char **pos)
{
	char *w = *pos + strspn(*pos, SPACE);
	char *end;

	if (!*w)
		return NULL;
	end = w + strcspn(w, SPACE);
	*pos = *end ? end + 1 : end;
	*end = '\0';
	return w;
}

/* Fails with "trailing text" if anything but blanks is left. */
static int expect_end(struct parser *p, char *pos)
{
	char *rest = pos + strspn(pos, SPACE);
	size_t n = strlen(rest);

	while (n && strchr(SPACE, rest[n - 1]))
		rest[--n] = '\0';
	if (n)
		return parse_fail(p, "trailing text '%s'", rest);
	return 0;
}

/* Plain decimal digits only: no sign, no blanks, no hex, fits in 32 bits. */
static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_header(struct parser *p, char *pos)
{
	char *word = next_word(&pos);
	char *ver = word ? next_word(&pos) : NULL;
	uint32_t v;

	if (!word || strcmp(word, HEADER_WORD) != 0 || !ver)
		return parse_fail(p, "missing header '" HEADER_WORD " %u'",
				  AVT_SCHEDULE_VERSION);
	if (parse_u32(ver, &v) < 0)
		return parse_fail(p, "bad schedule version '%s'", ver);
	if (v != AVT_SCHEDULE_VERSION)
		return parse_fail(p, "unsupported schedule version %u (this avtrace "
				  "reads version %u)", v, AVT_SCHEDULE_VERSION);
	return expect_end(p, pos);
}

static int parse_run(struct parser *p, char *pos, const char *word, uint32_t kind)
{
	char *thr = next_word(&pos);
	char *cnt = thr ? next_word(&pos) : NULL;
	uint32_t thread, count;

	if (p->s->has_free)
		return parse_fail(p, "'%s' after 'free'", word);
	if (!thr)
		return parse_fail(p, "'%s' needs a thread and a count", word);
	if (thr[0] != 'T' || parse_u32(thr + 1, &thread) < 0)
		return parse_fail(p, "bad thread '%s' (expected T<number>)", thr);
	if (!cnt || parse_u32(cnt, &count) < 0 || count == 0)
		return parse_fail(p, "count must be a positive integer");
	if (expect_end(p, pos) < 0)
		return -1;
	/* Keep steps as written, so step numbers in replay's messages match the
	 * file; appending directly skips schedule_append_run's merging. */
	if (grow((void **)&p->s->steps, &p->s->stepcap, p->s->nsteps,
		 sizeof(*p->s->steps)) < 0)
		return parse_fail(p, "out of memory");
	p->s->steps[p->s->nsteps++] = (struct sched_step){ thread, count, kind };
	return 0;
}

static int parse_free(struct parser *p, char *pos)
{
	if (p->s->has_free)
		return parse_fail(p, "duplicate 'free'");
	if (expect_end(p, pos) < 0)
		return -1;
	p->s->has_free = 1;
	return 0;
}

/* "# text" on a line of its own: keep the text (after one optional space)
 * so the prediction's description survives a rewrite. */
static int keep_comment(struct parser *p, char *hash)
{
	char *text = hash + 1;
	size_t n;

	if (*text == ' ')
		text++;
	n = strlen(text);
	if (n && text[n - 1] == '\r')
		text[n - 1] = '\0';
	if (schedule_add_comment(p->s, text) < 0)
		return parse_fail(p, "out of memory");
	return 0;
}

static int parse_line(struct parser *p, char *line)
{
	char *start = line + strspn(line, SPACE);
	char *hash = strchr(start, '#');
	char *pos = start;
	char *word;

	if (p->line > 1 && hash == start)
		return keep_comment(p, hash);
	if (hash)
		*hash = '\0';
	if (p->line == 1)
		return parse_header(p, start);
	word = next_word(&pos);
	if (!word)
		return 0;
	if (strcmp(word, "run") == 0)
		return parse_run(p, pos, word, SCHED_RUN);
	if (strcmp(word, "yield") == 0)
		return parse_run(p, pos, word, SCHED_YIELD);
	if (strcmp(word, "free") == 0)
		return parse_free(p, pos);
	return parse_fail(p, "unknown directive '%s'", word);
}

static int parse_file(struct parser *p, FILE *fp)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	errno = 0;
	while (ret == 0 && (len = getline(&line, &cap, fp)) >= 0) {
		p->line++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		/* a NUL would silently end the line early: a binary file, or
		 * a schedule damaged in transit */
		if (strlen(line) != (size_t)len)
			ret = parse_fail(p, "NUL byte at column %zu", strlen(line) + 1);
		else
			ret = parse_line(p, line);
	}
	free(line);
	if (ret == 0 && ferror(fp))
		ret = parse_fail(p, "%s", strerror(errno ? errno : EIO));
	/* An empty file has no line 1 to carry the header. */
	if (ret == 0 && p->line == 0) {
		p->line = 1;
		ret = parse_fail(p, "missing header '" HEADER_WORD " %u'",
				 AVT_SCHEDULE_VERSION);
	}
	return ret;
}

struct schedule *schedule_read(const char *path, char *err, size_t errlen)
{
	struct parser p = { .path = path, .err = err, .errlen = errlen };
	uint64_t size;
	char why[128];
	/* /dev/zero or a FIFO would be read until memory runs out */
	FILE *fp = avt_fopen_regular(path, AVT_SCHEDULE_MAX_BYTES, &size);

	if (!fp && (errno == EINVAL || errno == EFBIG)) {
		snprintf(err, errlen, "cannot read schedule '%s': %s", path,
			 avt_file_error(errno, size, AVT_SCHEDULE_MAX_BYTES, why, sizeof why));
		return NULL;
	}
	if (!fp) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	p.s = schedule_new();
	if (!p.s) {
		snprintf(err, errlen, "cannot read schedule '%s': out of memory", path);
		fclose(fp);
		return NULL;
	}
	if (parse_file(&p, fp) < 0) {
		schedule_free(p.s);
		p.s = NULL;
	}
	fclose(fp);
	return p.s;
}

/* ---- writing --------------------------------------------------------- */

static void write_comment(const char *text, FILE *fp)
{
	if (!*text) {
		fputs("#\n", fp);
		return;
	}
	fputs("# ", fp);
	for (; *text; text++)
		fputc(*text == '\n' || *text == '\r' ? ' ' : *text, fp);
	fputc('\n', fp);
}

/* Writes the text; -1 with errno set if the stream failed. */
static int write_text(const struct schedule *s, FILE *fp)
{
	fprintf(fp, HEADER_WORD " %u\n", AVT_SCHEDULE_VERSION);
	for (size_t i = 0; i < s->ncomments; i++)
		write_comment(s->comments[i], fp);
	for (size_t i = 0; i < s->nsteps; i++)
		fprintf(fp, "%s T%u %u\n", s->steps[i].kind == SCHED_YIELD ? "yield" : "run",
			s->steps[i].thread, s->steps[i].count);
	if (s->has_free)
		fputs("free\n", fp);
	if (fflush(fp) != 0 || ferror(fp)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* A step of 0 events would be written but rejected when read back.
 * Returns the 1-based number of the first such step, or 0. */
static size_t empty_step(const struct schedule *s)
{
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].count == 0)
			return i + 1;
	return 0;
}

int schedule_write_fp(const struct schedule *s, FILE *fp)
{
	size_t bad = empty_step(s);

	if (bad) {
		avt_error("cannot write schedule: step %zu has no events", bad);
		return -1;
	}
	errno = 0;
	if (write_text(s, fp) < 0) {
		avt_write_error("cannot write schedule: %s", strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/* Writes tmp and renames it over path: 0, or -1 with errno set. */
static int write_and_rename(const struct schedule *s, const char *tmp,
			    const char *path)
{
	FILE *fp = fopen(tmp, "w");
	int ret, e;

	if (!fp)
		return -1;
	errno = 0;
	ret = write_text(s, fp);
	e = errno;
	if (fclose(fp) != 0 && ret == 0) {
		ret = -1;
		e = errno;
	}
	if (ret == 0 && rename(tmp, path) != 0) {
		ret = -1;
		e = errno;
	}
	if (ret < 0) {
		unlink(tmp);
		errno = e ? e : EIO;
	}
	return ret;
}

/* No fsync: the rename protects against avtrace dying mid-write, which is
 * what happens in practice; syncing every one of thousands of schedules
 * would make predict disk-bound to guard against power loss. */
int schedule_write(const struct schedule *s, const char *path)
{
	size_t bad = empty_step(s);
	char *tmp = NULL;

	if (bad) {
		avt_error("cannot write schedule '%s': step %zu has no events",
			  path, bad);
		return -1;
	}
	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		avt_error("cannot write schedule '%s': out of memory", path);
		return -1;
	}
	if (write_and_rename(s, tmp, path) < 0) {
		avt_write_error("cannot write schedule '%s': %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}
