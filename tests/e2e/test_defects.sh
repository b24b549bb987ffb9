# shellcheck shell=bash
# Issue 18, "More defects measured": correct programs that used to hang
# the recorder or get a wrong verdict.  Each target is tiny and each test
# takes a few seconds, also on a loaded machine.

# same_as_native NAME TIMEOUT (lib.sh): recorded, the output is the native one.

# clean_test NAME: `avtrace test` (a short exploration) on it: exit 0, no
# report of any kind.
clean_test() {
	local prog
	prog=$(target "$1") || exit
	avt_timed 120 test -o t --explore 20 -- "$prog" >t.out 2>&1
	local st=$?
	sed 's/^/  | /' t.out >&3
	expect_eq "$st" 0 "avtrace test status on $1"
	expect_no_match "$(cat t.out)" 'BUG|DEADLOCK|deadlocked|died of|[1-9][0-9]* (bug|deadlock)' "avtrace test output"
	expect_match "$(cat t.out)" '^no bug reproduced' "verdict"
}

# pthread_cancel of a thread in pthread_cond_wait (with a cleanup handler
# that unlocks) and of one in sleep(100): both act on the cancel at once,
# and the trace shows the mutex the cancelled wait takes back.
# limit: 150
t_cancel_blocked_threads() {
	need_jq
	same_as_native cancel_wait 30
	expect_match "$(cat recorded.out)" '^waiter canceled, sleeper canceled$' "output"
	# the cancelled wait takes cw_lock back (glibc's cleanup) before the
	# handler's unlock: wait, acquire at the wait's line, release in
	# unlock_it, by the same thread and in that order
	local w evs
	w=$(events out | jq -r 'select(.kind == "wait" and .obj_name == "cw_never") | .thread')
	[ -n "$w" ] || fail "no wait on cw_never in the trace"
	evs=$(jq -r --arg w "$w" 'select(.thread == $w and (.obj_name == "cw_lock" or .kind == "wait"))
		| "\(.kind) \(.func)"' out.json | tr '\n' ',')
	expect_eq "$evs" "acquire waiter,wait waiter,acquire waiter,release unlock_it," \
		"the waiter's events on cw_lock"
	clean_test cancel_wait
}

# A SIGUSR1 handler that locks a mutex runs while main is in pthread_join:
# nothing is blocked, no deadlock.
# limit: 150
t_signal_handler_in_join() {
	same_as_native signal_join 30
	expect_match "$(cat recorded.out)" '^handled 1$' "output"
	clean_test signal_join
}

# The owner of a robust mutex exits holding it: the next locker gets
# EOWNERDEAD (it used to be reported "deadlocked", exit 1).
# limit: 150
t_robust_mutex_owner_dies() {
	same_as_native robust_owner 30
	expect_match "$(cat recorded.out)" '^locker got EOWNERDEAD, main got 0, ro_count 3$' "output"
	expect_count out acquire ro_lock 3
	clean_test robust_owner
}

# exec of a threaded program after its thread ran: the new image reuses
# the old one's pthread_t addresses; its joins are of its own threads
# (they were "join T1", the first image's worker, made up at once).
# limit: 150
t_exec_after_thread() {
	need_jq
	same_as_native exec_threaded 30
	avt dump -d out >dump.txt 2>&1 || fail "avtrace dump failed: $(head -n 1 dump.txt)"
	expect_match "$(cat dump.txt)" "^# exec '.*/mutex_counter' by T0" "exec note in the trace"
	local joins
	joins=$(events out | jq -r 'select(.kind == "join") | .child' | tr '\n' ' ')
	expect_eq "$joins" "T1 T2 T3 " "threads joined (first image, then second)"
	local creates_before_join
	creates_before_join=$(jq -s '[.[] | select(.kind == "create" and .child == "T3") | .seq][0]
		< [.[] | select(.kind == "join" and .child == "T2") | .seq][0]' out.json)
	expect_eq "$creates_before_join" true "T3 created before T2 is joined"
	clean_test exec_threaded
}

# A thread set aside in an unmodelled wait (read on a pipe), woken, runs
# for a while and blocks again on a pipe a stopped thread must write: the
# tracer used to stop watching it after 20 ms and it slept for ever.
t_unknown_wait_then_block() {
	same_as_native pipe_handoff 20
	expect_match "$(cat recorded.out)" '^ph_done=1$' "output"
}

# record --slice 1 of the lock-heavy target: it used to hang about one run
# in eight (a locker committed while the holder, preempted before it ran
# its unlock, still held the mutex).  Five short runs under a limit each.
t_lockheavy_slice_1() {
	local prog i st
	prog=$(target lockheavy) || exit
	for i in 1 2 3 4 5; do
		avt_timed 30 record -o "out$i" --slice 1 -- "$prog" 2000 2 >"out$i.stdout" 2>"out$i.stderr"
		st=$?
		sed 's/^/  | /' "out$i.stderr" >&3
		expect_eq "$st" 0 "exit status of record --slice 1, run $i"
		expect_match "$(cat "out$i.stdout")" '^heavy_counter=4000$' "output of run $i"
		expect_count "out$i" acquire heavy_lock 4000
	done
}
