# shellcheck shell=bash
# Issue 30: a race per pair of sites (docs/predict.md, PECAN, "Site
# pairs").  explore_nullpub's unchecked USE read and the closer's CLOSE
# write are about twenty accesses of `conn` apart (main's polls between),
# so PECAN's race pattern, which pairs neighbours in the variable's order
# only, predicted nothing and exploration found the bug (a median of ~8
# runs after the recording, docs/explore.md).  As a site pair, CLOSE
# before USE is one prediction: the recording and one replay.  Executions
# counted as bench/explore's third table does: the recording, then the
# predictions replayed up to the first that reproduces the bug.  The
# predictions depend on the recording only (the seed steers exploration,
# which must not be needed); the recorder runs main first, as natively.

# executions_to_bug OUT: 1 + the rank of the first prediction that reproduced a
# bug in OUT.test (nothing if none did).
executions_to_bug() {
	awk '/^  # / { on = 1; next } on && /^  [0-9]+ / { i++; if ($0 ~ / (BUG|DEADLOCK)( \(|$)/) { print i + 1; exit } }' "$1.test"
}

# limit: 400
t_pairs_nullpub_within_two_executions() {
	local lu lc seed n
	lu=$(marker_line "$SRC/explore_nullpub.c" "/* USE: the bug, no check */") || exit
	lc=$(marker_line "$SRC/explore_nullpub.c" "/* CHECK: main used a NULL connection */") || exit
	for seed in none 1 2 3 4 5 6 7 8 9 10; do
		if [ "$seed" = none ]; then
			run_test "o$seed" -- "$(target explore_nullpub)"
		else
			run_test "o$seed" --seed "$seed" -- "$(target explore_nullpub)"
		fi
		expect_eq "$TEST_STATUS" 1 "exit status of avtrace test (seed $seed)"
		expect_match "$(cat "o$seed.test")" \
			"^  1 +pecan +race-WR +explore_nullpub[.]c:[0-9]+ / explore_nullpub[.]c:$lu +BUG \\(SIGABRT\\)$" \
			"prediction 1: CLOSE before the USE line $lu (seed $seed)"
		n=$(executions_to_bug "o$seed")
		expect_eq "${n:-none}" 2 "executions to the bug (seed $seed)"
		expect_no_match "$(cat "o$seed.test")" '^no bug reproduced by the predictions' "exploration (seed $seed)"
		expect_match "$(head -n 1 "o$seed"/reports/*.txt)" \
			"^BUG reproduced: SIGABRT in T0 at explore_nullpub[.]c:$lc \\(main\\)" "the report (seed $seed)"
	done
}

# Correct programs to which the site pairs add a prediction (one each,
# measured): it replays like the others, none fails, no report.
# (acc_treiber_ok and barrier had one too; their schedules make a read
# before the race load another value, a pointer to another node, a
# counter one lower, and are no longer made: docs/predict.md, "Reads
# before the violation".)
# limit: 300
t_pairs_correct_no_report() {
	local t n
	for t in acc_events acc_events_O2 atomic_wait_ok glib_lockspin; do
		run_test "$t" --no-explore -- "$(target "$t")"
		expect_eq "$TEST_STATUS" 0 "exit status of avtrace test $t"
		expect_eq "$(reports "$t")" 0 "reports of $t"
		n=$(grep -c '"site_pair": true' "$t/predictions.json")
		[ "$n" -ge 1 ] || fail "$t: no site pair's prediction"
		expect_no_match "$(cat "$t.test")" '^  [0-9]+ .* (BUG|DEADLOCK)( \(|$)' "outcomes of $t"
	done
}
