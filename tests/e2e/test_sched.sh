# shellcheck shell=bash
# Scheduling points and fairness of the serialized scheduler (issue 14,
# tracer/sched.c): sleeping calls, timed waits, threads that start while
# another sleeps in the kernel, process exit.  Every command has its own
# timeout: a hang fails the test with a reason.

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# main computes ~0.1 s with no pthread call beside a worker looping on
# usleep(50000): the record must finish within 2x native + 1 s (it used to
# hang, or take 60x native).
t_sleep_beside_compute() {
	local prog t0 native rec
	prog=$(target sleep_compute) || exit
	t0=$(now_ms)
	timeout 20 "$prog" >native.stdout || fail "native run failed"
	native=$(($(now_ms) - t0))
	t0=$(now_ms)
	avt_timed 30 record -o out -- "$prog" >out.stdout 2>out.stderr ||
		fail "record failed: $(head -n 1 out.stderr)"
	rec=$(($(now_ms) - t0))
	echo "  native $native ms, record $rec ms" >&3
	expect_eq "$(cat out.stdout)" "$(cat native.stdout)" "target's stdout"
	[ "$rec" -le $((2 * native + 1000)) ] ||
		fail "record took $rec ms, native $native ms (more than 2x native + 1 s)"
}

# Timed condition waits beside a compute-bound worker: each wait must not
# run to its timeout while the worker sits stopped (FIELD-NOTES row 2),
# and a preempted worker must be run again (row 1).
t_timed_waits_beside_worker() {
	avt_timed 20 record -o out -- "$(target timedwait_worker)" >out.stdout 2>out.stderr ||
		fail "record failed: $(head -n 1 out.stderr)"
	expect_eq "$(cat out.stdout)" "finished 4" "target's stdout"
}

# New threads stopped after their creation run while main sleeps in a
# futex the model does not know (FIELD-NOTES row 3); the workers then
# poll with a timeout until main lets them go.
t_startup_while_main_sleeps() {
	avt_timed 20 record -o out -- "$(target startup_register)" >out.stdout 2>out.stderr ||
		fail "record failed: $(head -n 1 out.stderr)"
	expect_eq "$(cat out.stdout)" "registered 4" "target's stdout"
}

# The three correct programs above: `avtrace test` exits 0, reports nothing.
# limit: 90
t_sleepers_test_clean() {
	local p st
	for p in sleep_compute timedwait_worker startup_register; do
		avt_timed 60 test --explore 10 -o "t_$p" -- "$(target "$p")" >"$p.out" 2>&1
		st=$?
		sed 's/^/  | /' "$p.out" >&3
		expect_eq "$st" 0 "exit status of avtrace test on $p"
		expect_no_match "$(cat "$p.out")" 'BUG|DEADLOCK' "avtrace test on $p"
	done
}

# ---- process exit is a scheduling point

# main returns without joining; the bug needs the three workers in one
# order before the exit takes effect.  DELAY 0: no busy work, so nothing
# depends on time slices.
# limit: 120
t_exit_without_join_bug_found() {
	avt_timed 90 test -o out -- "$(target exit_three)" 0 >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 1 "exit status of avtrace test"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: SIGABRT in T1 at exit_three.c:$(marker_line "$SRC/exit_three.c" '/* CHECK LINE */')" "avtrace test's report"
}

# The exit is placed in the recording after the other threads' turns, and
# a replay of the recording follows it.
t_exit_waits_for_other_threads_in_record() {
	need_jq
	record out exit_three 0
	expect_recorded out 0
	events out >/dev/null || exit
	last=$(jq -s -r 'map(select(.thread == "T0")) | last | .kind' out.json)
	expect_eq "$last" exit "T0's last event"
	n=$(jq -s '[.[] | select(.kind == "exit")] | length' out.json)
	expect_eq "$n" 4 "exit events (every worker ran to its end before main's exit)"
	replay out --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of the replay of the recording"
}

# Exiting with a lock held and a thread blocked on it is correct.
# limit: 90
t_exit_with_lock_held_clean() {
	avt_timed 60 test --explore 20 -o out -- "$(target exit_locked)" >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 0 "exit status of avtrace test"
	expect_no_match "$(cat test.out)" 'DEADLOCK|deadlock reproduced|BUG' "avtrace test"
}

# exit(3) in a worker while main is in pthread_join: no made-up join.
t_exit_in_thread_no_join() {
	need_jq
	record out exit_thread
	expect_recorded out 3
	n=$(count_kind out join "") || exit
	expect_eq "$n" 0 "join events"
	n=$(jq -s '[.[] | select(.kind == "exit" and .thread == "T1")] | length' out.json)
	expect_eq "$n" 1 "T1's exit events"
}

# ---- failures seen are kept

# A spin barrier (atomic increment, sched_yield until both arrived) with a
# bug that needs one order of the writes before it.  The spin has no
# event: the run's saved schedule must keep the turn in which the first
# worker reached the barrier (a yield step), or its check replay is stuck
# and the failure is lost.
# limit: 120
t_spin_barrier_bug_confirmed() {
	local lc
	lc=$(marker_line "$SRC/spin_barrier.c" '/* CHECK LINE */') || exit
	avt_timed 90 test -o out -- "$(target spin_barrier)" >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 1 "exit status of avtrace test"
	expect_match "$(cat out/reports/*.txt | head -n 1)" "^BUG reproduced: SIGABRT in T2 at spin_barrier.c:$lc" "avtrace test's report"
	# without access breakpoints the spin makes no event at all: the
	# exploration run that fails must keep its yield steps to replay
	avt_timed 90 explore -o x --no-access -n 100 --stop -- "$(target spin_barrier)" >x.out 2>&1
	st=$?
	sed 's/^/  | /' x.out >&3
	expect_eq "$st" 1 "exit status of avtrace explore --no-access"
	expect_match "$(cat x.out)" "^BUG reproduced: SIGABRT in T2 at spin_barrier.c:$lc" "avtrace explore"
	expect_match "$(cat x.out)" '^  confirmed: ' "avtrace explore"
	expect_match "$(cat x/explore/runs/*.sched)" '^yield T[12] [0-9]+$' "the runs' schedules"
}

# ---- determinism

# explore --seed S twice, the second time with both CPUs busy: the same
# runs, step for step (spins with sched_yield, a plain spin on a flag, a
# worker polling with usleep beside a short computation: one far below the
# CPU time after which a computing thread gives way, which is the one
# decision left to the clock).
# limit: 150
t_explore_same_seed_same_runs_under_load() {
	local p
	pids=
	# shellcheck disable=SC2086 # no yes left running, whatever happens
	trap 'kill $pids 2>/dev/null' EXIT
	for p in spin_barrier spinflag sleep_compute; do
		if [ $p = sleep_compute ]; then
			record "rec_$p" "$p" 3000000
		else
			record "rec_$p" "$p"
		fi
		expect_recorded "rec_$p" 0
		avt_timed 120 explore -q -d "rec_$p" -n 8 --seed 7 >"$p.1" 2>&1
		mkdir "runs1_$p" && cp "rec_$p"/explore/runs/*.sched "runs1_$p"/
		pids=
		for _ in 1 2; do
			yes >/dev/null &
			pids="$pids $!"
		done
		avt_timed 120 explore -q -d "rec_$p" -n 8 --seed 7 >"$p.2" 2>&1
		# shellcheck disable=SC2086
		kill $pids
		pids=
		mkdir "runs2_$p" && cp "rec_$p"/explore/runs/*.sched "runs2_$p"/
		diff -r "runs1_$p" "runs2_$p" >&3 || fail "$p: the runs of seed 7 differ under load"
	done
}

# A turn ends as soon as its thread falls asleep on a private futex with
# no timeout while no other thread runs (loop.c's stuck turn): workqueue's
# signallers wait in glibc for stopped waiters to leave the condition's
# group.  The clock used to end each such turn a time slice (10 ms) later;
# the count says the new rule decided them, and the runs still pass.
# limit: 150
t_explore_internal_waits_end_at_once() {
	record out workqueue
	expect_recorded out 0
	avt_timed 120 explore -q -d out -n 10 -j 1 --seed 3 >x.txt 2>x.err ||
		fail "explore failed: $(tail -n 2 x.err)"
	expect_match "$(cat x.txt)" '10 pass, 0 bug' "workqueue's runs"
	local n
	n=$(sed -n 's/^  \([0-9]*\) turns ended as soon as.*/\1/p' x.txt)
	[ "${n:-0}" -gt 0 ] || fail "no turn ended at an internal wait: $(cat x.txt)"
}

# ---- reports

# A deadlock in a condition wait names the wait's line (it was blank).
t_deadlock_report_names_cond_wait() {
	record out cond_never
	expect_eq "$REC_STATUS" 1 "exit status of avtrace record (deadlock)"
	replay out --schedule 0
	expect_eq "$RP_STATUS" 1 "exit status of the replay"
	expect_match "$(cat out.replay)" "^  T1 waits for cond ready_cond at cond_never.c:$(marker_line "$SRC/cond_never.c" 'WAIT LINE')$" "deadlock report"
}

# The same for a barrier that never fills: each waiter's line.
t_deadlock_report_names_barrier_wait() {
	record out barrier_never
	expect_eq "$REC_STATUS" 1 "exit status of avtrace record (deadlock)"
	# record's own line names the object too, not its address
	expect_match "$(cat out.stderr)" "deadlocked: T0 waits for barrier gate; T1 waits for barrier gate; killed it" \
		"avtrace record's deadlock line"
	replay out --schedule 0
	expect_eq "$RP_STATUS" 1 "exit status of the replay"
	expect_match "$(cat out.replay)" "^  T0 waits for barrier gate at barrier_never.c:$(marker_line "$SRC/barrier_never.c" 'MAIN WAIT LINE')$" "deadlock report (main)"
	expect_match "$(cat out.replay)" "^  T1 waits for barrier gate at barrier_never.c:$(marker_line "$SRC/barrier_never.c" 'WORKER WAIT LINE')$" "deadlock report (worker)"
}

# A program whose recorded run fails (exit(3) in a worker): said once, up
# front; runs that fail the same way are no finding of exploration.
# limit: 90
t_recorded_run_fails_said_once() {
	avt_timed 60 test --explore 10 -o out -- "$(target exit_thread)" >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 1 "exit status of avtrace test"
	expect_match "$(cat test.out)" '^the recorded run itself failed \(exit status 3\)' "avtrace test"
	expect_match "$(cat test.out)" '^10 of 10 runs failed as the recorded run did' "avtrace test"
	expect_no_match "$(cat test.out)" '^BUG reproduced' "avtrace test"
}
