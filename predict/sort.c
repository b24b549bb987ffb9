/*
 * Stable LSD radix sort of key/value pairs (sort.h).
 */
#include <string.h>

#include "sort.h"

unsigned pr_sort_kv(struct pr_kv *a, struct pr_kv *tmp, size_t n)
{
	size_t cnt[8][256];
	unsigned passes = 0, ndig = 0, dig[8];
	uint64_t any = 0, all = UINT64_MAX;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		any |= a[i].key;
		all &= a[i].key;
	}
	/* a digit every key shares would move none: only the others are
	 * counted and sorted on */
	for (unsigned d = 0; d < 8; d++)
		if ((any ^ all) >> (d * 8) & 0xff)
			dig[ndig++] = d;
	memset(cnt, 0, ndig * sizeof cnt[0]);
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < ndig; k++)
			cnt[k][a[i].key >> (dig[k] * 8) & 0xff]++;
	struct pr_kv *src = a, *dst = tmp;
	for (unsigned k = 0; k < ndig; k++) {
		size_t *c = cnt[k], sum = 0;
		unsigned d = dig[k];
		for (unsigned b = 0; b < 256; b++) {
			size_t nb = c[b];
			c[b] = sum;
			sum += nb;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[src[i].key >> (d * 8) & 0xff]++] = src[i];
		struct pr_kv *t = src;
		src = dst;
		dst = t;
		passes++;
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
	return passes;
}
