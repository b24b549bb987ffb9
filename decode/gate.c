/*
 * Caller gates (gate.h): the bytes, written out by hand.
 */
#include "gate.h"

#include <string.h>

struct out {
	uint8_t *p;
	size_t n;
};

static void put(struct out *o, const void *b, size_t n)
{
	if (o->n + n <= GATE_SIZE)
		memcpy(o->p + o->n, b, n);
	o->n += n;
}

static void put64(struct out *o, uint8_t rex, uint8_t op, uint64_t v)
{
	uint8_t b[2] = { rex, op };
	put(o, b, 2);
	put(o, &v, 8);
}

/* A rel32 from the end of an instruction at o's current length + len to
 * to; false when out of reach. */
static bool rel32_at(uint64_t at, const struct out *o, size_t len, uint64_t to, int32_t *r)
{
	int64_t d = (int64_t)(to - (at + o->n + len));
	*r = (int32_t)d;
	return d == *r;
}

/* popfq; pop %rcx; pop %rax; jmp to */
static bool leave_to(struct out *o, uint64_t at, uint64_t to)
{
	static const uint8_t pops[] = { 0x9d, 0x59, 0x58 };
	put(o, pops, sizeof pops);
	int32_t r;
	if (!rel32_at(at, o, 5, to, &r))
		return false;
	uint8_t j = 0xe9;
	put(o, &j, 1);
	put(o, &r, 4);
	return true;
}

/* A forward jump to pass, whose offset is patched once pass is placed. */
struct fix {
	size_t at;  /* the rel32's offset in out */
	size_t end; /* the jump's end */
};

static void jcc_pass(struct out *o, const uint8_t *op, size_t oplen, struct fix *f)
{
	put(o, op, oplen);
	f->at = o->n;
	static const uint8_t zero[4];
	put(o, zero, 4);
	f->end = o->n;
}

size_t gate_encode(uint8_t out[GATE_SIZE], uint64_t at, const struct gate_range *r, size_t n,
		   bool null_arg_passes, uint64_t go, uint64_t stop)
{
	if (n > GATE_MAX_RANGES)
		return 0;
	struct out o = { out, 0 };
	struct fix fixes[GATE_MAX_RANGES + 1];
	size_t nf = 0;
	static const uint8_t save[] = { 0x50, 0x51, 0x9c }; /* push rax, rcx; pushfq */
	put(&o, save, sizeof save);
	if (null_arg_passes) {
		static const uint8_t test_rdi[] = { 0x48, 0x85, 0xff };
		static const uint8_t jz[] = { 0x0f, 0x84 };
		put(&o, test_rdi, sizeof test_rdi);
		jcc_pass(&o, jz, sizeof jz, &fixes[nf++]);
	}
	for (size_t i = 0; i < n; i++) {
		if (r[i].hi <= r[i].lo)
			return 0;
		static const uint8_t load_ret[] = { 0x48, 0x8b, 0x44, 0x24, 0x18 };
		static const uint8_t sub[] = { 0x48, 0x29, 0xc8 }, cmp[] = { 0x48, 0x39, 0xc8 };
		static const uint8_t jb[] = { 0x0f, 0x82 };
		put(&o, load_ret, sizeof load_ret);
		put64(&o, 0x48, 0xb9, r[i].lo); /* movabs $lo,%rcx */
		put(&o, sub, sizeof sub);
		put64(&o, 0x48, 0xb9, r[i].hi - r[i].lo);
		put(&o, cmp, sizeof cmp);
		jcc_pass(&o, jb, sizeof jb, &fixes[nf++]);
	}
	if (!leave_to(&o, at, stop))
		return 0;
	size_t pass = o.n;
	if (!leave_to(&o, at, go) || o.n > GATE_SIZE)
		return 0;
	for (size_t i = 0; i < nf; i++) {
		int32_t d = (int32_t)(pass - fixes[i].end);
		memcpy(out + fixes[i].at, &d, 4);
	}
	return o.n;
}
