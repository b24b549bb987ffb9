# shellcheck shell=bash
# avtrace verify (docs/verify.md): the bank bug of verify_bank.c found by
# avtrace test, then its interleaving re-enacted on rebuilt programs (the
# variants of tests/targets/targets.mk): fixed (exit 0) for three fixes,
# still fails (exit 1) for the unchanged and the moved program, no longer
# possible (exit 3, with where) when the racing thread's access is gone.
# Run with tests/e2e/run.sh test_verify.sh.

# found OUT PROG: avtrace test -o OUT on PROG reports the bug, with its
# events in source terms beside the report.
found() {
	local out=$1 prog=$2 st
	avt_timed 120 test -q -o "$out" --no-explore -j 1 -- "$prog" >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 1 "exit status of avtrace test on verify_bank"
	expect_file "$out/reports/0001.txt"
	expect_file "$out/reports/0001.events.json"
}

# verify OUT [PROG]: avtrace verify, its output in verify.out, status in VST
VST=
verify() {
	local out=$1
	shift
	if [ $# -gt 0 ]; then
		avt_timed 120 verify -d "$out" -- "$@" >verify.out 2>&1
	else
		avt_timed 120 verify -d "$out" >verify.out 2>&1
	fi
	VST=$?
	sed 's/^/  | /' verify.out >&3
}

# limit: 150
t_verify_unchanged_still_fails() {
	local l_fail
	l_fail=$(marker_line "$SRC/verify_bank.c" "/* VB FAIL */") || exit
	cp "$(target verify_bank)" prog
	found out ./prog
	verify out
	expect_eq "$VST" 1 "exit status of verify on the unchanged program"
	expect_match "$(cat verify.out)" "^0001: still fails: SIGABRT in check_total at verify_bank\.c:$l_fail, as before" "verify"
	expect_match "$(cat verify.out)" "^1 bug: 1 still fails, 0 fixed, 0 no longer possible" "summary"
	# the run it made is an ordinary schedule of the new recording
	expect_file out/verify/0001.sched
	avt_timed 60 replay -d out/verify/rec --file out/verify/0001.sched >replay.out 2>&1
	expect_eq "$?" 1 "replay of the verify run's schedule"
	expect_match "$(cat replay.out)" "^BUG reproduced: SIGABRT" "replay"
	# no description (a report of an older avtrace): made now, the binary
	# is the recorded one
	rm out/reports/0001.events.json
	verify out
	expect_eq "$VST" 1 "exit status of verify, events described lazily"
	expect_file out/reports/0001.events.json
}

# Rebuilt in place with lines above the bug: the old binary is gone,
# addresses and lines moved; the recorded command runs the new one.
# limit: 150
t_verify_moved_still_fails() {
	local l_fail
	l_fail=$(marker_line "$SRC/verify_bank.c" "/* VB FAIL */") || exit
	cp "$(target verify_bank)" prog
	found out ./prog
	cp "$(target verify_bank_moved)" prog
	verify out
	expect_eq "$VST" 1 "exit status of verify on the moved program"
	expect_match "$(cat verify.out)" "^0001: still fails: SIGABRT in check_total at verify_bank\.c:$((l_fail + 12)), as before" "verify"
	# without the description the old events cannot be told any more
	rm out/reports/0001.events.json
	verify out
	expect_eq "$VST" 2 "exit status of verify without the old events"
	expect_match "$(cat verify.out)" "^0001: cannot verify: .*0001\.events\.json' is missing" "verify"
}

# limit: 150
t_verify_fixed() {
	local v
	cp "$(target verify_bank)" prog
	found out ./prog
	for v in hold inside atomic; do
		verify out "$(target "verify_bank_$v")"
		expect_eq "$VST" 0 "exit status of verify on verify_bank_$v"
		expect_match "$(cat verify.out)" "^0001: fixed: the interleaving ran to the end and the program passed" "verify of $v"
		expect_match "$(cat verify.out)" "^1 bug: 0 still fail, 1 fixed, 0 no longer possible" "summary of $v"
	done
}

# limit: 150
t_verify_no_longer_possible() {
	local l_write
	l_write=$(marker_line "$SRC/verify_bank.c" "/* VB WRITE */") || exit
	cp "$(target verify_bank)" prog
	found out ./prog
	verify out "$(target verify_bank_nobob)"
	expect_eq "$VST" 3 "exit status of verify on verify_bank_nobob"
	expect_match "$(cat verify.out)" "^0001: no longer possible: the new program parted from the old schedule at T2 write balance in deposit at verify_bank\.c:$l_write" "verify"
	expect_match "$(cat verify.out)" "T2 does instead: T2 write savings in deposit at verify_bank\.c:$l_write" "where"
}

# The minimal schedule (reports/X.min.sched), when there is one, is the
# one verified: this one switches before T1's release, so only T2's
# release and acquire vanish under the held lock.
# limit: 150
t_verify_prefers_minimal() {
	cp "$(target verify_bank)" prog
	found out ./prog
	verify out "$(target verify_bank_hold)"
	expect_match "$(cat verify.out)" "events matched, 3 vanished" "verify of the predicted schedule"
	printf 'avtrace-schedule 1\nrun T0 4\nrun T1 3\nrun T2 6\nfree\n' >out/reports/0001.min.sched
	verify out "$(target verify_bank_hold)"
	expect_eq "$VST" 0 "exit status of verify of the minimal schedule"
	expect_match "$(cat verify.out)" "events matched, 2 vanished" "verify of the minimal schedule"
}

# limit: 150
t_verify_usage() {
	avt verify --help >help.out 2>&1
	expect_eq "$?" 0 "verify --help"
	expect_match "$(cat help.out)" "no longer possible" "help"
	avt verify -d nowhere >err.out 2>&1
	expect_eq "$?" 2 "verify of a directory with no recording"
	expect_one_line_error err.out
	expect_match "$(cat err.out)" "no recording in 'nowhere'" "error"
}

# A bug found by exploration, explore-NNNN: its events are those of the
# explored run's own recording, DIR/explore/runs/NNNN (made here from the
# test's recording and the reproducing schedule, as explore leaves it).
# limit: 150
t_verify_explored() {
	local run=out/explore/runs/0007
	cp "$(target verify_bank)" prog
	found out ./prog
	mkdir -p "$run/schedules" "$run/replays"
	cp out/meta.json out/trace.avt "$run/"
	cp out/schedules/0001.sched "$run/schedules/0000.sched"
	cp out/replays/0001.json "$run/replays/0000.json"
	mv out/reports/0001.txt out/reports/explore-0007.txt
	rm out/reports/0001.events.json
	verify out
	expect_eq "$VST" 1 "exit status of verify of an explored bug, unchanged"
	expect_match "$(cat verify.out)" "^explore-0007: still fails: SIGABRT in check_total" "verify"
	expect_file out/reports/explore-0007.events.json
	verify out "$(target verify_bank_hold)"
	expect_eq "$VST" 0 "exit status of verify of an explored bug, fixed"
	expect_match "$(cat verify.out)" "^explore-0007: fixed" "verify"
}

# A long recording describes beside a report only each thread's prefix
# that its schedules and pattern reach (AVTRACE_VERIFY_DESCRIBE_ALL lowers
# "long" to any recording here): enough to verify.
# limit: 150
t_verify_partial_description() {
	local all part
	need_jq
	cp "$(target verify_bank)" prog
	AVTRACE_VERIFY_DESCRIBE_ALL=0 found out ./prog
	all=$(avt dump -d out --json | jq -s 'length') || fail "cannot dump the recording"
	part=$(jq '.events | length' out/reports/0001.events.json)
	[ "$part" -gt 0 ] && [ "$part" -lt "$all" ] || fail "described $part of $all events"
	cp "$(target verify_bank_moved)" prog
	verify out
	expect_eq "$VST" 1 "exit status of verify on the moved program, partly described"
	verify out "$(target verify_bank_hold)"
	expect_eq "$VST" 0 "exit status of verify on the fixed program, partly described"
}
