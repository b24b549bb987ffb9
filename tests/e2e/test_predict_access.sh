# shellcheck shell=bash
# Acceptance tests of the PENELOPE detector (docs/predict.md, "PENELOPE"):
# `avtrace test` on the memory-access targets tests/targets/mem_*.c, each
# three ways: annotated (bin/mem_NAME), unannotated with --watch naming the
# shared variables (as in test_memory.sh), and unannotated with no flags
# (the recorder's access breakpoints).  Run with
# tests/e2e/run.sh predict_access.
#
# The limits (300 s) guard against a hang only: each test runs `avtrace
# test` up to ten times, each minimising its bug with about 8 replays, 5 to
# 15 s a run on ptrace alone at a load of 3 to 4 (150 s timed out there for
# the old binary as for the new).
#
# What PENELOPE can see: two accesses of one variable by one thread in one
# transaction, and another thread's access that fits between them.
# mem_log's lost update is such a pattern (RWW on log_index) and is
# reproduced; mem_spinflag is correct and gets no report.  mem_order (an
# order violation) and mem_dcl (two variables) are outside the five
# single-variable patterns: PECAN finds them (test_predict_pecan.sh).
# Every `avtrace test` here runs with --no-pecan: PENELOPE without PECAN,
# whose predictions of the same anomalies would be merged with these.

# lost_update_10 ARGS...: `avtrace test ARGS` (ARGS end with -- and a
# mem_log build) reproduces the lost log entry ten times out of ten: one
# report, main's assert at CHECK LINE, predicted by penelope as RWW on
# log_index (T2 reads the index, T1 writes it, T2 writes it back).
lost_update_10() {
	local f=$SRC/mem_log.c lr lw lc i report
	lr=$(marker_line "$f" "/* READ INDEX */") || exit
	lw=$(marker_line "$f" "/* WRITE INDEX */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	for i in 1 2 3 4 5 6 7 8 9 10; do
		run_test out --no-pecan "$@"
		expect_eq "$TEST_STATUS" 1 "exit status of avtrace test, run $i"
		expect_eq "$(reports out)" 1 "reports of run $i"
		report=$(cat out/reports/*.txt)
		expect_match "$report" "^BUG reproduced: SIGABRT in T0 at mem_log[.]c:$lc \\(main\\)" "report of run $i"
		expect_match "$report" "predicted: [0-9]+: penelope RWW — T2 read log_index at mem_log[.]c:$lr, T1 write log_index at mem_log[.]c:$lw, T2 write log_index at mem_log[.]c:$lw" \
			"prediction in the report of run $i"
		expect_match "$(cat out.test)" "penelope +RWW +mem_log[.]c:$lr / mem_log[.]c:$lw / mem_log[.]c:$lw +BUG \\(SIGABRT\\)" "table of run $i"
	done
}

# no_report ARGS...: `avtrace test ARGS` finds no bug and writes no report.
no_report() {
	run_test out --no-pecan "$@"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test $*"
	expect_eq "$(reports out)" 0 "reports of avtrace test $*"
	expect_match "$(cat out.test)" '^no bug reproduced$' "verdict of avtrace test $*"
}

# limit: 300
t_access_lost_update_annotated() {
	lost_update_10 -- "$(target mem_log)"
	expect_match "$(cat out/reports/*.txt)" "not atomic: append" "the atomic block blamed"
}

# limit: 300
t_access_lost_update_watch() {
	lost_update_10 --watch 'log_index,log_buf[0],log_buf[1]' -- "$(target mem_log_plain)"
}

# No annotations, no --watch: the access breakpoints record log_index's
# accesses by themselves (they replaced the automatic watchpoints).
# limit: 300
t_access_lost_update_auto() {
	lost_update_10 -- "$(target mem_log_plain)"
	expect_eq "$(jq -r .access out/meta.json)" true "access breakpoints in meta.json"
	expect_eq "$(jq -r '.watch | length' out/meta.json)" 0 "no watchpoints"
}

# Three explorations of a spinning program, 100 runs each by count
# (--explore 100: the runs the default budget of 30 s guarantees at the
# least, without waiting out the rest of the 30 s; some 55 s apiece with
# both CPUs busy).
# limit: 300
t_access_correct_handoff_no_report() {
	no_report --explore 100 -- "$(target mem_spinflag)"
	no_report --explore 100 --watch data,flag -- "$(target mem_spinflag_plain)"
	no_report --explore 100 -- "$(target mem_spinflag_plain)"
}

# Programs with locks, no annotations, no flags: the access breakpoints
# record their loads and stores, and penelope finds the bug SideTrack finds from the lock events,
# by itself.  The row of the table is penelope's own replay.

# checkthenact: T1 reads shared.ptr (CHECK LINE), T2 clears it, T1 reads it
# again (BUG LINE): T1 stands at the release between its two sections.
# limit: 300
t_access_check_then_act() {
	lc=$(marker_line "$SRC/checkthenact.c" "/* CHECK LINE */") || exit
	lb=$(marker_line "$SRC/checkthenact.c" "/* BUG LINE */") || exit
	lx=$(marker_line "$SRC/checkthenact.c" "/* CLEAR LINE */") || exit
	for i in 1 2 3; do
		run_test out --no-pecan -- "$(target checkthenact)"
		expect_eq "$TEST_STATUS" 1 "exit status of avtrace test, run $i"
		expect_match "$(cat out.test)" "penelope +RWR +checkthenact[.]c:$lc / checkthenact[.]c:$lx / checkthenact[.]c:$lb +BUG \\(SIGSEGV\\)" "table of run $i"
	done
}

# examples/bank.c's lost deposit: each deposit reads the balance in one
# critical section and writes it in another.  Every schedule that moves a
# deposit makes one read see a new value; the one that forces least after
# it is kept, and reproduces the bug.
# limit: 300
t_access_lost_deposit() {
	lr=$(marker_line "$REPO/examples/bank.c" "/* READ LINE */") || exit
	lw=$(marker_line "$REPO/examples/bank.c" "/* WRITE LINE */") || exit
	for i in 1 2 3; do
		run_test out --no-pecan -- "$REPO/examples/bin/bank"
		expect_eq "$TEST_STATUS" 1 "exit status of avtrace test, run $i"
		expect_eq "$(reports out)" 1 "reports of run $i"
		expect_match "$(cat out.test)" "penelope +RWW +bank[.]c:$lr / bank[.]c:$lw / bank[.]c:$lw +BUG \\(SIGABRT\\)" "table of run $i"
	done
}
