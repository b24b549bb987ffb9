/*
 * Stable LSD radix sort of key/value pairs (sort.h).
 */
#include <string.h>

#include "sort.h"

unsigned pr_sort_kv(struct pr_kv *a, struct pr_kv *tmp, size_t n)
{
	size_t cnt[8][256];
	unsigned passes = 0;
	memset(cnt, 0, sizeof cnt);
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 8; d++)
			cnt[d][a[i].key >> (d * 8) & 0xff]++;
	struct pr_kv *src = a, *dst = tmp;
	for (unsigned d = 0; d < 8 && n; d++) {
		size_t *c = cnt[d], sum = 0;
		/* one bucket holds every key: the pass would not move any */
		if (c[src[0].key >> (d * 8) & 0xff] == n)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t k = c[b];
			c[b] = sum;
			sum += k;
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
