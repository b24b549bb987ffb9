# shellcheck shell=bash
# Issue 29, first point: with --futex the program's own futex calls are
# events and scheduling points (tracer/futex.c, docs/futex.md); without it
# nothing changes.  futex_lock.c is the bank's lost update under a
# hand-written futex mutex, futex_lock_ok.c its correct twin; predictions
# take its word for a lock (predict/lockword.c), and cas_spinlock.c's.  Run with
# tests/e2e/run.sh tests/e2e/test_futex29.sh (AVTRACE_AGENT=0 too: the
# agent's own futex calls must not change a thing).

# The futex calls on the lock word are in the recording, where the program
# makes them: one wake per unlock (main's, two by each client), and the
# wait of alice, who meets the lock main holds until she has started.
t_futex_events_on_the_word() {
	local wait_line wake_line ev n
	need_jq
	wait_line=$(marker_line "$SRC/futex_lock.c" "/* WAIT LINE */") || exit
	wake_line=$(marker_line "$SRC/futex_lock.c" "/* WAKE LINE */") || exit
	REC_OPTS=--futex record out futex_lock
	expect_recorded out 0
	expect_eq "$(jq -r .futex out/meta.json)" true "meta.json's futex"
	expect_count out futex_wake lockword 5
	n=$(count_kind out futex_wait lockword) || exit
	[ "$n" -ge 1 ] || fail "no futex_wait on lockword: alice's lock met main's"
	expect_eq "$(count_kind out futex_wait)" "$n" "futex_wait events on other words"
	ev=$(select_events out '.kind == "futex_wait"' | head -n 1) || exit
	expect_eq "$(field "$ev" thread)" T1 "the thread of the first futex_wait"
	expect_eq "$(field "$ev" site)" "futex_lock.c:$wait_line" "the site of the first futex_wait"
	expect_eq "$(field "$ev" futex_op)" wait_private "the first futex_wait's op"
	expect_eq "$(field "$ev" val)" 1 "the value the first futex_wait waits on"
	ev=$(select_events out '.kind == "futex_wake"' | head -n 1) || exit
	expect_eq "$(field "$ev" thread)" T0 "the thread of the first futex_wake"
	expect_eq "$(field "$ev" site)" "futex_lock.c:$wake_line" "the site of the first futex_wake"
	expect_eq "$(field "$ev" count)" 1 "how many the first futex_wake wakes"
	avt dump -d out >dump.txt || fail "avtrace dump failed"
	expect_match "$(cat dump.txt)" "T1 +futex_wait +lockword \\(wait_private, val 1\\) +futex_lock.c:$wait_line futex_lock" \
		"avtrace dump"
	# the recorded order replays, futex events and all: the replay takes
	# --futex from meta.json (without it the futex events never come)
	replay out --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of replaying the recorded order"
}

# Off by default: the same program has no futex event, and its recording
# says so for its replays.
t_futex_off_by_default() {
	need_jq
	record out futex_lock
	expect_recorded out 0
	expect_eq "$(jq -r .futex out/meta.json)" false "meta.json's futex"
	expect_count out futex_wait "" 0
	expect_count out futex_wake "" 0
}

# libc's own futex calls (a condition wait, a semaphore, a barrier: libc
# sleeps in futex inside them) are not events: programs with pthread
# synchronization only have none.
t_futex_none_from_libc() {
	local t
	for t in condvar sem barrier workqueue; do
		REC_OPTS=--futex record "$t" "$t"
		expect_recorded "$t" 0
		expect_count "$t" futex_wait "" 0
		expect_count "$t" futex_wake "" 0
	done
}

# The correct twin: no report, and no schedule stuck (a waiter left asleep
# in the kernel while its waker could run).  Its predictions know the
# futex word is a lock (predict/lockword.c: the compare-and-swap takes it,
# the unlock's store gives it back), so none replays INFEASIBLE (9 of 11
# did before).  Ten explored runs: the default's hundred take minutes on a
# loaded machine (each run computes bob's preamble).
# limit: 200
t_futex_lock_ok_passes() {
	natively futex_lock_ok
	TEST_LIMIT=180 run_test out --futex --explore 10 -- "$(target futex_lock_ok)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test on futex_lock_ok"
	expect_eq "$(reports out)" 0 "reports on futex_lock_ok"
	expect_match "$(cat out.test)" '^lock word lockword: [0-9]+ acquire/release pairs' "the lock word"
	expect_no_match "$(cat out.test)" 'INFEASIBLE' "predictions of futex_lock_ok"
	expect_match "$(cat out.test)" ', 0 stuck until the time limit or failed\)' "schedules stuck"
	expect_no_match "$(cat out.test)" 'BUG|DEADLOCK' "avtrace test on futex_lock_ok"
}

# The lost update under the futex lock is predicted (the futex word is a
# lock: alice's read and write of the balance are two critical sections
# of it) and replays: the recording and its predictions, no exploration,
# one of the first two fails at the assert.
# limit: 120
t_futex_lock_bug_found() {
	natively futex_lock
	TEST_LIMIT=100 run_test out --futex --explore 0 -- "$(target futex_lock)"
	futex_lock_predicted out
}

# futex_lock.c's verdicts from predictions: ok passes with no INFEASIBLE,
# the bug fails at the assert in one of the first two (OUT: the bug's).
futex_lock_predicted() {
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test on futex_lock"
	expect_match "$(cat "$1.test")" '^lock word lockword: [0-9]+ acquire/release pairs' "the lock word"
	expect_match "$(cat "$1.test")" '^  [12] .* BUG \(SIGABRT\)$' "a prediction of the first two fails"
	expect_match "$(cat "$1.test")" '^  bug 1: BUG reproduced: SIGABRT in T0 at futex_lock[.]c:[0-9]+ \(main\)' \
		"avtrace test on futex_lock"
	expect_match "$(cat "$1.test")" ', 0 stuck until the time limit or failed\)' "schedules stuck"
}

# Without --futex the lock word is still a lock: a compare-and-swap of it
# failed (alice's, while main holds it), which an exchange or an
# increment never does.  Both verdicts from predictions alone.
# limit: 120
t_futex_lock_without_futex() {
	natively futex_lock_ok
	TEST_LIMIT=50 run_test ok --explore 0 -- "$(target futex_lock_ok)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test on futex_lock_ok"
	expect_match "$(cat ok.test)" '^lock word lockword: [0-9]+ acquire/release pairs' "the lock word"
	expect_no_match "$(cat ok.test)" 'INFEASIBLE|BUG' "predictions of futex_lock_ok"
	TEST_LIMIT=50 run_test out --explore 0 --no-minimize -- "$(target futex_lock)"
	futex_lock_predicted out
}

# A compare-and-swap spinlock is a lock word too (no futex call: its
# compare-and-swap failed, alice's while main holds it): the correct twin's
# predictions all replay, and the lost update under it is predicted and
# fails at the assert in one of the first two (before: 13 of 15
# INFEASIBLE, none failing).
# limit: 120
t_cas_spinlock_predicted() {
	natively cas_spinlock_ok
	natively cas_spinlock
	TEST_LIMIT=50 run_test ok --explore 0 -- "$(target cas_spinlock_ok)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test on cas_spinlock_ok"
	expect_match "$(cat ok.test)" '^lock word spinword: [0-9]+ acquire/release pairs' "the lock word"
	expect_no_match "$(cat ok.test)" 'INFEASIBLE|BUG' "predictions of cas_spinlock_ok"
	TEST_LIMIT=50 run_test out --explore 0 --no-minimize -- "$(target cas_spinlock)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test on cas_spinlock"
	expect_match "$(cat out.test)" '^lock word spinword: [0-9]+ acquire/release pairs' "the lock word"
	expect_match "$(cat out.test)" '^  [12] .* BUG \(SIGABRT\)$' "a prediction of the first two fails"
	expect_match "$(cat out.test)" '^  bug 1: BUG reproduced: SIGABRT in T0 at cas_spinlock[.]c:[0-9]+ \(main\)' \
		"avtrace test on cas_spinlock"
}

# A child the program forks inherits the futex filter: it is a light
# process of the tree (tracer/tree.c) that takes the filter's stops, each
# let go, so its futex calls work (no ENOSYS, no abort in glibc), in the
# recording and in its own recording by its fork path.
# limit: 120
t_futex_forked_child_runs() {
	need_jq
	natively fork_futex
	REC_OPTS=--futex record out fork_futex
	expect_recorded out 0
	expect_eq "$(cat out.stdout)" "child status 0" "the forked child's end"
	expect_eq "$(jq -r '.processes[1].exit_status' out/tree.json)" 0 "the child's exit status in tree.json"
	expect_eq "$(jq -r '.processes[1].recording' out/tree.json)" procs/0001 "the child's recording"
	expect_eq "$(jq -r .futex out/procs/0001/meta.json)" true "the child's recording's futex"
	expect_eq "$(jq -r .exit_status out/procs/0001/meta.json)" 0 "the child's exit status recorded alone"
}

# The parent a forked child's recording re-runs (its fork path) is let go
# once it has forked it; with the futex filter it stays traced, so its own
# futex call after the fork works (untraced it gets ENOSYS), and the child,
# which is told what the call returned, exits 0.
# limit: 120
t_futex_fork_path_parent_traced() {
	need_jq
	natively fork_futex_parent
	REC_OPTS=--futex record out fork_futex_parent
	expect_recorded out 0
	expect_eq "$(jq -r '.processes[1].recording' out/tree.json)" procs/0001 "the child's recording"
	expect_eq "$(jq -r .exit_status out/procs/0001/meta.json)" 0 \
		"the child's exit status recorded alone (1: its parent's futex failed)"
	replay out/procs/0001 --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of replaying the child's recording"
}
