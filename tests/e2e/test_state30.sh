# shellcheck shell=bash
# Issue 30, "a false report from the program's own files": a script that
# creates a table in db.sqlite fails when run again in the same
# directory, and every explored run of `avtrace test` re-ran it where the
# recording had left the table: "1 bug reproduced".  A failure that two
# native runs and the recorded order, in the state as it is now, show too
# is the state's, not the interleaving's: not counted (docs/explore.md, "Runs and the program's
# own files").
#
# state_file_ok and state_file write their result to a new file made with
# O_CREAT|O_EXCL after their threads, and exit 1 when it exists;
# state_file also loses a deposit in some interleavings (SIGABRT at its
# ASSERT LINE, before the file).  DELAY (20 ms) lets alice finish first in
# a native run; what is decided depends on the predictions and the seed,
# never on timing.

# The premise: a clean directory passes, a second run there fails.
second_run_fails() {
	local prog
	prog=$(target "$1") || exit
	mkdir -p native && (cd native && "$prog" 20000 >/dev/null 2>&1)
	expect_eq "$?" 0 "exit status of $1 in a clean directory"
	(cd native && "$prog" 20000 >/dev/null 2>&1)
	expect_eq "$?" 1 "exit status of $1 run again in the same directory"
}

# A correct program: no bug, no report, though every run after the
# recording fails (exit 1, its file exists): the replays' failure is said
# and not counted, the explored runs' are counted apart.
# limit: 200
t_state_correct_program_passes() {
	second_run_fails state_file_ok
	TEST_LIMIT=170 run_test out --explore 30 -- "$(target state_file_ok)" 20000
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test on state_file_ok"
	expect_eq "$(reports out)" 0 "reports"
	expect_match "$(cat out.test)" '^replay #[0-9]+ failed \(exit status 1\), but so do two native runs and the recorded order now: the program.s files changed \(state\), not counted$' \
		"the replays' failure"
	expect_match "$(cat out.test)" '^30 of 30 runs failed as native runs and the recorded order now do, from the files earlier runs left \(exit status\): not a finding of exploration$' \
		"the explored runs"
	expect_match "$(cat out.test)" '^no bug reproduced$' "the verdict"
	expect_file state_file_ok.out
}

# The race is still found, by exploration (no prediction: the detectors
# that would predict it are off), at its line: the runs that fail as
# native runs do now (exit 1) do not count, and the rest of the budget is
# explored (runs failing so counted apart) until the first other failure.  The report's replay command, run
# after the test (the file there), reproduces it.
# limit: 200
t_state_race_found_by_exploration() {
	local l_assert r cmd
	l_assert=$(marker_line "$SRC/state_file.c" "/* ASSERT LINE */") || exit
	second_run_fails state_file
	TEST_LIMIT=170 run_test out --no-penelope --no-pecan --no-order --atomic write_balance -- \
		"$(target state_file)" 20000
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test on state_file"
	expect_match "$(cat out.test)" '; 0 predictions;' "the predictions"
	expect_eq "$(reports out)" 1 "reports"
	expect_match "$(cat out.test)" '^explored run [0-9]+ failed \(exit status 1\), but so do two native runs and the recorded order now: the program.s files changed \(state\), not counted$' \
		"the explored runs failing for the state"
	expect_match "$(cat out.test)" "^  bug 1: BUG reproduced: SIGABRT in T0 at state_file[.]c:$l_assert \\(main\\)" \
		"the bug"
	expect_no_match "$(cat out.test)" '^  bug [0-9]+: BUG reproduced: exit status 1' "the bugs counted"
	expect_match "$(tail -n 1 out.test)" '^1 bug reproduced; ' "the last line"
	r=$(find out/reports -name '*.txt' | head -n 1)
	expect_match "$(head -n 1 "$r")" "^BUG reproduced: SIGABRT in T0 at state_file[.]c:$l_assert \\(main\\)" "the report"
	expect_file state_file.out
	cmd=$(sed -n 's/^  replay: \(avtrace replay -d .* --schedule [0-9][0-9]*\)$/\1/p' "$r")
	[ -n "$cmd" ] || fail "report '$r' has no replay command"
	# shellcheck disable=SC2086
	avt_timed 60 ${cmd#avtrace } >again.out 2>&1
	expect_eq "$?" 1 "exit status of '$cmd'"
	expect_eq "$(head -n 1 again.out)" "$(head -n 1 "$r")" "first line of '$cmd'"
}

# The issue's own case, when sqlite3 is installed: a script that creates a
# table (single-threaded: no prediction, exploration only).
# limit: 200
t_state_sqlite_create_table() {
	command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
	TEST_LIMIT=170 run_test out --explore 20 -- sqlite3 db.sqlite 'create table t(x int);'
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test on sqlite3"
	expect_eq "$(reports out)" 0 "reports"
	expect_match "$(cat out.test)" '^explored run 1 failed \(exit status 1\), but so do two native runs and the recorded order now: the program.s files changed \(state\), not counted$' \
		"the explored runs"
	expect_eq "$(sqlite3 db.sqlite .tables)" t "the table the recording created"
}
