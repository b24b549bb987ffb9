# shellcheck shell=bash
# SIGINT, SIGTERM and SIGHUP stop every phase of `avtrace test` and
# `avtrace explore` promptly, with status 128+N, keeping what was written
# (issue 30, shape 6).  Each signal is sent once the phase has begun, as
# seen from a line of output or a file, never after a guessed time.
#
# The predict phase is made endless by AVTRACE_PREDICT_STALL (predict.c:
# after its first prediction, synthesis waits until interrupted, as a
# prediction of GLib's 5,006 threads did for 55 minutes): only a stop that
# prediction checks ends it.

# The bound on how long a stopped avtrace may take to exit: "within a
# second" is the aim (the latency goes to the log); the bound only tells
# a stop from a hang on a busy machine.
SIG_BOUND_S=10

# wait_line FILE REGEX WHAT: until a line of FILE matches (or 60 s).
wait_line() {
	local i
	for i in $(seq 1200); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "$3 never began: no line /$2/ in $1 within 60 s"
}

# stop_and_wait PID SIG: sends SIG to PID (a child of this shell), waits
# for it to exit within SIG_BOUND_S; its status in ST.
stop_and_wait() {
	local pid=$1 sig=$2 i t0 t1
	t0=$(date +%s%N)
	kill -"$sig" "$pid"
	for i in $(seq $((SIG_BOUND_S * 20))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		fail "avtrace still running $SIG_BOUND_S s after SIG$sig"
	fi
	wait "$pid"
	ST=$?
	t1=$(date +%s%N)
	echo "SIG$sig: exited with $ST after $(( (t1 - t0) / 1000000 )) ms" >&3
}

sig_status() {
	case $1 in INT) echo 130 ;; TERM) echo 143 ;; HUP) echo 129 ;; esac
}

# no_target_left MARKER: no process whose command line has MARKER.
no_target_left() {
	local i
	for i in $(seq 1 50); do
		pgrep -f -- "$1" >/dev/null || return 0
		sleep 0.1
	done
	fail "processes left behind: $(pgrep -af -- "$1" | head -n 3 | tr '\n' ';')"
}

t_signal_stops_test_while_predicting() {
	need_jq
	local prog sig n
	prog=$(target checkthenact) || exit
	for sig in INT TERM HUP; do
		AVTRACE_PREDICT_STALL=1 "$AVTRACE" test -o "$sig" -- "$prog" >"$sig.out" 2>"$sig.err" &
		wait_line "$sig.err" '^avtrace: prediction stalled' "the predict phase"
		stop_and_wait $! "$sig"
		sed 's/^/  | /' "$sig.err" >&3
		expect_eq "$ST" "$(sig_status "$sig")" "test status after SIG$sig while predicting"
		expect_match "$(cat "$sig.err")" \
			"^avtrace: interrupted by SIG$sig while predicting: $sig/predictions.json keeps the 1 prediction made so far$" \
			"test's message"
		# what was written is whole: the trace, and the one prediction
		avt dump -d "$sig" >"$sig.dump" || fail "dump of the trace failed after SIG$sig"
		n=$(jq -r '.predictions | length' "$sig/predictions.json") ||
			fail "predictions.json is not JSON after SIG$sig"
		expect_eq "$n" 1 "predictions written after SIG$sig"
		expect_file "$sig/schedules/0001.sched"
		expect_no_file "$sig/replays"
		expect_no_match "$(cat "$sig.out")" '^replaying|^recorded .* replaying' "replay phase started"
	done
}

t_signal_stops_test_while_recording() {
	local prog sig i marker=3000030
	prog=$(target lockheavy) || exit
	for sig in INT TERM HUP; do
		"$AVTRACE" test -o "$sig" -- "$prog" "$marker" 2 >"$sig.out" 2>"$sig.err" &
		# events on disk: the recording is under way
		for i in $(seq 1200); do
			[ "$(stat -c %s "$sig/trace.avt" 2>/dev/null || echo 0)" -gt 8192 ] && break
			sleep 0.05
		done
		stop_and_wait $! "$sig"
		expect_eq "$ST" "$(sig_status "$sig")" "test status after SIG$sig while recording"
		no_target_left "lockheavy $marker"
		avt dump -d "$sig" >"$sig.dump" || fail "dump of the interrupted trace failed"
		expect_match "$(tail -n 1 "$sig.dump")" "interrupted by SIG$sig" "last line of the dump"
		expect_no_file "$sig/predictions.json"
	done
}

# The explore phase of `test` (a correct program: the predictions pass and
# exploration goes on for a million runs) and of `explore` itself.
t_signal_stops_test_while_exploring() {
	local prog sig
	prog=$(target mutex_counter) || exit
	for sig in INT TERM HUP; do
		"$AVTRACE" test -o "$sig" --explore 1000000 -- "$prog" 2 3 >"$sig.out" 2>"$sig.err" &
		wait_line "$sig.out" '^exploring [0-9]+ runs' "the explore phase"
		stop_and_wait $! "$sig"
		expect_eq "$ST" "$(sig_status "$sig")" "test status after SIG$sig while exploring"
		no_target_left "$prog 2 3"
		avt dump -d "$sig" >/dev/null || fail "dump of the trace failed after SIG$sig"
		expect_file "$sig/predictions.json"
	done
}

t_signal_stops_explore() {
	local prog sig
	prog=$(target mutex_counter) || exit
	for sig in INT TERM HUP; do
		"$AVTRACE" explore -o "$sig" -n 1000000 -- "$prog" 2 4 >"$sig.out" 2>"$sig.err" &
		wait_line "$sig.out" '^exploring [0-9]+ runs' "the explore phase"
		stop_and_wait $! "$sig"
		expect_eq "$ST" "$(sig_status "$sig")" "explore status after SIG$sig"
		no_target_left "$prog 2 4"
		avt dump -d "$sig" >/dev/null || fail "dump of the trace failed after SIG$sig"
	done
}
