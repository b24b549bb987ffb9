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

# A failing explored run is confirmed by its replay.  The explored runs
# take the timer's ticks as they come; the check replay raises each where
# the run had it.  Raised at the commit of the event before it, the copy
# came one instruction early, before that event's own instruction: a tick
# due after the progress thread's read of `finished` came before it, the
# thread then slept in pause() where the run read `finished` again, and
# the replay was stuck ("BUG: SIGABRT in T1 seen (unconfirmed)").  Now it
# is raised when the thread next stands at a scheduling point.  Whether a
# run fails depends on where its ticks fell; that a failure seen is
# confirmed does not.  Four seeds: four first failures, four replays
# (each explore a few seconds; its bound is for a loaded machine).
# limit: 650
t_signals_explored_failure_confirmed() {
	local lc out s st
	lc=$(marker_line "$SRC/dl_progress.c" "/* CHECK LINE */") || exit
	for s in 1 2 3 4; do
		avt_timed 150 explore -f -n 4 -j 1 --seed "$s" -o "out$s" -- \
			"$(target dl_progress)" 3 6 200 >"out$s.log" 2>&1
		st=$?
		out=$(cat "out$s.log")
		sed 's/^/  | /' "out$s.log" >&3
		expect_eq "$st" 1 "exit status of avtrace explore, seed $s"
		expect_match "$out" '^4 runs in .*: [0-9]+ pass, [1-9][0-9]* bug' "the runs of seed $s"
		expect_no_match "$out" 'unconfirmed|did not fail again' "the failures of seed $s"
		expect_match "$out" "^BUG reproduced: SIGABRT in T1 at dl_progress[.]c:$lc \\(on_alarm\\)" \
			"the failure of seed $s"
	done
}

# A lone thread asleep in pause() between its recorded ticks replays as
# recorded.  The replay drops the kernel's SIGALRM and raises its own copy
# at the thread's next pick; the only thread, asleep with no scheduling
# point ahead, was never set aside (nobody else to run), so that pick
# never came: every tick the kernel sent was dropped and the run ended
# only at its time limit (INFEASIBLE, or by luck when the wakeups' CPU
# time filled a slice).  A dropped signal that finds the running thread
# asleep in a call now ends its turn there.  Ten ticks 5 ms apart: the
# replay takes a fraction of a second; the bound is for a loaded machine.
# limit: 150
t_signals_lone_pause_replays() {
	local n out st
	natively alarm_pause 10 5000
	record out alarm_pause 10 5000
	expect_recorded out 0
	n=$(sed -n 's/^avtrace: recorded 1 thread, \([0-9,]*\) events.*/\1/p' out.stderr | tr -d ,)
	[ -n "$n" ] || fail "no event count in: $(cat out.stderr)"
	avt_timed 100 replay -d out --schedule 0 --max-time 60 >rep.log 2>&1
	st=$?
	out=$(cat rep.log)
	sed 's/^/  | /' rep.log >&3
	expect_eq "$st" 0 "exit status of avtrace replay"
	expect_match "$out" "^PASS: schedule 0, $n events" "the replay of the recorded ticks"
}

# A failing explored run's trace carries the access breakpoint removals
# it followed (the recording's, by site and hits).  acc_disarm_race's
# workers sweep private arrays (two sites removed after 256 hits), then
# race on `total`: every failing run comes after the removals.  Without
# them in the run's trace the check replay removed nothing, met the
# sweep's 257th access ("T1's event 461 differs from the recording") and
# the failure was reported unconfirmed; the removals are decided by hits,
# not by the clock, so this holds on any machine.
# limit: 200
t_explored_failure_after_disarm_confirmed() {
	local lc out st
	lc=$(marker_line "$SRC/acc_disarm_race.c" "/* CHECK LINE */") || exit
	avt_timed 150 explore -f -n 4 -j 1 --seed 1 -o out -- \
		"$(target acc_disarm_race)" 20 >out.log 2>&1
	st=$?
	out=$(cat out.log)
	sed 's/^/  | /' out.log >&3
	expect_match "$out" '[1-9][0-9]* sites? disarmed' "the recording's removals"
	expect_eq "$st" 1 "exit status of avtrace explore"
	expect_no_match "$out" 'unconfirmed|did not fail again' "the failures"
	expect_match "$out" "^BUG reproduced: SIGABRT in T0 at acc_disarm_race[.]c:$lc \\(main\\)" "the failure"
	avt dump -d out/explore/runs/0001 >dump.txt 2>&1 || fail "avtrace dump of the failing run"
	expect_match "$(cat dump.txt)" '^# disarmed .* after 256 hits' "the removals in the run's trace"
}
