# shellcheck shell=bash
# C++ at -O0 (issue 30, shape 3): a work-stealing deque on std::vector
# (tests/targets/cxx_wsq.cc, bin/cxx_wsq_O0; cxx_wsq_ok.cc correct).
# At -O0 every std::vector template runs out of line with its locals
# (allocators, iterators, `this`) in its frame and takes their addresses,
# so its frame accesses are instrumented; they are private to the thread
# that runs them.  A thread's access to its own stack is an event only
# where it published an address of it (stored outside its stack, or a
# thread start's argument: tests/targets/acc_stackobj.c, in
# test_access.sh): the recording holds the deque's events, not hundreds of
# template locals per operation.  Run with tests/e2e/run.sh cxx30.
unset AVTRACE_AGENT

# stack_events DIR: access events on an object named as some frame's stack
# other than main's (whose frame holds the deque that main published;
# what main's own frame holds counts as published with it).
stack_events() {
	need_jq
	events "$1" >/dev/null || exit
	jq -c 'select(.obj_name != null and (.obj_name | test("stack")) and
		(.obj_name | test("^main.s stack: ") | not))' "$1.json" | grep -c . || true
}

# The recording: no event on a template's (or a thread's) own frame; the
# deque's fields are there, shared with main's stack named.  Before: 2,432
# access events, most of them "X's stack" of vector's templates.
# limit: 240
t_cxx30_private_frames() {
	local p n
	for p in cxx_wsq_O0 cxx_wsq_ok_O0; do
		record "$p" "$p"
		expect_recorded "$p" 0
		expect_eq "$(stack_events "$p")" 0 "$p: events on private stack objects"
		n=$(jq -c 'select(.kind == "read" or .kind == "write" or .kind == "rmw")' "$p.json" | grep -c . || true)
		[ "$n" -le 500 ] || fail "$p: $n access events (the deque's take a few hundred)"
		n=$(count_kind "$p" read "main's stack: q.items_+8")
		[ "$n" -ge 16 ] || fail "$p: only $n reads of the deque's end pointer"
	done
}

# The same recording with the agent taking the accesses as without it:
# the private frames are left to ptrace, where they are no events.
# limit: 240
t_cxx30_agent_same() {
	need_jq
	local d
	REC_OPTS="--slice 60000 --no-agent" record p cxx_wsq_O0
	expect_recorded p 0
	REC_OPTS="--slice 60000 --agent" record a cxx_wsq_O0
	expect_recorded a 0
	for d in p a; do
		events "$d" >/dev/null || exit
		jq -c '[.thread, .tindex, .kind, .obj_name, .site]' "$d.json" |
			sed -E 's/"0x7fff[0-9a-f]+"/"stack"/g' >"$d.proj"
	done
	cmp -s p.proj a.proj || fail "the traces differ: $(diff p.proj a.proj | head -n 3 | tr '\n' ' ')"
	[ "$(grep -c . a.proj)" -le 600 ] || fail "$(grep -c . a.proj) events: private frames recorded"
	[ "$(jq .access_stubs a/meta.json)" -gt 0 ] || fail "no site taken in-process"
}

# recorded_at_most OUT N: `avtrace test -o OUT` recorded at most N events
# (2,508 with the templates' private frames).
recorded_at_most() {
	local n
	n=$(sed -nE 's/^recorded [0-9]+ threads, ([0-9,]+) events.*/\1/p' "$1.test" | tr -d ,)
	[ -n "$n" ] || fail "no recording summary in $1.test"
	[ "$n" -le "$2" ] || fail "$n events recorded"
}

# The bug with no flags: one report (the thief's abort), found within 4
# executions counting the recording; at most 10% of the predictions
# INFEASIBLE, no schedule stuck until its time limit.
# limit: 400
t_cxx30_bug() {
	local la ntab ninf run
	la=$(( $(marker_line "$SRC/cxx_wsq.cc" "/* TAKE LINE */") + 2 ))
	TEST_LIMIT=380 run_test out -- "$(target cxx_wsq_O0)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test"
	expect_eq "$(reports out)" 1 "reports"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: SIGABRT in T2 at cxx_wsq[.]cc:$la \\(steal\\)" "the report"
	expect_no_match "$(grep -v "main's stack" out/reports/*.txt)" "'s stack" "the report: private frames"
	recorded_at_most out 500
	# the predictions' table: the rows under its header
	ntab=$(awk '/^ +# +detector/ { t = 1; next } t && /^ +[0-9]+ / { n++; next } { t = 0 } END { print n + 0 }' out.test)
	ninf=$(awk '/^ +# +detector/ { t = 1; next } t && /^ +[0-9]+ / { n += /INFEASIBLE/; next } { t = 0 } END { print n + 0 }' out.test)
	[ $((ninf * 10)) -le "$ntab" ] || fail "$ninf of $ntab predictions INFEASIBLE"
	expect_match "$(cat out.test)" " 0 stuck until the time limit" "stuck schedules"
	if grep -q 'found by run' out.test; then
		run=$(sed -nE 's/.*found by run ([0-9]+):.*/\1/p' out.test | head -n 1)
		[ "$run" -le 3 ] || fail "found by explored run $run"
	fi
}

# The correct deque: no report, exit 0.
# limit: 300
t_cxx30_ok() {
	natively cxx_wsq_ok_O0
	TEST_LIMIT=280 run_test out -- "$(target cxx_wsq_ok_O0)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test"
	expect_eq "$(reports out)" 0 "reports"
	recorded_at_most out 500
}
