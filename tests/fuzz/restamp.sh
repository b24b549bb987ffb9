#!/bin/sh
# Writes the trace version of trace/trace.h into the header of every seed
# trace (tests/fuzz/corpus/*/*.avt).  Run it after a version bump that
# keeps the records of the older version (one that adds kinds and record
# types): otherwise the reader refuses every seed as "unsupported trace
# version" and the fuzzers start from nothing.  After a change of layout,
# record new seeds instead (tests/fuzz/README.md, "Seeds").
set -eu
cd "$(dirname "$0")"
v=$(sed -n 's/^#define AVT_TRACE_VERSION \([0-9]*\)u$/\1/p' ../../trace/trace.h)
[ -n "$v" ] || { echo "restamp: no AVT_TRACE_VERSION in trace/trace.h" >&2; exit 1; }
# u32 little-endian; versions stay far below 256
bytes=$(printf '\\%03o\\000\\000\\000' "$v")
for f in corpus/*/*.avt; do
	printf "$bytes" | dd of="$f" bs=1 seek=8 count=4 conv=notrunc 2>/dev/null
done
echo "seed traces stamped with version $v"
