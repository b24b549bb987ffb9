/*
 * Trace file writer and reader (format: docs/trace-format.md).
 *
 * Records are the in-memory structs copied byte for byte: the format is
 * little-endian and avtrace only runs on x86-64, so memcpy is the encoding.
 * The compile-time check below keeps a big-endian port from silently
 * writing a different format.  Only the file and record headers, whose
 * fields are not structs, are encoded explicitly.
 *
 * The writer is on the recorder's hot path (millions of events a second
 * through the agent), so events and heap records go into `events` records
 * (type 9) in a compact form: each field predicted from the one before it
 * (the next seq, the thread's next tindex, the thread's last object and
 * site) and only the difference written, as a varint.  An event costs
 * about 6 bytes of file instead of 56, and the kernel's copy of the file
 * was a sixth of a recording's CPU (docs/trace-format.md, "events").  The
 * record stays open in a 64 KiB buffer until the buffer fills or another
 * record type is written; the file sees one write per full buffer.  The
 * FILE is unbuffered so the data is not copied twice.
 */
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "log.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace format is little-endian and is written with memcpy"
#endif

_Static_assert(sizeof(struct avt_module_rec) == 48, "module record layout");
_Static_assert(sizeof(struct avt_thread_rec) == 16, "thread record layout");

#define FILE_HDR_SIZE 16u
#define REC_HDR_SIZE 8u
#define MAGIC_SIZE 8u
#define WBUF_SIZE (64u * 1024u)
#define NOTE_HDR_SIZE 8u /* u64 after_seq before the text */
#define NO_BATCH SIZE_MAX
/* the longest compact entry: tag, mask, kind and eight 10-byte varints */
#define ENTRY_MAX 96u
/* compact entries (docs/trace-format.md, "events") */
#define TAG_EVENT 0x01u
#define TAG_ALLOC 0x02u
enum { /* an event entry's mask: which fields are written */
	EM_SEQ = 1 << 0,    /* seq is not the next one */
	EM_THREAD = 1 << 1, /* thread is not the previous entry's */
	EM_TINDEX = 1 << 2, /* tindex is not the thread's next */
	EM_OBJ = 1 << 3,    /* obj is not the thread's last one: its difference */
	EM_OBJ2 = 1 << 4,   /* obj2 is not 0 */
	EM_FLAGS = 1 << 5,  /* flags are not 0 */
	EM_SIZE = 1 << 6,   /* size is not 0 */
	EM_MOD = 1 << 7,    /* site_mod is not the thread's last one */
};
enum { /* an alloc entry's mask */
	AM_AFTER = 1 << 0,  /* after_seq is not the events so far */
	AM_THREAD = 1 << 1, /* thread is not the previous entry's */
	AM_SIZE = 1 << 2,   /* size is not 0 */
	AM_MOD = 1 << 3,    /* site_mod is not the last alloc's */
};

/* What the next entry is predicted from: the same on both sides, updated
 * by every event and alloc whatever record carried it. */
struct codec_thread {
	uint64_t obj, site; /* the thread's last event's obj and site_off */
	uint16_t mod;       /* and site_mod */
};

struct codec {
	uint32_t last_thread;  /* the previous entry's thread */
	uint64_t a_addr, a_site; /* the last alloc's block and site */
	uint16_t a_mod;
};

static inline uint64_t zigzag(uint64_t now, uint64_t before)
{
	int64_t d = (int64_t)(now - before);
	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static inline uint64_t unzigzag(uint64_t z, uint64_t before)
{
	return before + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

static inline unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static void put_le16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint16_t get_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ---- writer ---------------------------------------------------------- */

struct trace_writer {
	FILE *fp;
	char *path;          /* owned; for messages */
	unsigned char *buf;  /* owned; WBUF_SIZE bytes */
	size_t len;          /* bytes pending in buf */
	size_t batch;        /* offset in buf of the open events record's header, or NO_BATCH */
	uint64_t nevents;
	int failed;          /* sticky: a write failed, the file is unusable */
	struct codec c;
	struct codec_thread *th; /* owned; per thread id below nth */
	uint32_t *tnext;     /* owned; per thread id: its next tindex */
	size_t nth;
};

static void writer_fail(struct trace_writer *w, int errnum)
{
	/* Report only the first failure: every later write fails the same way. */
	if (!w->failed)
		avt_write_error("cannot write trace '%s': %s", w->path, strerror(errnum ? errnum : EIO));
	w->failed = 1;
}

static void rec_header(unsigned char *hdr, uint16_t type, uint32_t len);

/* Ends the open events record: its length goes into its header (an empty
 * one is taken back). */
static void batch_close(struct trace_writer *w)
{
	if (w->batch == NO_BATCH)
		return;
	size_t n = w->len - w->batch - REC_HDR_SIZE;
	if (n)
		rec_header(w->buf + w->batch, AVT_REC_EVENTS, (uint32_t)n);
	else
		w->len = w->batch;
	w->batch = NO_BATCH;
}

static int writer_drain(struct trace_writer *w)
{
	batch_close(w);
	errno = 0;
	if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->fp) != w->len)
		writer_fail(w, errno ? errno : EIO);
	w->len = 0;
	return w->failed ? -1 : 0;
}

static void writer_put(struct trace_writer *w, const void *data, size_t n)
{
	if (n > WBUF_SIZE - w->len && writer_drain(w) < 0)
		return;
	if (n >= WBUF_SIZE) {
		/* Too big to buffer (a long path or note): write it through. */
		errno = 0;
		if (fwrite(data, 1, n, w->fp) != n)
			writer_fail(w, errno ? errno : EIO);
		return;
	}
	memcpy(w->buf + w->len, data, n);
	w->len += n;
}

static void rec_header(unsigned char *hdr, uint16_t type, uint32_t len)
{
	put_le16(hdr, type);
	put_le16(hdr + 2, 0);
	put_le32(hdr + 4, len);
}

/* One record whose payload is a fixed part followed by a variable part. */
static int write_record(struct trace_writer *w, uint16_t type,
			const void *fixed, size_t nfixed,
			const void *var, size_t nvar)
{
	unsigned char hdr[REC_HDR_SIZE];

	if (w->failed)
		return -1;
	batch_close(w);
	if (nvar > UINT32_MAX - nfixed) {
		avt_error("cannot write trace '%s': record of %zu bytes is too long",
			  w->path, nfixed + nvar);
		return -1;
	}
	rec_header(hdr, type, (uint32_t)(nfixed + nvar));
	writer_put(w, hdr, sizeof(hdr));
	writer_put(w, fixed, nfixed);
	if (nvar)
		writer_put(w, var, nvar);
	return w->failed ? -1 : 0;
}

struct trace_writer *trace_writer_open(const char *path, char *err, size_t errlen)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	unsigned char hdr[FILE_HDR_SIZE];

	if (w)
		w->batch = NO_BATCH;
	if (!w || !(w->path = strdup(path)) || !(w->buf = malloc(WBUF_SIZE))) {
		snprintf(err, errlen, "cannot create trace '%s': out of memory", path);
		goto fail;
	}
	w->fp = fopen(path, "wb");
	if (!w->fp) {
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		goto fail;
	}
	setvbuf(w->fp, NULL, _IONBF, 0);
	memcpy(hdr, AVT_TRACE_MAGIC, MAGIC_SIZE); /* includes the NUL */
	put_le32(hdr + 8, AVT_TRACE_VERSION);
	put_le32(hdr + 12, FILE_HDR_SIZE);
	writer_put(w, hdr, sizeof(hdr));
	return w;
fail:
	if (w) {
		free(w->buf);
		free(w->path);
		free(w);
	}
	return NULL;
}

/* Room for thread id in the codec's tables (zeroed: a new thread's last
 * object and site are 0 on both sides).  -1: out of memory, or an id the
 * reader refuses anyway (the event then goes out as a plain record). */
static int writer_thread(struct trace_writer *w, uint32_t id)
{
	if (id < w->nth)
		return 0;
	if (id >= AVT_TRACE_MAX_THREADS)
		return -1;
	size_t n = w->nth ? w->nth : 16;
	while (n <= id)
		n *= 2;
	struct codec_thread *th = realloc(w->th, n * sizeof *th);
	if (!th)
		return -1;
	w->th = th;
	uint32_t *tn = realloc(w->tnext, n * sizeof *tn);
	if (!tn)
		return -1;
	w->tnext = tn;
	memset(w->th + w->nth, 0, (n - w->nth) * sizeof *w->th);
	memset(w->tnext + w->nth, 0, (n - w->nth) * sizeof *w->tnext);
	w->nth = n;
	return 0;
}

/* A new entry (tag, kind) in the open events record (opening one, room
 * for the longest entry made): where its fields go, its mask at p[-2];
 * NULL when the file cannot be written. */
static unsigned char *entry_begin(struct trace_writer *w, unsigned tag, uint16_t kind)
{
	if (WBUF_SIZE - w->len < ENTRY_MAX && writer_drain(w) < 0)
		return NULL;
	if (w->batch == NO_BATCH) {
		w->batch = w->len;
		w->len += REC_HDR_SIZE;
	}
	unsigned char *p = w->buf + w->len;
	p[0] = (unsigned char)tag;
	p[1] = 0;
	p[2] = (unsigned char)kind;
	return p + 3;
}

int trace_write_module(struct trace_writer *w, const struct avt_module_rec *m,
		       const char *path)
{
	if (m->build_id_len > sizeof(m->build_id)) {
		avt_error("cannot write trace '%s': module '%s' has a %u-byte build-id "
			  "(at most %zu)", w->path, path, m->build_id_len,
			  sizeof(m->build_id));
		return -1;
	}
	return write_record(w, AVT_REC_MODULE, m, sizeof(*m), path, strlen(path));
}

int trace_write_thread(struct trace_writer *w, const struct avt_thread_rec *th)
{
	return write_record(w, AVT_REC_THREAD, th, sizeof(*th), NULL, 0);
}

/* An event the compact form cannot carry (a kind above 255, a thread id
 * the reader refuses): a plain event record, which the reader judges. */
static int write_plain_event(struct trace_writer *w, const struct avt_event *ev)
{
	if (write_record(w, AVT_REC_EVENT, ev, sizeof *ev, NULL, 0) < 0)
		return -1;
	w->nevents++;
	return 0;
}

int trace_write_event(struct trace_writer *w, const struct avt_event *ev)
{
	if (w->failed)
		return -1;
	if (ev->kind > 0xff || writer_thread(w, ev->thread) < 0)
		return write_plain_event(w, ev);
	unsigned char *p = entry_begin(w, TAG_EVENT, ev->kind);
	if (!p)
		return -1;
	unsigned char *mask = p - 2;
	struct codec_thread *th = &w->th[ev->thread];
	unsigned m = 0;
	if (ev->seq != w->nevents) {
		m |= EM_SEQ;
		p = put_varint(p, ev->seq);
	}
	if (ev->thread != w->c.last_thread) {
		m |= EM_THREAD;
		p = put_varint(p, ev->thread);
	}
	if (ev->tindex != w->tnext[ev->thread]) {
		m |= EM_TINDEX;
		p = put_varint(p, ev->tindex);
	}
	if (ev->obj != th->obj) {
		m |= EM_OBJ;
		p = put_varint(p, zigzag(ev->obj, th->obj));
	}
	if (ev->obj2) {
		m |= EM_OBJ2;
		p = put_varint(p, ev->obj2);
	}
	if (ev->flags) {
		m |= EM_FLAGS;
		p = put_varint(p, ev->flags);
	}
	if (ev->size) {
		m |= EM_SIZE;
		p = put_varint(p, ev->size);
	}
	if (ev->site_mod != th->mod) {
		m |= EM_MOD;
		p = put_varint(p, ev->site_mod);
	}
	p = put_varint(p, zigzag(ev->site_off, th->site));
	*mask = (unsigned char)m;
	w->len = (size_t)(p - w->buf);
	w->c.last_thread = ev->thread;
	th->obj = ev->obj;
	th->site = ev->site_off;
	th->mod = ev->site_mod;
	w->tnext[ev->thread] = ev->tindex + 1;
	w->nevents++;
	return 0;
}

int trace_write_note(struct trace_writer *w, const char *text)
{
	uint64_t after_seq = w->nevents;

	return write_record(w, AVT_REC_NOTE, &after_seq, sizeof(after_seq),
			    text, strlen(text));
}

int trace_write_alloc(struct trace_writer *w, const struct avt_alloc_rec *a)
{
	if (w->failed)
		return -1;
	if (a->kind > 0xff)
		return write_record(w, AVT_REC_ALLOC, a, sizeof *a, NULL, 0);
	unsigned char *p = entry_begin(w, TAG_ALLOC, a->kind);
	if (!p)
		return -1;
	unsigned char *mask = p - 2;
	unsigned m = 0;
	if (a->after_seq != w->nevents) {
		m |= AM_AFTER;
		p = put_varint(p, a->after_seq);
	}
	if (a->thread != w->c.last_thread) {
		m |= AM_THREAD;
		p = put_varint(p, a->thread);
	}
	if (a->size) {
		m |= AM_SIZE;
		p = put_varint(p, a->size);
	}
	if (a->site_mod != w->c.a_mod) {
		m |= AM_MOD;
		p = put_varint(p, a->site_mod);
	}
	p = put_varint(p, zigzag(a->addr, w->c.a_addr));
	p = put_varint(p, zigzag(a->site_off, w->c.a_site));
	*mask = (unsigned char)m;
	w->len = (size_t)(p - w->buf);
	w->c.last_thread = a->thread;
	w->c.a_addr = a->addr;
	w->c.a_site = a->site_off;
	w->c.a_mod = a->site_mod;
	return 0;
}

int trace_write_disarm(struct trace_writer *w, const struct avt_disarm_rec *d)
{
	return write_record(w, AVT_REC_DISARM, d, sizeof *d, NULL, 0);
}

int trace_write_signal(struct trace_writer *w, const struct avt_signal_rec *s)
{
	struct avt_signal_rec r = *s;
	r.after_seq = w->nevents; /* where it is written: after those events */
	return write_record(w, AVT_REC_SIGNAL, &r, sizeof r, NULL, 0);
}

int trace_write_stack(struct trace_writer *w, uint64_t seq, const struct avt_frame *f,
		      uint32_t depth)
{
	struct avt_stack_rec h = { seq, depth, 0 };
	return write_record(w, AVT_REC_STACK, &h, sizeof h, f, depth * sizeof *f);
}

int trace_writer_flush(struct trace_writer *w)
{
	if (writer_drain(w) < 0)
		return -1;
	if (fflush(w->fp) != 0) {
		writer_fail(w, errno);
		return -1;
	}
	return 0;
}

int trace_writer_close(struct trace_writer *w)
{
	int ret;

	if (!w)
		return 0;
	ret = trace_writer_flush(w);
	/* close() reports delayed write errors (NFS, quota). */
	if (fclose(w->fp) != 0) {
		writer_fail(w, errno);
		ret = -1;
	}
	if (w->failed)
		ret = -1;
	free(w->buf);
	free(w->path);
	free(w->th);
	free(w->tnext);
	free(w);
	return ret;
}

uint64_t trace_writer_nevents(const struct trace_writer *w)
{
	return w->nevents;
}

/* ---- reader ---------------------------------------------------------- */

struct reader {
	FILE *fp;
	const char *path;
	char *err;
	size_t errlen;
	uint64_t off;        /* file offset of the next unread byte */
	uint64_t size;       /* file size, or UINT64_MAX if not a regular file */
	unsigned char *scratch; /* owned; payloads of variable-length records */
	size_t scratchcap;
	struct trace *t;
	size_t evcap, modcap, thrcap, notecap, stackcap, alloccap, disarmcap, signalcap;
	/* Invariant state (trace_read's header comment in trace.h). */
	uint32_t *tnext;     /* owned; per thread id: its next tindex */
	struct codec_thread *cth; /* owned; per thread id: what its next entry is predicted from */
	struct codec c;
	int torn;            /* the events record being read is cut by the file's end */
	unsigned char *seen; /* owned; per thread id: referenced somewhere */
	size_t tcap;         /* length of tnext and seen */
	uint32_t maxid;      /* highest thread id referenced */
	uint64_t maxid_at;   /* offset of the record that first names maxid */
	int any_thread;      /* some thread id was referenced */
};


/* Record readers return 0 to go on, or one of these, or -1 on error. */
enum {
	READ_END = 1,       /* the file ended between records */
	READ_TRUNCATED = 2, /* the file ended inside a record (a crash) */
};

static int read_fail(struct reader *r, const char *fmt, ...) AVT_PRINTF(2, 3);

static int read_fail(struct reader *r, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "cannot read trace '%s': %s", r->path, msg);
	return -1;
}

/* Make room for element n; capacity doubles so loading n events costs
 * O(n) copies. */
static int grow(struct reader *r, void **arr, size_t *cap, size_t n, size_t elsize)
{
	size_t newcap;
	void *p;

	if (n < *cap)
		return 0;
	newcap = *cap ? *cap * 2 : 64;
	p = realloc(*arr, newcap * elsize);
	if (!p)
		return read_fail(r, "out of memory");
	*arr = p;
	*cap = newcap;
	return 0;
}

/* Reads exactly n bytes of a record: 0, READ_TRUNCATED, or -1.  The FILE
 * is private to trace_read, so the unlocked variant is safe; it makes
 * loading a large trace about a third faster. */
static int read_bytes(struct reader *r, void *buf, size_t n)
{
	size_t got = fread_unlocked(buf, 1, n, r->fp);

	r->off += got;
	if (got == n)
		return 0;
	if (ferror(r->fp))
		return read_fail(r, "%s", strerror(errno ? errno : EIO));
	return READ_TRUNCATED;
}

static int read_header(struct reader *r)
{
	unsigned char hdr[FILE_HDR_SIZE];
	size_t got = fread(hdr, 1, sizeof(hdr), r->fp);
	uint32_t version, hdrsize;

	if (got < sizeof(hdr) && ferror(r->fp))
		return read_fail(r, "%s", strerror(errno ? errno : EIO));
	/* A short file that is not a prefix of our magic is some other file. */
	if (memcmp(hdr, AVT_TRACE_MAGIC, got < MAGIC_SIZE ? got : MAGIC_SIZE) != 0)
		return read_fail(r, "not an avtrace trace (bad magic)");
	if (got < sizeof(hdr))
		return read_fail(r, "truncated header");
	version = get_le32(hdr + 8);
	hdrsize = get_le32(hdr + 12);
	if (version < AVT_TRACE_MIN_VERSION || version > AVT_TRACE_VERSION)
		return read_fail(r, "unsupported trace version %u (this avtrace reads "
				 "versions %u to %u)", version, AVT_TRACE_MIN_VERSION,
				 AVT_TRACE_VERSION);
	if (hdrsize < FILE_HDR_SIZE)
		return read_fail(r, "bad header size %u (at least %u)", hdrsize,
				 FILE_HDR_SIZE);
	/* A longer header is a compatible extension: skip what we do not know. */
	if (hdrsize > r->size)
		return read_fail(r, "truncated header");
	if (hdrsize > FILE_HDR_SIZE && fseeko(r->fp, hdrsize, SEEK_SET) != 0)
		return read_fail(r, "%s", strerror(errno));
	r->off = hdrsize;
	return 0;
}

/* Reads a payload of n bytes into r->scratch. */
static int read_payload(struct reader *r, size_t n)
{
	if (n > r->scratchcap) {
		unsigned char *p = realloc(r->scratch, n);
		if (!p)
			return read_fail(r, "out of memory");
		r->scratch = p;
		r->scratchcap = n;
	}
	return read_bytes(r, r->scratch, n);
}

static char *dup_text(const unsigned char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* Payload lengths a record type allows; types not listed are skipped. */
static const struct {
	uint16_t type;
	const char *name;
	uint32_t min, max;
} rec_sizes[] = {
	{ AVT_REC_MODULE, "module", sizeof(struct avt_module_rec), UINT32_MAX },
	{ AVT_REC_THREAD, "thread", sizeof(struct avt_thread_rec),
	  sizeof(struct avt_thread_rec) },
	{ AVT_REC_EVENT, "event", sizeof(struct avt_event), sizeof(struct avt_event) },
	{ AVT_REC_NOTE, "note", NOTE_HDR_SIZE, UINT32_MAX },
	{ AVT_REC_STACK, "stack", sizeof(struct avt_stack_rec), UINT32_MAX },
	{ AVT_REC_ALLOC, "alloc", sizeof(struct avt_alloc_rec), sizeof(struct avt_alloc_rec) },
	{ AVT_REC_DISARM, "disarm", sizeof(struct avt_disarm_rec), sizeof(struct avt_disarm_rec) },
	{ AVT_REC_SIGNAL, "signal", sizeof(struct avt_signal_rec), sizeof(struct avt_signal_rec) },
};

static int check_length(struct reader *r, uint16_t type, uint32_t len, uint64_t at)
{
	for (size_t i = 0; i < sizeof(rec_sizes) / sizeof(rec_sizes[0]); i++) {
		if (rec_sizes[i].type != type)
			continue;
		if (len >= rec_sizes[i].min && len <= rec_sizes[i].max)
			return 0;
		if (rec_sizes[i].min == rec_sizes[i].max)
			return read_fail(r, "%s record at offset %llu has length %u "
					 "(expected %u)", rec_sizes[i].name,
					 (unsigned long long)at, len, rec_sizes[i].min);
		return read_fail(r, "%s record at offset %llu has length %u "
				 "(at least %u)", rec_sizes[i].name,
				 (unsigned long long)at, len, rec_sizes[i].min);
	}
	return 0;
}

/* Thread id (below r->tcap) is named by the record at offset at. */
static inline void note_seen(struct reader *r, uint32_t id, uint64_t at)
{
	r->seen[id] = 1;
	if (!r->any_thread || id > r->maxid) {
		r->maxid = id;
		r->maxid_at = at;
		r->any_thread = 1;
	}
}

/* Notes thread id `id`, named by the record at offset `at`, so that
 * trace_read can check at the end that the ids are 0..n-1 with no gap. */
static int note_thread(struct reader *r, uint64_t id, uint64_t at, const char *what)
{
	if (id >= AVT_TRACE_MAX_THREADS)
		return read_fail(r, "%s at offset %llu: thread id %llu above %u", what,
				 (unsigned long long)at, (unsigned long long)id,
				 AVT_TRACE_MAX_THREADS - 1);
	if (id >= r->tcap) {
		size_t n = r->tcap ? r->tcap : 16;
		while (n <= id)
			n *= 2;
		uint32_t *tn = realloc(r->tnext, n * sizeof *tn);
		if (!tn)
			return read_fail(r, "out of memory");
		r->tnext = tn;
		struct codec_thread *ct = realloc(r->cth, n * sizeof *ct);
		if (!ct)
			return read_fail(r, "out of memory");
		r->cth = ct;
		memset(r->cth + r->tcap, 0, (n - r->tcap) * sizeof *r->cth);
		unsigned char *sn = realloc(r->seen, n);
		if (!sn)
			return read_fail(r, "out of memory");
		r->seen = sn;
		memset(r->tnext + r->tcap, 0, (n - r->tcap) * sizeof *r->tnext);
		memset(r->seen + r->tcap, 0, n - r->tcap);
		r->tcap = n;
	}
	note_seen(r, (uint32_t)id, at);
	return 0;
}

/* The invariants every consumer relies on (trace.h): checked here, once,
 * on the loader's hot path (no formatting unless something is wrong). */
static int check_event(struct reader *r, const struct avt_event *e, uint64_t at)
{
	size_t i = r->t->nev;
	char what[64];

	if (e->seq != i)
		return read_fail(r, "event %zu at offset %llu: seq %llu out of order (expected %zu)",
				 i, (unsigned long long)at, (unsigned long long)e->seq, i);
	if (e->kind == AVT_EV_NONE || e->kind >= AVT_EV_KIND_COUNT)
		return read_fail(r, "event %zu at offset %llu: unknown kind %u", i,
				 (unsigned long long)at, e->kind);
	if (e->thread >= r->tcap || (avt_kind_obj_is_thread(e->kind) && e->obj != UINT32_MAX &&
				     e->obj >= r->tcap)) {
		snprintf(what, sizeof what, "event %zu", i);
		if (note_thread(r, e->thread, at, what) < 0)
			return -1;
		/* a thread object is a logical id, or UINT32_MAX for none (T0's
		 * parent, a join of a thread avtrace did not see) */
		if (avt_kind_obj_is_thread(e->kind) && e->obj != UINT32_MAX &&
		    note_thread(r, e->obj, at, what) < 0)
			return -1;
	} else {
		note_seen(r, e->thread, at);
		if (avt_kind_obj_is_thread(e->kind) && e->obj != UINT32_MAX)
			note_seen(r, (uint32_t)e->obj, at);
	}
	if (e->tindex != r->tnext[e->thread])
		return read_fail(r, "event %zu at offset %llu: T%u's event index %u out of order "
				 "(expected %u)", i, (unsigned long long)at, e->thread,
				 e->tindex, r->tnext[e->thread]);
	r->tnext[e->thread]++;
	return 0;
}

static int read_event(struct reader *r, uint32_t len, uint64_t at)
{
	struct trace *t = r->t;
	int ret;

	if (grow(r, (void **)&t->ev, &r->evcap, t->nev, sizeof(*t->ev)) < 0)
		return -1;
	ret = read_bytes(r, &t->ev[t->nev], len);
	if (ret == 0 && check_event(r, &t->ev[t->nev], at) < 0)
		return -1;
	if (ret == 0)
		t->nev++;
	return ret;
}

/* ---- the events record: compact events and allocs */

/* 0, 1: the bytes ended inside it, -1: longer than 64 bits */
static int get_varint(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
	const unsigned char *p = *pp;
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p == end)
			return 1;
		unsigned char b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* An entry the bytes end inside: the end of a torn last write (the rest
 * is lost, as a torn record is), or a broken record. */
static int cut_short(struct reader *r, uint64_t at, const char *name)
{
	if (r->torn)
		return READ_TRUNCATED;
	return read_fail(r, "entry at offset %llu: %s cut short by the end of its events record",
			 (unsigned long long)at, name);
}

/* One field of the entry at offset at (for messages), at most max. */
#define FIELD(dst, max, name)                                                          \
	do {                                                                           \
		uint64_t v_ = 0;                                                       \
		int g_ = get_varint(pp, end, &v_);                                     \
		if (g_ > 0)                                                            \
			return cut_short(r, at, name);                                 \
		if (g_ < 0 || v_ > (max))                                                        \
			return read_fail(r, "entry at offset %llu: %s out of range",       \
					 (unsigned long long)at, name);                \
		(dst) = v_;                                                            \
	} while (0)
#define FIELD64(dst, name)                                                             \
	do {                                                                           \
		int g_ = get_varint(pp, end, &(dst));                                  \
		if (g_ > 0)                                                            \
			return cut_short(r, at, name);                                 \
		if (g_ < 0)                                                            \
			return read_fail(r, "entry at offset %llu: %s longer than 64 bits", \
					 (unsigned long long)at, name);                \
	} while (0)

static int decode_event(struct reader *r, const unsigned char **pp, const unsigned char *end,
			unsigned m, unsigned kind, uint64_t at)
{
	struct trace *t = r->t;
	struct avt_event e = { .kind = (uint16_t)kind, .seq = t->nev };
	uint64_t thr = r->c.last_thread, v;
	char what[64];

	if (m & EM_SEQ)
		FIELD64(e.seq, "seq");
	if (m & EM_THREAD)
		FIELD64(thr, "thread");
	if (thr >= r->tcap) {
		snprintf(what, sizeof what, "event %zu", t->nev);
		if (note_thread(r, thr, at, what) < 0)
			return -1;
	}
	e.thread = (uint32_t)thr;
	struct codec_thread *th = &r->cth[thr];
	e.tindex = r->tnext[thr];
	if (m & EM_TINDEX)
		FIELD(e.tindex, UINT32_MAX, "tindex");
	e.obj = th->obj;
	if (m & EM_OBJ) {
		FIELD64(v, "obj");
		e.obj = unzigzag(v, th->obj);
	}
	if (m & EM_OBJ2)
		FIELD64(e.obj2, "obj2");
	if (m & EM_FLAGS)
		FIELD(e.flags, UINT16_MAX, "flags");
	if (m & EM_SIZE)
		FIELD(e.size, UINT16_MAX, "size");
	e.site_mod = th->mod;
	if (m & EM_MOD)
		FIELD(e.site_mod, UINT16_MAX, "site_mod");
	FIELD64(v, "site");
	e.site_off = unzigzag(v, th->site);

	if (grow(r, (void **)&t->ev, &r->evcap, t->nev, sizeof(*t->ev)) < 0)
		return -1;
	t->ev[t->nev] = e;
	if (check_event(r, &t->ev[t->nev], at) < 0)
		return -1;
	t->nev++;
	th = &r->cth[e.thread]; /* check_event may have grown the tables */
	th->obj = e.obj;
	th->site = e.site_off;
	th->mod = e.site_mod;
	r->c.last_thread = e.thread;
	return 0;
}

static int decode_alloc(struct reader *r, const unsigned char **pp, const unsigned char *end,
			unsigned m, unsigned kind, uint64_t at)
{
	struct trace *t = r->t;
	struct avt_alloc_rec a = { .kind = (uint16_t)kind, .after_seq = t->nev,
				   .thread = r->c.last_thread, .site_mod = r->c.a_mod };
	uint64_t v;

	if (m & ~(unsigned)(AM_AFTER | AM_THREAD | AM_SIZE | AM_MOD))
		return read_fail(r, "alloc entry at offset %llu: unknown fields 0x%02x",
				 (unsigned long long)at, m);
	if (m & AM_AFTER)
		FIELD64(a.after_seq, "after_seq");
	if (m & AM_THREAD)
		FIELD(a.thread, UINT32_MAX, "thread");
	if (m & AM_SIZE)
		FIELD64(a.size, "size");
	if (m & AM_MOD)
		FIELD(a.site_mod, UINT16_MAX, "site_mod");
	FIELD64(v, "addr");
	a.addr = unzigzag(v, r->c.a_addr);
	FIELD64(v, "site");
	a.site_off = unzigzag(v, r->c.a_site);
	if (a.kind < AVT_ALLOC_MALLOC || a.kind > AVT_ALLOC_FREE)
		return read_fail(r, "alloc entry at offset %llu: unknown kind %u",
				 (unsigned long long)at, a.kind);
	if (grow(r, (void **)&t->allocs, &r->alloccap, t->nallocs, sizeof(*t->allocs)) < 0)
		return -1;
	t->allocs[t->nallocs++] = a;
	r->c.last_thread = a.thread;
	r->c.a_addr = a.addr;
	r->c.a_site = a.site_off;
	r->c.a_mod = a.site_mod;
	return 0;
}
#undef FIELD
#undef FIELD64

/* An events record of len bytes at offset at; torn: the file ends inside
 * it (len is what is there), and its whole entries are read. */
static int read_events(struct reader *r, uint32_t len, uint64_t at, int torn)
{
	int ret = read_payload(r, len);

	if (ret)
		return ret;
	if (!len) /* an empty one (never written; scratch may be NULL) */
		return torn ? READ_TRUNCATED : 0;
	r->torn = torn;
	const unsigned char *p = r->scratch, *end = p + len;
	while (p < end) {
		uint64_t eat = at + REC_HDR_SIZE + (uint64_t)(p - r->scratch);
		if (end - p < 3)
			return cut_short(r, eat, "the entry");
		unsigned tag = p[0], m = p[1], kind = p[2];
		p += 3;
		if (tag == TAG_EVENT)
			ret = decode_event(r, &p, end, m, kind, eat);
		else if (tag == TAG_ALLOC)
			ret = decode_alloc(r, &p, end, m, kind, eat);
		else
			return read_fail(r, "entry at offset %llu: unknown tag %u", (unsigned long long)eat, tag);
		if (ret)
			return ret;
	}
	return torn ? READ_TRUNCATED : 0;
}

static int read_thread(struct reader *r, uint32_t len, uint64_t at)
{
	struct trace *t = r->t;
	int ret;

	if (grow(r, (void **)&t->thr, &r->thrcap, t->nthr, sizeof(*t->thr)) < 0)
		return -1;
	ret = read_bytes(r, &t->thr[t->nthr], len);
	if (ret)
		return ret;
	const struct avt_thread_rec *th = &t->thr[t->nthr];
	if (note_thread(r, th->thread, at, "thread record") < 0 ||
	    (th->parent != UINT32_MAX && note_thread(r, th->parent, at, "thread record") < 0))
		return -1;
	t->nthr++;
	return 0;
}

static int read_module(struct reader *r, uint32_t len, uint64_t at)
{
	struct trace *t = r->t;
	struct avt_module *m;
	int ret = read_payload(r, len);

	if (ret)
		return ret;
	if (grow(r, (void **)&t->mod, &r->modcap, t->nmod, sizeof(*t->mod)) < 0)
		return -1;
	m = &t->mod[t->nmod];
	memcpy(&m->rec, r->scratch, sizeof(m->rec));
	if (m->rec.build_id_len > sizeof(m->rec.build_id))
		return read_fail(r, "module record at offset %llu has a %u-byte "
				 "build-id (at most %zu)", (unsigned long long)at,
				 m->rec.build_id_len, sizeof(m->rec.build_id));
	m->after_seq = t->nev;
	m->path = dup_text(r->scratch + sizeof(m->rec), len - sizeof(m->rec));
	if (!m->path)
		return read_fail(r, "out of memory");
	t->nmod++;
	return 0;
}

static int read_note(struct reader *r, uint32_t len, uint64_t at)
{
	struct trace *t = r->t;
	struct avt_note *n;
	int ret = read_payload(r, len);

	if (ret)
		return ret;
	if (grow(r, (void **)&t->notes, &r->notecap, t->nnotes, sizeof(*t->notes)) < 0)
		return -1;
	n = &t->notes[t->nnotes];
	memcpy(&n->after_seq, r->scratch, NOTE_HDR_SIZE);
	/* notes are written in order, after the events they follow */
	if (n->after_seq > t->nev || (t->nnotes && n->after_seq < n[-1].after_seq))
		return read_fail(r, "note at offset %llu: after_seq %llu out of order "
				 "(%zu events before it)", (unsigned long long)at,
				 (unsigned long long)n->after_seq, t->nev);
	n->text = dup_text(r->scratch + NOTE_HDR_SIZE, len - NOTE_HDR_SIZE);
	if (!n->text)
		return read_fail(r, "out of memory");
	t->nnotes++;
	return 0;
}

static int read_stack(struct reader *r, uint32_t len, uint64_t at)
{
	struct trace *t = r->t;
	struct avt_stack_rec h;
	int ret = read_payload(r, len);

	if (ret)
		return ret;
	memcpy(&h, r->scratch, sizeof h);
	if ((uint64_t)h.depth * sizeof(struct avt_frame) != len - sizeof h)
		return read_fail(r, "stack record at offset %llu has length %u for %u frames",
				 (unsigned long long)at, len, h.depth);
	if (h.depth > AVT_TRACE_MAX_DEPTH)
		return read_fail(r, "stack record at offset %llu has %u frames (at most %u)",
				 (unsigned long long)at, h.depth, AVT_TRACE_MAX_DEPTH);
	/* a stack follows its event; trace_stack() searches them by seq */
	if (h.seq >= t->nev || (t->nstacks && h.seq <= t->stacks[t->nstacks - 1].seq))
		return read_fail(r, "stack record at offset %llu: seq %llu out of order "
				 "(%zu events before it%s)", (unsigned long long)at,
				 (unsigned long long)h.seq, t->nev,
				 t->nstacks ? ", after a stack of a later or the same event" : "");
	if (grow(r, (void **)&t->stacks, &r->stackcap, t->nstacks, sizeof(*t->stacks)) < 0)
		return -1;
	struct avt_stack *s = &t->stacks[t->nstacks];
	s->seq = h.seq;
	s->depth = h.depth;
	s->frames = malloc(h.depth ? h.depth * sizeof *s->frames : 1);
	if (!s->frames)
		return read_fail(r, "out of memory");
	memcpy(s->frames, r->scratch + sizeof h, h.depth * sizeof *s->frames);
	t->nstacks++;
	return 0;
}

static int read_alloc(struct reader *r, uint32_t len, uint64_t at)
{
	struct trace *t = r->t;
	int ret;

	if (grow(r, (void **)&t->allocs, &r->alloccap, t->nallocs, sizeof(*t->allocs)) < 0)
		return -1;
	ret = read_bytes(r, &t->allocs[t->nallocs], len);
	if (ret)
		return ret;
	const struct avt_alloc_rec *a = &t->allocs[t->nallocs];
	if (a->kind < AVT_ALLOC_MALLOC || a->kind > AVT_ALLOC_FREE)
		return read_fail(r, "alloc record at offset %llu: unknown kind %u",
				 (unsigned long long)at, a->kind);
	t->nallocs++;
	return 0;
}

/* A fixed-size record appended to one of the trace's arrays (*arr, *n
 * entries, room for *cap) as it is in the file. */
static int read_appended(struct reader *r, uint32_t len, void **arr, size_t *cap, size_t *n, size_t elem)
{
	if (grow(r, arr, cap, *n, elem) < 0)
		return -1;
	int ret = read_bytes(r, (char *)*arr + *n * elem, len);
	if (ret == 0)
		(*n)++;
	return ret;
}

static int read_disarm(struct reader *r, uint32_t len)
{
	struct trace *t = r->t;
	return read_appended(r, len, (void **)&t->disarms, &r->disarmcap, &t->ndisarms, sizeof(*t->disarms));
}

static int read_signal(struct reader *r, uint32_t len)
{
	struct trace *t = r->t;
	return read_appended(r, len, (void **)&t->signals, &r->signalcap, &t->nsignals, sizeof(*t->signals));
}

static int read_record(struct reader *r)
{
	unsigned char hdr[REC_HDR_SIZE];
	uint64_t at = r->off;
	size_t got = fread_unlocked(hdr, 1, sizeof(hdr), r->fp);
	uint16_t type;
	uint32_t len;

	r->off += got;
	if (got < sizeof(hdr)) {
		if (ferror(r->fp))
			return read_fail(r, "%s", strerror(errno ? errno : EIO));
		return got == 0 ? READ_END : READ_TRUNCATED;
	}
	type = get_le16(hdr);
	len = get_le32(hdr + 4);
	if (check_length(r, type, len, at) < 0)
		return -1;
	/* A torn last record: do not allocate for bytes that are not there.
	 * An events record's whole entries are kept, as whole records are. */
	if (len > r->size - r->off)
		return type == AVT_REC_EVENTS ? read_events(r, (uint32_t)(r->size - r->off), at, 1)
					      : READ_TRUNCATED;
	switch (type) {
	case AVT_REC_EVENT:
		return read_event(r, len, at);
	case AVT_REC_THREAD:
		return read_thread(r, len, at);
	case AVT_REC_MODULE:
		return read_module(r, len, at);
	case AVT_REC_NOTE:
		return read_note(r, len, at);
	case AVT_REC_STACK:
		return read_stack(r, len, at);
	case AVT_REC_ALLOC:
		return read_alloc(r, len, at);
	case AVT_REC_DISARM:
		return read_disarm(r, len);
	case AVT_REC_SIGNAL:
		return read_signal(r, len);
	case AVT_REC_EVENTS:
		return read_events(r, len, at, 0);
	default:
		/* Unknown types: skipping them is what the version contract allows. */
		return read_payload(r, len);
	}
}

static int reader_open(struct reader *r)
{
	/* a pipe or a device could feed records forever (/dev/zero, a FIFO) */
	r->fp = avt_fopen_regular(r->path, UINT64_MAX, &r->size);
	if (!r->fp && errno == EINVAL)
		return read_fail(r, "not a regular file");
	if (!r->fp) {
		snprintf(r->err, r->errlen, "cannot open '%s': %s", r->path,
			 strerror(errno));
		return -1;
	}
	r->t = calloc(1, sizeof(*r->t));
	if (!r->t)
		return read_fail(r, "out of memory");
	return 0;
}

/* Thread ids are 0..n-1 with none missing: n then counts threads the file
 * really has records of, so n x n clocks stay proportional to the file. */
static int check_threads(struct reader *r)
{
	if (!r->any_thread)
		return 0;
	for (uint32_t id = 0; id < r->maxid; id++)
		if (!r->seen[id])
			return read_fail(r, "record at offset %llu names T%u, but no record "
					 "names T%u", (unsigned long long)r->maxid_at,
					 r->maxid, id);
	return 0;
}

struct trace *trace_read(const char *path, char *err, size_t errlen)
{
	struct reader r = { .path = path, .err = err, .errlen = errlen };
	int ret = reader_open(&r);

	if (ret == 0)
		ret = read_header(&r);
	while (ret == 0)
		ret = read_record(&r);
	if (ret > 0 && check_threads(&r) < 0)
		ret = -1;
	if (ret == READ_TRUNCATED)
		r.t->truncated = 1;
	if (r.fp)
		fclose(r.fp);
	free(r.scratch);
	free(r.tnext);
	free(r.cth);
	free(r.seen);
	if (ret < 0) {
		trace_free(r.t);
		return NULL;
	}
	return r.t;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nmod; i++)
		free(t->mod[i].path);
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i].text);
	for (size_t i = 0; i < t->nstacks; i++)
		free(t->stacks[i].frames);
	free(t->stacks);
	free(t->allocs);
	free(t->disarms);
	free(t->signals);
	free(t->mod);
	free(t->notes);
	free(t->thr);
	free(t->ev);
	free(t);
}

const struct avt_stack *trace_stack(const struct trace *t, uint64_t seq)
{
	size_t lo = 0, hi = t->nstacks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->stacks[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nstacks && t->stacks[lo].seq == seq ? &t->stacks[lo] : NULL;
}

const struct avt_module *trace_module(const struct trace *t, unsigned id)
{
	for (size_t i = 0; i < t->nmod; i++)
		if (t->mod[i].rec.id == id)
			return &t->mod[i];
	return NULL;
}

const struct avt_thread_rec *trace_thread(const struct trace *t, unsigned id)
{
	for (size_t i = 0; i < t->nthr; i++)
		if (t->thr[i].thread == id)
			return &t->thr[i];
	return NULL;
}

unsigned trace_nthreads(const struct trace *t)
{
	uint64_t n = 0;

	for (size_t i = 0; i < t->nthr; i++)
		if ((uint64_t)t->thr[i].thread + 1 > n)
			n = (uint64_t)t->thr[i].thread + 1;
	for (size_t i = 0; i < t->nev; i++)
		if ((uint64_t)t->ev[i].thread + 1 > n)
			n = (uint64_t)t->ev[i].thread + 1;
	/* A corrupt id of UINT32_MAX must not wrap the count to 0. */
	return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}
