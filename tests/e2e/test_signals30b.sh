# shellcheck shell=bash
# Issue 30, shape 4: a failure seen with a signal-driven progress thread
# must be confirmed.  dl_progress: workers update a progress counter in
# two steps; SIGALRM's handler (a periodic setitimer, on the progress
# thread) checks it.  Where the handler's events land depends on the
# clock; a replay delivered the kernel's SIGALRM whenever it came, so the
# replay of a failing run diverged ("T1's event 1 differs from the
# recording") and the bug was reported unconfirmed (exit 3).  Now each
# delivery is a trace record (thread, its events before it) and a replay
# delivers the signal there (tracer/signals.c, replay/policy.c).
#
# The fast tick (200 us) puts a handler between most pairs of events
# under avtrace: with the kernel's timing, hardly any replay follows its
# run; the outcome does not depend on where the ticks fall.

# limit: 200
t_signals_progress_bug_confirmed() {
	local i lc
	lc=$(marker_line "$SRC/dl_progress.c" "/* CHECK LINE */") || exit
	natively dl_progress 3 6 200
	for i in 1 2 3; do
		TEST_LIMIT=150 run_test "out$i" -- "$(target dl_progress)" 3 6 200
		expect_eq "$TEST_STATUS" 1 "exit status of avtrace test, try $i"
		expect_no_match "$(cat "out$i.test")" 'unconfirmed|inconclusive' "try $i"
		expect_eq "$(reports "out$i")" 1 "reports of try $i"
		expect_match "$(head -n 1 "out$i"/reports/*.txt)" \
			"^BUG reproduced: SIGABRT in T1 at dl_progress[.]c:$lc \\(on_alarm\\)" "the report of try $i"
	done
}

# The correct program: the same signals, no report.
# limit: 200
t_signals_progress_ok_passes() {
	natively dl_progress_ok
	TEST_LIMIT=150 run_test out -- "$(target dl_progress_ok)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test"
	expect_eq "$(reports out)" 0 "reports"
}
