# shellcheck shell=bash
# Acceptance tests of `avtrace replay`: determinism of the recorded order,
# hand-written schedules (tests/e2e/schedules/) for each outcome, exit codes
# and bad input.  Run with tests/e2e/run.sh [replay | t_NAME].

SCHEDS="$REPO/tests/e2e/schedules"
# These schedules are about synchronization: record without the access
# breakpoints of unannotated programs, whose accesses would be events too.
export REC_OPTS=--no-access

# use_schedule OUT NAME N: install a hand-written schedule as schedule N.
use_schedule() {
	cp "$SCHEDS/$2.sched" "$1/schedules/$(printf %04d "$3").sched" || fail "cannot install $2"
}

# The events of a trace without the seq numbers' formatting: kind, thread,
# object and site of each, in order.
event_list() {
	avt dump -d "$1" --raw | awk '{ $1 = ""; print }'
}

t_observed_100_times() {
	record out mutex_counter 4 20
	expect_recorded out 0
	local want i
	want=$(event_list out) || exit
	for i in $(seq 1 100); do
		replay out --schedule 0
		expect_eq "$RP_STATUS" 0 "exit status of replay $i"
		expect_match "$(cat out.replay)" '^PASS' "outcome of replay $i"
		expect_eq "$(event_list out/replays/0000.avt)" "$want" "events of replay $i"
	done
}

t_check_then_act_bug() {
	line=$(marker_line "$SRC/checkthenact.c" "/* BUG LINE */") || exit
	record out checkthenact
	expect_recorded out 0
	use_schedule out checkthenact_bug 1
	replay out --schedule 1
	expect_eq "$RP_STATUS" 1 "exit status of replay"
	expect_match "$(cat out.replay)" "^BUG reproduced: SIGSEGV in T1 at checkthenact[.]c:$line \\(checker\\)" "report"
	expect_match "$(cat out.replay)" "predicted: check-then-act" "predicted violation"
	expect_match "$(cat out.replay)" "backtrace: checker checkthenact[.]c:$line" "backtrace"
	expect_match "$(cat out.replay)" "acquire shared[.]m +checkthenact[.]c:" "interleaving"
	expect_file out/replays/0001.json
	expect_match "$(cat out/replays/0001.json)" '"outcome": "BUG"' "replays/0001.json"
	# the same failure every time
	for i in 1 2 3 4 5; do
		replay out --schedule 1
		expect_eq "$RP_STATUS" 1 "exit status of replay $i"
	done
}

t_lock_order_deadlock() {
	la=$(marker_line "$SRC/lockorder.c" "/* T1 LOCKS B */") || exit
	lb=$(marker_line "$SRC/lockorder.c" "/* T2 LOCKS A */") || exit
	record out lockorder
	expect_recorded out 0
	use_schedule out lockorder_deadlock 1
	replay out --schedule 1
	expect_eq "$RP_STATUS" 1 "exit status of replay"
	expect_match "$(cat out.replay)" '^DEADLOCK reproduced' "outcome"
	expect_match "$(cat out.replay)" "T1 waits for lock lock_b at lockorder[.]c:$la \\(held by T2\\)" "T1's wait"
	expect_match "$(cat out.replay)" "T2 waits for lock lock_a at lockorder[.]c:$lb \\(held by T1\\)" "T2's wait"
}

t_spinning_thread_is_stuck() {
	record out spinflag
	expect_recorded out 0
	use_schedule out spinflag_stuck 1
	start=$(date +%s)
	replay out --schedule 1 --timeout 0.5
	end=$(date +%s)
	expect_eq "$RP_STATUS" 3 "exit status of replay"
	expect_match "$(cat out.replay)" '^INFEASIBLE: step 2 .*T1 did not reach its next event within 0[.]5 s' "reason"
	expect_match "$(cat out.replay)" 'expected: T1 acquire flag_lock' "expected event"
	[ $((end - start)) -le 10 ] || fail "took $((end - start)) s for a 0.5 s timeout"
}

t_lock_held_by_scheduled_thread() {
	record out checkthenact
	use_schedule out checkthenact_held 1
	replay out --schedule 1
	expect_eq "$RP_STATUS" 3 "exit status of replay"
	expect_match "$(cat out.replay)" '^INFEASIBLE: step 3 .*T2 cannot proceed: it waits for lock shared[.]m held by T1' "reason"
}

t_divergence() {
	record out checkthenact
	use_schedule out checkthenact_diverge 1
	replay out --schedule 1
	expect_eq "$RP_STATUS" 3 "exit status of replay"
	expect_match "$(cat out.replay)" "^INFEASIBLE: step 3 \\(run T1 4\\): T1's event 3 differs" "reason"
	expect_match "$(cat out.replay)" 'expected: T1 acquire shared[.]m +checkthenact[.]c:[0-9]+' "expected event"
	expect_match "$(cat out.replay)" 'actual: +T1 exit' "actual event"
	# what ran is a trace of its own
	expect_match "$(avt dump -d out/replays/0001.avt)" 'T2 +acquire +shared[.]m' "dump of the replay"
}

t_condvar_observed_and_reordered() {
	record out condvar 8
	expect_recorded out 0
	replay out --schedule 0
	expect_eq "$RP_STATUS" 0 "observed order"
	# reorder: the consumer starts right after main, before the producer
	awk '/^run T2 / && !done { n = $3 - 1; if (n) print "run T2 " n; done = 1; next }
	     { print } /^run T0 3$/ && !ins { print "run T2 1"; ins = 1 }' \
		out/schedules/0000.sched >out/schedules/0001.sched
	expect_match "$(sed -n 3,4p out/schedules/0001.sched)" 'run T2 1' "reordered schedule"
	replay out --schedule 1
	expect_eq "$RP_STATUS" 0 "reordered schedule"
	expect_match "$(cat out.replay)" '^PASS' "outcome"
	expect_eq "$(avt dump -d out/replays/0001.avt --raw | sed -n 4p | awk '{print $2, $3}')" "T2 start" "T2 started fourth"
}

t_bad_input() {
	record out checkthenact
	replay out --schedule 7
	expect_eq "$RP_STATUS" 2 "unknown schedule"
	expect_match "$(cat out.replay)" "no schedule 7" "message"
	use_schedule out malformed 1
	replay out --schedule 1
	expect_eq "$RP_STATUS" 2 "malformed schedule"
	expect_match "$(cat out.replay)" "0001[.]sched:3: unknown directive 'rum'" "message names file:line"
	replay out
	expect_eq "$RP_STATUS" 2 "no schedule given"
	replay nowhere --schedule 0
	expect_eq "$RP_STATUS" 2 "missing recording"
	# the executable changed since recording: refuse, run nothing
	cp "$(target checkthenact)" ./prog && chmod +x prog
	record out2 ./prog
	expect_recorded out2 0
	cp "$(target mutex_counter)" ./prog
	replay out2 --schedule 0
	expect_eq "$RP_STATUS" 2 "changed executable"
	expect_match "$(cat out2.replay)" "changed since it was recorded" "message"
	expect_no_file out2/replays/0000.json
}

# limit: 90
t_replay_all_parallel_same_table() {
	record out checkthenact
	use_schedule out checkthenact_bug 1
	use_schedule out checkthenact_held 2
	use_schedule out checkthenact_diverge 3
	avt_timed 60 replay -d out --all -j 1 >one.txt 2>&1
	expect_eq "$?" 1 "exit status with a bug among the schedules"
	rm -rf out/replays
	avt_timed 60 replay -d out --all -j 2 >two.txt 2>&1
	expect_eq "$?" 1 "exit status of -j 2"
	expect_eq "$(cat two.txt)" "$(cat one.txt)" "table of -j 2 against -j 1"
	expect_match "$(cat one.txt)" '^4 replays: 1 pass, 1 bug, 0 deadlock, 2 infeasible, 0 error$' "totals"
	# a cluster's array job writes the same replays/*.json: summary merges them
	avt summary -d out >sum.txt 2>&1
	expect_eq "$?" 1 "exit status of summary"
	expect_eq "$(cat sum.txt)" "$(cat one.txt)" "summary table"
}

t_gdb_leaves_the_failure_stopped() {
	command -v gdb >/dev/null || skip "gdb is not installed"
	line=$(marker_line "$SRC/checkthenact.c" "/* BUG LINE */") || exit
	record out checkthenact
	use_schedule out checkthenact_bug 1
	replay out --schedule 1 --gdb
	expect_eq "$RP_STATUS" 1 "exit status of replay --gdb"
	pid=$(sed -n 's/.*gdb -p \([0-9]*\).*/\1/p' out.replay)
	[ -n "$pid" ] || fail "no 'gdb -p PID' in the output"
	# still there, stopped, after avtrace exited
	state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
	expect_eq "$state" T "state of the detached process"
	bt=$(timeout 30 gdb -p "$pid" -batch -ex 'thread apply all bt 1' 2>&1)
	kill -9 "$pid" 2>/dev/null
	expect_match "$bt" "checker .* at .*checkthenact[.]c:$line" "gdb sees the faulting line"
}

t_oracle_decides() {
	record out mutex_counter 2 5
	replay out --schedule 0 --stdout
	expect_eq "$RP_STATUS" 0 "plain replay"
	replay out --schedule 0 --oracle 'grep -q counter=10'
	expect_eq "$RP_STATUS" 0 "oracle satisfied"
	replay out --schedule 0 --oracle 'grep -q counter=11'
	expect_eq "$RP_STATUS" 1 "oracle failing means BUG"
	expect_match "$(cat out.replay)" "^BUG reproduced: the oracle 'grep -q counter=11' failed" "report"
}

t_schedule_file_option() {
	record out checkthenact
	replay out --file "$SCHEDS/checkthenact_bug.sched"
	expect_eq "$RP_STATUS" 1 "exit status"
	expect_match "$(cat out.replay)" "^BUG reproduced: SIGSEGV in T1" "report"
	replay out --file "$SCHEDS/malformed.sched"
	expect_eq "$RP_STATUS" 2 "malformed file"
	expect_match "$(cat out.replay)" "malformed[.]sched:3: unknown directive 'rum'" "message"
}

t_install_layout() {
	make -s -C "$REPO" install PREFIX=/usr DESTDIR="$PWD/root" >/dev/null || fail "make install failed"
	expect_file root/usr/bin/avtrace
	expect_file root/usr/include/avtrace.h
	expect_match "$(cat root/usr/share/pkgconfig/avtrace.pc)" '^Cflags: -I\$\{includedir\}' "pkg-config file"
	printf '#include <avtrace.h>\nint x;\nint main(void){ AVT_WRITE(&x); return 0; }\n' >a.c
	cc -I root/usr/include a.c -o a || fail "the installed header does not compile"
}

# Every target's recorded order replays to the same end, with the default
# recording (automatic watchpoints, heap hooks): schedule 0 is always
# feasible.  (Barrier arrivals and spinning on a flag whose watchpoint ran
# out of budget both broke this once.)
t_every_recorded_order_replays() {
	for p in mutex_counter rwlock spin trylock condvar workqueue barrier sem c11threads \
		spinflag spinflag_busy forker execer lockorder checkthenact vec_copy invariant \
		multi_O0 dlopener mem_log mem_order mem_dcl mem_spinflag mem_log_plain; do
		rm -rf "r_$p"
		avt record -q -o "r_$p" -- "$(target "$p")" >/dev/null 2>&1 || fail "record of $p failed"
		avt_timed 30 replay -d "r_$p" --schedule 0 >"r_$p.txt" 2>&1
		st=$?
		[ $st -eq 0 ] || fail "replay of $p's recorded order: $(head -n 1 "r_$p.txt") (exit $st)"
	done
	avt record -q -o r_crash -- "$(target crash)" >/dev/null 2>&1
	avt_timed 30 replay -d r_crash --schedule 0 >r_crash.txt 2>&1
	expect_eq "$?" 1 "crash's recorded order reproduces the crash"
}

# A recording of a program named by a relative path replays and explores
# from any directory: the path is the recording's, relative to its
# directory (it used to be looked up from avtrace's own: every explored
# run ended in an error, with no word why).  A run that cannot start says
# why in explore's summary.
# limit: 90
t_relative_program_from_elsewhere() {
	local here=$PWD
	mkdir -p prog && cp "$(target mutex_counter)" prog/mc
	(cd prog && avt_timed 30 record -o "$here/out" -- ./mc 2 20 >/dev/null 2>&1) ||
		fail "record of ./mc failed"
	mkdir elsewhere && cd elsewhere || exit
	avt_timed 30 replay -d ../out --schedule 0 >r.txt 2>&1
	expect_match "$(cat r.txt)" '^PASS' "replay from another directory"
	avt_timed 60 explore -q -d ../out -n 3 -j 1 --seed 1 >x.txt 2>&1
	expect_match "$(cat x.txt)" '3 pass, 0 bug' "explore from another directory"
	rm ../prog/mc
	avt_timed 60 explore -q -d ../out -n 2 -j 1 --seed 1 >y.txt 2>&1
	expect_match "$(cat y.txt)" '2 error' "explore of a program that is gone"
	expect_match "$(cat y.txt)" "first error: run [0-9]+: cannot replay: the recorded executable '.*/prog/mc' is gone" \
		"explore's reason"
}
