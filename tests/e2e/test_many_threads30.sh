# shellcheck shell=bash
# A program that starts 5,000 short threads, 100 at a time (issue 30,
# shape 6; tests/targets/many_threads.c): what a thread costs the
# recording is counted in ptrace stops, not timed.
#
# With the agent a thread costs the 3 stops the kernel reports: its
# clone, its exit event, its end.  Its creation and its join are made
# in-process (docs/agent.md, "Threads"), and the calls libc and ld.so
# make themselves (the heap's, for its TLS: ~20 a thread; ld.so's TLS
# lock, twice) pass a gate with no stop (decode/gate.h).  On ptrace
# alone (AVTRACE_AGENT=0) the create and join entries, the worker's lock,
# unlock and accesses stop too: 11.  (Before: 7 and 13.)
#
# The heap hooks' share is the difference from a recording with
# --no-heap (no heap hooks at all): under 1 stop a thread, with the agent
# or without it; the --no-heap recording's stops are the threads' own.
# limit: 400
t_many_threads_stops_and_bytes_per_thread() {
	need_jq
	local threads stops events bytes plain own most
	avt_timed 240 record -q -o out -- "$(target many_threads)" 5000 100 >out.stdout 2>out.stderr ||
		fail "record of many_threads failed: $(head -c 300 out.stderr)"
	expect_match "$(cat out.stdout)" '^counter=5000$' "many_threads' output"
	avt_timed 240 record -q --no-heap -o plain -- "$(target many_threads)" 5000 100 >plain.stdout 2>plain.stderr ||
		fail "record --no-heap of many_threads failed: $(head -c 300 plain.stderr)"
	threads=$(jq -r .threads out/meta.json)
	stops=$(jq -r .ptrace_stops out/meta.json)
	plain=$(jq -r .ptrace_stops plain/meta.json)
	events=$(jq -r .events out/meta.json)
	bytes=$(stat -c %s out/trace.avt)
	echo "$threads threads, $stops ptrace stops ($plain with --no-heap), $events events, $bytes bytes" >&3
	expect_eq "$threads" 5001 "threads recorded"
	[ "$stops" -gt 0 ] && [ "$plain" -gt 0 ] || fail "meta.json has no ptrace_stops count: $stops, $plain"
	[ "$(((stops - plain) / threads))" -lt 1 ] ||
		fail "the heap hooks made $(((stops - plain) / threads)) ptrace stops per thread (libc's own heap calls must not stop)"
	own=$((plain / threads))
	if [ "$(jq -r .agent plain/meta.json)" = false ]; then most=11; else most=3; fi
	[ "$own" -le "$most" ] ||
		fail "$own ptrace stops per thread of its own (agent: $(jq -r .agent plain/meta.json)); at most $most"
	[ "$((bytes / events))" -le 100 ] || fail "$((bytes / events)) bytes per event (issue 30: at most 100)"
}

# `avtrace test` on the same shape, smaller: no bug to find (the program
# is correct under every schedule), so exit 0 and no report.  A bounded
# exploration (--explore 20) keeps it to runs, not seconds.
# limit: 240
t_many_threads_test_finds_nothing() {
	TEST_LIMIT=200 run_test out --explore 20 -- "$(target many_threads)" 300 50
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test"
	expect_eq "$(reports out)" 0 "reports"
	expect_match "$(cat out.test)" 'no bug reproduced' "the verdict"
}
