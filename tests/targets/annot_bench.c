/*
 * annot_bench: the hot loop of bench/annotation-overhead.  Built twice at
 * -O2 (tests/targets/targets.mk): bin/annot_bench with the avtrace.h
 * annotations, bin/annot_bench_plain with the macros defined empty.
 *
 * The loop is a counter table update, the kind of access a program
 * annotates: pick a slot with a xorshift generator, read the counter,
 * write it back incremented (AVT_READ and AVT_WRITE on the slot), inside
 * an AVT_ATOMIC_BEGIN/END block.  Untraced, each annotation is one nop and
 * a note in the ELF file; what it can cost is the nop itself and the
 * compiler having to materialize the probe's operand (the slot's address).
 *
 * Usage: annot_bench [ITERATIONS=100000000]
 * Prints "ns N checksum C": the loop's own time (CLOCK_MONOTONIC, start-up
 * excluded) and a checksum that keeps the loop from being optimized away
 * (the same in both builds).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mem/mem.h"

#define SLOTS (1u << 14) /* 128 KiB of counters: cache resident */

static uint64_t table[SLOTS];

__attribute__((noinline)) static uint64_t run(uint64_t iterations)
{
	uint64_t x = 88172645463325252ull, sum = 0;
	for (uint64_t i = 0; i < iterations; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t *slot = &table[x & (SLOTS - 1)];
		AVT_ATOMIC_BEGIN();
		AVT_READ(slot);
		uint64_t v = *slot;
		AVT_WRITE(slot);
		*slot = v + 1;
		AVT_ATOMIC_END();
		sum += v;
	}
	return sum;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t sum = run(n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
	printf("ns %lld checksum %llu\n", ns, (unsigned long long)sum);
	return 0;
}
