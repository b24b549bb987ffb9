# shellcheck shell=bash
# Issue 29: a C++20 std::atomic<int>::wait / notify_one hand-off
# (tests/targets/atomic_wait.cc): the producer publishes `ready` and wakes
# the consumer before it writes `payload`.  `avtrace test` with no flags
# finds it in <= 3 executions, 10 runs out of 10, and names `payload` and
# the program's lines; the correct twin (atomic_wait_ok.cc) passes with no
# report.  Executions counted as test_pairs30.sh does: the recording, then
# the predictions replayed up to the first that reproduces the bug (the
# minimization after it is not counted).  libstdc++'s wait and notify are
# header code, so the flag's and the waiter count's accesses are events
# too: their races (a locked xchg or lock xadd on one side) are ranked
# after the race on the plain payload (predict/rank.c, locked_race).
# Run with tests/e2e/run.sh tests/e2e/test_atomicwait29.sh.

# executions_to_bug OUT: 1 + the rank of the first prediction that
# reproduced a bug in OUT.out (nothing if none did).
executions_to_bug() {
	awk '/^  # / { on = 1; next } on && /^  [0-9]+ / { i++; if ($0 ~ / (BUG|DEADLOCK)( \(|$)/) { print i + 1; exit } }' "$1.out"
}

# aw_test OUT PROG [FLAG...]: avtrace test -o OUT [FLAG...] -- PROG; its
# output in OUT.out (also in the log), its status in AW_STATUS.
AW_STATUS=
aw_test() {
	local out=$1 prog=$2
	shift 2
	avt_timed 280 test -o "$out" "$@" -- "$prog" >"$out.out" 2>&1
	AW_STATUS=$?
	sed 's/^/  | /' "$out.out" >&3
}

# Run 1 with no flags; runs 2-10 skip the minimization that follows the
# bug (about a minute a run under load, and not what is counted here).
# limit: 900
t_atomicwait_bug_within_three_executions() {
	local f=$SRC/atomic_wait.cc lr lw la i n
	natively atomic_wait
	lr=$(marker_line "$f" "/* READ LINE */") || exit
	lw=$(marker_line "$f" "/* WRITE LINE") || exit
	la=$(marker_line "$f" "/* ASSERT LINE */") || exit
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if [ "$i" = 1 ]; then
			aw_test "o$i" "$(target atomic_wait)"
		else
			aw_test "o$i" "$(target atomic_wait)" --no-minimize
		fi
		expect_eq "$AW_STATUS" 1 "exit status of avtrace test (run $i)"
		n=$(executions_to_bug "o$i")
		[ "${n:-99}" -le 3 ] || fail "run $i: the bug after ${n:-no} executions (more than 3)"
		expect_match "$(cat "o$i.out")" \
			"^  [0-9]+ +pecan +race-RW +atomic_wait[.]cc:$lr / atomic_wait[.]cc:$lw +BUG \\(SIGABRT\\)$" \
			"the payload's race, consumer's read before producer's write (run $i)"
		expect_no_match "$(cat "o$i.out")" '^no bug reproduced by the predictions' "exploration (run $i)"
		expect_match "$(head -n 1 "o$i"/reports/*.txt)" \
			"^BUG reproduced: SIGABRT in T[0-9]+ at atomic_wait[.]cc:$la \\(consumer\\)" "the report (run $i)"
		expect_match "$(cat "o$i"/reports/*.txt)" "T[0-9]+ read payload +(at )?atomic_wait[.]cc:$lr" \
			"the report names payload at the read (run $i)"
	done
}

# The correct twin: the payload is written before the flag.  Exit 0, no
# report, every explored run passes, and no prediction replays INFEASIBLE:
# the flag's locked store (an xchg) and the consumer's load that saw it
# are a release/acquire pair to predict/ (a reads-from edge, model.h), so
# the payload's write happens before its read and no race on it is
# predicted; neither is one that moves that load before the store.
# limit: 300
t_atomicwait_ok_passes() {
	local f=$SRC/atomic_wait_ok.cc lr lw
	lr=$(marker_line "$f" "/* READ LINE */") || exit
	lw=$(marker_line "$f" "/* WRITE LINE */") || exit
	natively atomic_wait_ok
	aw_test out "$(target atomic_wait_ok)"
	expect_eq "$AW_STATUS" 0 "exit status of avtrace test on atomic_wait_ok"
	expect_eq "$(reports out)" 0 "reports on atomic_wait_ok"
	expect_no_match "$(cat out.out)" ' (BUG|DEADLOCK)( \(|$)|DIVERGED' "outcomes on atomic_wait_ok"
	expect_no_match "$(cat out.out)" ' INFEASIBLE( |$)' "predictions that replay infeasible on atomic_wait_ok"
	expect_no_match "$(grep '^  [0-9]' out.out)" "atomic_wait_ok[.]cc:($lr|$lw)( |\$)" \
		"a prediction on the payload of atomic_wait_ok"
	expect_match "$(cat out.out)" "^[0-9]+ runs in .*: ([0-9]+) pass, 0 bug, 0 deadlock" "the explored runs"
}
