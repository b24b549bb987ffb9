/*
 * The base of explore/ (xp.h): the deterministic PRNG and the line
 * printer of describe.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "xp.h"
#include "trace/log.h"

/* ---- PRNG */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void xp_rng_seed(struct xp_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	/* splitmix64 is a bijection of its counter, so four consecutive
	 * outputs are never all zero; the check documents the invariant
	 * xoshiro needs. */
	BUG_ON((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0);
}

void xp_rng_seed_run(struct xp_rng *r, uint64_t seed, uint64_t run_index)
{
	/* For one seed, run_index -> mixed seed is a bijection (splitmix64's
	 * finalizer is one), so distinct runs never share a state. */
	uint64_t a = seed, b = run_index ^ 0x632be59bd9b4e019ull;
	xp_rng_seed(r, splitmix64(&a) ^ splitmix64(&b));
}

uint64_t xp_rng_next(struct xp_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t xp_rng_below(struct xp_rng *r, uint64_t n)
{
	/* Reject the lowest 2^64 mod n values: what remains is a whole
	 * number of copies of [0, n). */
	uint64_t min, x;

	BUG_ON(n == 0);
	min = -n % n;
	do
		x = xp_rng_next(r);
	while (x < min);
	return x % n;
}

/* ---- describe */

void xp_put(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len == 0 || *used >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *used) {
		*used = len - 1;
		if (len >= 4)
			memcpy(buf + len - 4, "...", 4);
		return;
	}
	*used += (size_t)n;
}
