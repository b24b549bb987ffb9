# shellcheck shell=bash
# Thousands of short threads (issue 30, shape 6: GLib's threadtests starts
# 5,006): the trace stays small per event, and prediction's work is bounded
# by the threads alive at once, not by all threads (docs/predict.md,
# "Complexity").  tests/targets/many_threads.c; 1,000 threads, 50 at a
# time, keep the recording short.

# rec_many DIR: records many_threads 1000 50 into DIR once per test.
rec_many() {
	avt_timed 300 record -q -o "$1" -- "$(target many_threads)" 1000 50 >"$1.out" 2>"$1.err" ||
		fail "record of many_threads failed: $(head -c 300 "$1.err")"
	expect_match "$(cat "$1.out")" '^counter=1000$' "many_threads' output"
}

# limit: 330
t_many_threads_trace_size_and_predict() {
	need_jq
	local n bytes per
	rec_many out
	n=$(jq -r .events out/meta.json)
	bytes=$(stat -c %s out/trace.avt)
	per=$((bytes / n))
	echo "trace: $bytes bytes, $n events, $per bytes per event" >&3
	[ "$(jq -r .threads out/meta.json)" = 1001 ] || fail "threads: $(jq -r .threads out/meta.json), expected 1001"
	[ "$per" -le 100 ] || fail "$per bytes per event (issue 30: at most 100)"
	# it finishes at all, well within the e2e limit (it took minutes, or
	# never ended, with clocks sized threads x threads)
	avt_timed 120 predict -v -d out >predict.out 2>predict.err || fail "predict failed: $(head -c 300 predict.err)"
	expect_match "$(cat predict.err)" '^avtrace: debug: model: 1001 threads on [0-9]+ chains' "the model's size"
	jq -e '.predictions | length >= 0' out/predictions.json >/dev/null || fail "predictions.json is not JSON"
}

# The clocks take as many chains as threads run at once (50 here, plus
# main): a thread created after its creator joined another continues that
# one's chain.  That needs joins recorded for the thread they join: the
# recorder names a join by the pthread_t, which glibc hands again to a new
# thread once the old one is joined; a recording whose joins name one
# thread twice cannot say which thread was joined (the tracer names the
# new thread since the join fix: t_join_of_reused_pthread_t).
# limit: 330
t_many_threads_clocks_by_threads_alive() {
	local chains dup
	rec_many out
	dup=$(avt dump -d out | awk '$3 == "join" { print $4 }' | sort | uniq -d | wc -l)
	[ "$dup" -eq 0 ] ||
		fail "the recording names $dup threads in more than one join (a reused pthread_t taken for the first thread that had it)"
	avt_timed 120 predict -v -d out >predict.out 2>predict.err || fail "predict failed"
	chains=$(sed -n 's/^avtrace: debug: model: 1001 threads on \([0-9]*\) chains.*/\1/p' predict.err)
	[ -n "$chains" ] || fail "no model line: $(head -c 300 predict.err)"
	[ "$chains" -le 102 ] || fail "$chains chains for 1001 threads, at most 51 alive at once"
}
