# shellcheck shell=bash
# Issue 30, "disk full": every result avtrace cannot write (trace, results
# JSON, report, picture) is an error naming the file and the real reason,
# exit 2, never a pass or a verdict.  Deterministic without a mount: the
# command runs under a file size limit (ulimit -f, in KiB) with SIGXFSZ
# ignored, so a write past the limit fails with EFBIG ("File too large").
# Without the agent, whose shared memory is a file the limit caps too.

# limited KIB OUT ARGS...: avtrace ARGS under `ulimit -f KIB`; stdout and
# stderr in OUT.out and OUT.err (small: they fit in 1 KiB), the status in LIM_STATUS.
LIM_STATUS=
limited() {
	local kib=$1 out=$2
	shift 2
	echo "+ (ulimit -f $kib) avtrace $*" >&3
	(
		trap '' XFSZ
		ulimit -f "$kib"
		exec timeout 120 "$AVTRACE" "$@"
	) >"$out.out" 2>"$out.err"
	LIM_STATUS=$?
	[ "$LIM_STATUS" -ne 124 ] || fail "avtrace $1 hung (killed after 120 s)"
	sed 's/^/  | /' "$out.out" "$out.err" >&3
}

# expect_write_error OUT FILE_REGEX: exit 2, the message names the file and
# EFBIG, and nothing says "Success".
expect_write_error() {
	expect_eq "$LIM_STATUS" 2 "exit status when results cannot be written"
	expect_match "$(cat "$1.err")" "cannot write [a-z ]*'$2': File too large" "the message"
	expect_no_match "$(cat "$1.out" "$1.err")" "Success" "messages"
}

# Record (its trace) and replay (the recorded order's results): no PASS
# printed, no empty or partial result left.
# limit: 150
t_diskfull_record_replay_efbig() {
	local prog
	prog=$(target lockheavy) || exit
	limited 8 rec record --no-agent -q -o r0 -- "$prog" 2000 2
	expect_write_error rec "r0/trace.avt"
	record r mutex_counter
	expect_eq "$REC_STATUS" 0 "record status"
	limited 1 rp replay --no-agent -d r --schedule 0
	expect_write_error rp "r/replays/0000[.]avt"
	expect_no_match "$(cat rp.out)" "^PASS" "replay's output"
	expect_match "$(cat rp.err)" "not saved" "what was lost"
	expect_no_file r/replays/0000.avt
	expect_no_file r/replays/0000.json
	expect_no_file r/replays/0000.json.tmp
}

# `avtrace test`: the recording (a few KiB) fits, each prediction's
# results with their facts (about 10 KiB) do not; the replay workers'
# messages reach test's stderr and it stops there, with no verdict.
# limit: 120
t_diskfull_test_replays_efbig() {
	limited 8 t test -q -o out --no-agent -- "$(target acc_wronglock)"
	expect_write_error t "out/replays/[0-9]{4}[.]json"
	expect_no_match "$(cat t.out t.err)" "bug reproduced|no bug" "a verdict"
	expect_no_file out/replays/0001.json.tmp
}

# `avtrace test`: everything fits but the bug's HTML picture (about 23
# KiB): the bug is found, and still the exit status is 2.
# limit: 120
t_diskfull_test_report_efbig() {
	limited 16 t test -q -o out --no-agent -- "$(target acc_wronglock)"
	expect_write_error t "out/reports/0001[.]html"
	expect_no_file out/reports/0001.html.tmp
}

# `avtrace minimize`: its candidates' replays (workers of their own) cannot
# keep their traces; their messages reach minimize's stderr.  acc_setters
# with 12 setters: its replays' traces (about 2.4 KiB) pass the 1 KiB limit
# (acc_wronglock's, 640 bytes since events are compact, fit).
# limit: 180
t_diskfull_minimize_efbig() {
	run_test out --no-agent -- "$(target acc_setters)" 12
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test"
	limited 1 m minimize -d out --schedule 1
	expect_write_error m "out/replays/custom[.](avt|json)"
}
