# Paired timing for the bench scripts (sourced; POSIX sh).  Two commands
# run in turn, A then B, RUNS times after one warm-up run of each: pairing
# keeps a ratio meaningful when the machine's speed drifts under other
# load, so quote the median of the pairs' ratios, never one absolute time.
# Each run is timed by /usr/bin/time (GNU time: apt-get install time), in
# steps of 10 ms: pair runs of a second or more (a B of 0 s gives 0x).
#
#   . bench/pairs.sh
#   pairs_init              a scratch directory for the timings
#   pair LABEL "A" "B"      one line: medians of A's and B's wall seconds
#                           and of the pairs' wall and cpu ratios A/B,
#                           with the wall ratios' min..max (a wide range
#                           says the machine was noisy)
# A and B are command lines split as words (no shell syntax: wrap a loop
# in sh -c '...').  Their output is discarded, their exit status ignored.

pairs_init() {
	RUNS=${RUNS:-5}
	pairs_dir=$(mktemp -d /tmp/avtrace-pairs.XXXXXX)
	trap 'rm -rf "$pairs_dir"' EXIT
}

# pairs_one CMD: appends "wall cpu" of one run of CMD to $pairs_dir/t
# shellcheck disable=SC2086 # CMD: one command line, split as words
pairs_one() {
	/usr/bin/time -f '%e %U %S' -o "$pairs_dir/one" $1 >/dev/null 2>&1 </dev/null || true
	tail -n 1 "$pairs_dir/one" | awk '{ printf "%s %s\n", $1, $2 + $3 }' >>"$pairs_dir/t"
}

pair() {
	pairs_one "$2" # a warm-up run of each, not counted
	pairs_one "$3"
	: >"$pairs_dir/t"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		pairs_one "$2"
		pairs_one "$3"
		i=$((i + 1))
	done
	awk -v l="$1" -v n="$RUNS" '
		function med(a, k,   i, j, t) { # sorts a[1..k] in place
			for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2 }
		NR % 2 { aw = $1; ac = $2; next }
		{ k++; A[k] = aw; B[k] = $1; W[k] = $1 > 0 ? aw / $1 : 0; C[k] = $2 > 0 ? ac / $2 : 0 }
		END { m = med(W, k)
			printf "%-24s %8.3f s vs %8.3f s wall: %6.2fx wall (%.2f..%.2f), %6.2fx cpu (medians of %d pairs)\n",
			l, med(A, k), med(B, k), m, W[1], W[k], med(C, k), n }' "$pairs_dir/t"
}
