# shellcheck shell=bash
# Acceptance tests of `avtrace record` (and `avtrace dump --json` to read
# what it wrote).  Run with tests/e2e/run.sh [record | t_NAME].
#
# The expected counts come from the header comments of tests/targets/*.c.
# Counts are per object name because libc takes locks of its own (the
# dynamic linker's, around thread creation and exit).

# ---- mutexes and threads

t_mutex_counter() {
	record out mutex_counter
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^counter=200$' "target's stdout"
	expect_count out acquire counter_lock 200
	expect_count out release counter_lock 200
	expect_count out create "" 4
	expect_count out join "" 4
}

t_mutex_counter_args() {
	record out mutex_counter 3 7
	expect_recorded out 0
	expect_count out acquire counter_lock 21
	expect_count out release counter_lock 21
	expect_count out create "" 3
	expect_count out join "" 3
}

t_64_threads() {
	need_jq
	record out mutex_counter 64 10
	expect_recorded out 0
	expect_count out acquire counter_lock 640
	expect_count out release counter_lock 640
	expect_count out create "" 64
	expect_count out join "" 64
	n=$(nthreads out) || exit
	expect_eq "$n" 65 "threads with events"
}

# Every event names its thread, sequence numbers count from 0, each thread's
# tindex counts from 0, creates and joins name their child.
t_dump_json_shape() {
	need_jq
	record out mutex_counter 4 5
	expect_recorded out 0
	events out >/dev/null || exit
	ok=$(jq -s 'map(.seq) == [range(0; length)]' out.json) ||
		fail "dump output is not JSON lines"
	expect_eq "$ok" true "seq numbers 0..N-1 in order"
	ok=$(jq -s 'group_by(.thread)
		| map(sort_by(.seq) | map(.tindex) | . == [range(0; length)])
		| all' out.json)
	expect_eq "$ok" true "per-thread tindex 0..n-1"
	bad=$(select_events out '(.thread | test("^T[0-9]+$") | not)
		or (.kind | type) != "string"') || exit
	expect_eq "$bad" "" "events with a malformed thread or kind"
	children=$(select_events out '.kind == "create"' | jq -r '.child' | sort) || exit
	others=$(jq -r 'select(.thread != "T0") | .thread' out.json | sort -u)
	expect_eq "$(printf '%s\n' "$children" | sort -u | grep -c '^T[0-9]')" 4 "distinct create children"
	expect_eq "$children" "$others" "create children vs. threads other than T0"
	joined=$(select_events out '.kind == "join"' | jq -r '.child' | sort) || exit
	expect_eq "$joined" "$others" "join children"
	creators=$(select_events out '.kind == "create" or .kind == "join"' | jq -r '.thread' | sort -u) || exit
	expect_eq "$creators" T0 "threads that create and join"
}

# Sites are the caller's line (the call, not the line after it) and function.
t_sites() {
	need_jq
	lock=$(marker_line "$SRC/mutex_counter.c" "/* LOCK LINE */") || exit
	unlock=$(marker_line "$SRC/mutex_counter.c" "/* UNLOCK LINE */") || exit
	record out mutex_counter 2 3
	expect_recorded out 0
	expect_count out acquire counter_lock 6
	bad=$(select_events out ".kind == \"acquire\" and .obj_name == \"counter_lock\"
		and ((.site // \"\" | test(\"(^|/)mutex_counter[.]c:$lock\$\") | not)
		     or .func != \"increment\")" | head -n 1) || exit
	expect_eq "$bad" "" "an acquire not at mutex_counter.c:$lock in increment"
	bad=$(select_events out ".kind == \"release\" and .obj_name == \"counter_lock\"
		and ((.site // \"\" | test(\"(^|/)mutex_counter[.]c:$unlock\$\") | not)
		     or .func != \"increment\")" | head -n 1) || exit
	expect_eq "$bad" "" "a release not at mutex_counter.c:$unlock in increment"
}

t_summary_line() {
	need_jq
	record out mutex_counter 3 10
	expect_recorded out 0
	line=$(grep -E '^avtrace: recorded ' out.stderr | head -n 1)
	expect_match "$line" '^avtrace: recorded [0-9]+ threads?, [0-9,]+ events? .* in [0-9.]+ s -> .*out/?$' \
		"summary line"
	threads=$(printf '%s\n' "$line" | sed -E 's/^avtrace: recorded ([0-9]+) thread.*/\1/')
	nev=$(printf '%s\n' "$line" | sed -E 's/^[^,]*, ([0-9,]+) event.*/\1/' | tr -d ,)
	n=$(nthreads out) || exit
	expect_eq "$threads" "$n" "threads in the summary vs. in the dump"
	expect_eq "$nev" "$(grep -c . out.json)" "events in the summary vs. in the dump"
}

t_meta_json() {
	need_jq
	record out mutex_counter 2 2
	expect_recorded out 0
	jq -e . out/meta.json >/dev/null || fail "meta.json is not valid JSON"
	expect_match "$(cat out/meta.json)" 'mutex_counter' "meta.json (the recorded program)"
}

t_default_outdir() {
	prog=$(target mutex_counter) || exit
	avt record -- "$prog" 2 3 >stdout 2>stderr
	expect_eq "$?" 0 "exit status of avtrace record ($(head -n 1 stderr))"
	expect_file avtrace-out/trace.avt
	expect_file avtrace-out/meta.json
	avt dump --json >dump.json 2>dump.err || fail "avtrace dump (no -d) failed: $(head -n 1 dump.err)"
	n=$(grep -F '"kind":"acquire"' dump.json | grep -cF '"obj_name":"counter_lock"')
	expect_eq "$n" 6 "acquires of counter_lock in ./avtrace-out"
}

t_exit_status() {
	record out /bin/sh -c 'exit 3'
	expect_recorded out 3
	# shellcheck disable=SC2016
	record out2 /bin/sh -c 'kill -TERM $$'
	expect_recorded out2 143
}

t_static() {
	record out mutex_counter_static 3 20
	expect_recorded out 0
	expect_count out acquire counter_lock 60
	expect_count out release counter_lock 60
	expect_count out create "" 3
	expect_count out join "" 3
}

# Without a symbol table the dynamic binary still has libc's dynamic
# symbols: the same events, on an object that now has no name.
t_stripped_dynamic() {
	need_jq
	record out mutex_counter_stripped 3 20
	expect_recorded out 0
	events out >/dev/null || exit
	counts=$(jq -s -c '[.[] | select(.kind == "acquire" or .kind == "release")]
		| group_by(.obj) | map({obj: .[0].obj,
			acq: (map(select(.kind == "acquire")) | length),
			rel: (map(select(.kind == "release")) | length)})
		| map(select(.acq == 60 and .rel == 60)) | length' out.json)
	expect_eq "$counts" 1 "objects with 60 acquires and 60 releases"
	expect_count out create "" 3
}

t_static_stripped() {
	prog=$(target mutex_counter_static_stripped) || exit
	avt_timed 20 record -o out -- "$prog" 2 2 >out.stderr 2>&1
	expect_eq "$?" 2 "exit status of avtrace record"
	expect_one_line_error out.stderr
	expect_match "$(cat out.stderr)" '[Ss]tripped|[Ss]ymbol' "error message"
	expect_no_file out/trace.avt
}

# ---- other synchronization families

t_rwlock() {
	record out rwlock
	expect_recorded out 0
	expect_count out rd_acquire table_lock 60
	expect_count out wr_acquire table_lock 40
	expect_count out release table_lock 100
	expect_count out acquire table_lock 0
	expect_count out create "" 5
	expect_count out join "" 5
	record out2 rwlock 1 4 7
	expect_recorded out2 0
	expect_count out2 rd_acquire table_lock 7
	expect_count out2 wr_acquire table_lock 28
	expect_count out2 release table_lock 35
}

# pthread_spin_init is the same code as pthread_spin_unlock in glibc; the
# init must not show up as a release.
t_spin() {
	record out spin
	expect_recorded out 0
	expect_count out acquire counter_spin 200
	expect_count out release counter_spin 200
	record out2 spin 3 7
	expect_recorded out2 0
	expect_count out2 acquire counter_spin 21
	expect_count out2 release counter_spin 21
}

t_trylock() {
	record out trylock
	expect_recorded out 0
	expect_count out trylock_fail held_lock 6
	expect_count out acquire held_lock 1
	expect_count out release held_lock 1
	expect_count out acquire free_lock 1
	expect_count out release free_lock 1
	expect_count out create "" 1
	expect_count out join "" 1
	record out2 trylock 2
	expect_recorded out2 0
	expect_count out2 trylock_fail held_lock 3
}

t_trylock_sites() {
	need_jq
	try=$(marker_line "$SRC/trylock.c" "/* TRYLOCK LINE */") || exit
	timed=$(marker_line "$SRC/trylock.c" "/* TIMEDLOCK LINE */") || exit
	record out trylock 4
	expect_recorded out 0
	n=$(select_events out ".kind == \"trylock_fail\" and
		(.site // \"\" | test(\"(^|/)trylock[.]c:$try\$\"))" | grep -c .)
	expect_eq "$n" 4 "trylock failures at trylock.c:$try"
	n=$(select_events out ".kind == \"trylock_fail\" and
		(.site // \"\" | test(\"(^|/)trylock[.]c:$timed\$\"))" | grep -c .)
	expect_eq "$n" 1 "timedlock failures at trylock.c:$timed"
}

# A condition wait is a wait event plus a wake acquire of its mutex, so
# acquires = releases + waits; signals are unconditional in condvar.c.
t_condvar() {
	record out condvar
	expect_recorded out 0
	expect_count out release queue_lock 202
	expect_count out signal not_empty 100
	expect_count out signal not_full 100
	expect_count out broadcast not_empty 1
	expect_count out create "" 2
	expect_count out join "" 2
	acq=$(count_kind out acquire queue_lock) || exit
	w1=$(count_kind out wait not_empty) || exit
	w2=$(count_kind out wait not_full) || exit
	expect_eq "$acq" "$((202 + w1 + w2))" "acquires of queue_lock (202 + $w1 + $w2 waits)"
}

t_workqueue() {
	record out workqueue
	expect_recorded out 0
	expect_count out release queue_lock 137
	expect_count out signal work_ready 64
	expect_count out signal slot_free 64
	expect_count out broadcast work_ready 1
	expect_count out acquire result_lock 64
	expect_count out release result_lock 64
	expect_count out create "" 8
	expect_count out join "" 8
	acq=$(count_kind out acquire queue_lock) || exit
	w1=$(count_kind out wait work_ready) || exit
	w2=$(count_kind out wait slot_free) || exit
	expect_eq "$acq" "$((137 + w1 + w2))" "acquires of queue_lock (137 + $w1 + $w2 waits)"
}

t_barrier() {
	need_jq
	record out barrier
	expect_recorded out 0
	expect_count out barrier round_barrier 12
	expect_count out create "" 4
	per=$(select_events out '.kind == "barrier"' | jq -r .thread | sort | uniq -c |
		awk '{print $1}' | sort -u | tr '\n' ' ') || exit
	expect_eq "$per" "3 " "barrier events per thread"
	record out2 barrier 2 5
	expect_recorded out2 0
	expect_count out2 barrier round_barrier 10
}

t_sem() {
	need_jq
	record out sem
	expect_recorded out 0
	expect_count out sem_post ping_sem 10
	expect_count out sem_wait ping_sem 10
	expect_count out sem_post pong_sem 10
	expect_count out sem_wait pong_sem 10
	# Round i: ping post < ping wait < pong post < pong wait < ping post i+1.
	ok=$(jq -s '
		def seqs(k; o): [.[] | select(.kind == k and .obj_name == o) | .seq];
		seqs("sem_post"; "ping_sem") as $a | seqs("sem_wait"; "ping_sem") as $b
		| seqs("sem_post"; "pong_sem") as $c | seqs("sem_wait"; "pong_sem") as $d
		| [range(0; $a | length) | . as $i
		   | $a[$i] < $b[$i] and $b[$i] < $c[$i] and $c[$i] < $d[$i]
		     and ($i == 0 or $d[$i - 1] < $a[$i])] | all' out.json)
	expect_eq "$ok" true "ping-pong order of semaphore events"
}

t_c11threads() {
	need_jq
	record out c11threads
	expect_recorded out 0
	expect_count out acquire c11_lock 11
	expect_count out release c11_lock 10
	expect_count out wait c11_cond 1
	expect_count out signal c11_cond 1
	expect_count out create "" 3
	expect_count out join "" 3
	n=$(nthreads out) || exit
	expect_eq "$n" 4 "threads with events"
}

# ---- process life: crash, fork, exec

t_crash() {
	need_jq
	line=$(marker_line "$SRC/crash.c" "/* CRASH LINE */") || exit
	record out crash
	expect_recorded out 139
	expect_count out acquire crash_lock 10
	expect_count out release crash_lock 10
	expect_count out fatal_signal "" 1
	last=$(events out | tail -n 1) || exit
	expect_eq "$(field "$last" kind)" fatal_signal "kind of the last event"
	expect_eq "$(field "$last" signal)" SIGSEGV "signal of the last event"
	expect_eq "$(field "$last" thread)" T0 "thread of the fatal signal"
	expect_match "$(field "$last" site)" "(^|/)crash[.]c:$line\$" "site of the fatal signal"
	expect_eq "$(field "$last" func)" crash_here "function of the fatal signal"
}

t_forker() {
	record out forker
	expect_recorded out 0
	expect_match "$(cat out.stdout)" 'child=ok system=0 counter=10' "target's stdout"
	expect_count out acquire parent_lock 10
	expect_count out release parent_lock 10
	expect_count out create "" 2
	expect_count out join "" 2
	expect_count out acquire child_lock 0
	expect_count out release child_lock 0
}

t_execer() {
	need_jq
	record out execer
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^counter=10$' "stdout of the exec'd image"
	expect_count out acquire exec_lock 2
	expect_count out release exec_lock 2
	expect_count out acquire counter_lock 10
	expect_count out release counter_lock 10
	expect_count out create "" 2
	expect_count out join "" 2
	ok=$(jq -s '([.[] | select(.obj_name == "exec_lock") | .seq] | max)
		< ([.[] | select(.obj_name == "counter_lock") | .seq] | min)' out.json)
	expect_eq "$ok" true "first image's events before the second image's"
}

# ---- ad hoc synchronization must not hang the recorder

spinflag_test() {
	prog=$(target "$1") || exit
	timeout 45 "$AVTRACE" record -o out -- "$prog" >out.stdout 2>out.stderr
	REC_STATUS=$?
	[ "$REC_STATUS" != 124 ] || fail "avtrace record of $1 hung (killed after 45 s)"
	expect_recorded out 0
	expect_count out acquire flag_lock 1
	expect_count out release flag_lock 1
	expect_count out create "" 1
	expect_count out join "" 1
}

t_spinflag() {
	spinflag_test spinflag
}

t_spinflag_busy() {
	spinflag_test spinflag_busy
}

# ---- benchmark and bug targets: their natural (recorded) runs

t_benchmark_targets() {
	record out lockheavy 2000
	expect_recorded out 0
	expect_count out acquire heavy_lock 4000
	expect_count out release heavy_lock 4000
	record out2 compute 2
	expect_recorded out2 0
	expect_count out2 acquire result_lock 16
	expect_count out2 release result_lock 16
}

# The recorded runs of the bug targets take the benign order.
t_natural_runs_are_benign() {
	need_jq
	record out checkthenact
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^seen=42$' "checkthenact's stdout"
	n=$(select_events out '.kind == "acquire" and (.obj_name // "" | test("^shared([.]m)?$"))' |
		grep -c .)
	expect_eq "$n" 3 "acquires of shared.m"
	record out2 lockorder
	expect_recorded out2 0
	order=$(select_events out2 '.kind == "acquire"
		and (.obj_name == "lock_a" or .obj_name == "lock_b")' | jq -r .obj_name | tr '\n' ' ') || exit
	expect_eq "$order" "lock_a lock_b lock_b lock_a " "lockorder's acquisition order"
	[ -x "$EXAMPLES/bank" ] || fail "examples/bin/bank is not built (run make targets)"
	record out3 "$EXAMPLES/bank"
	expect_recorded out3 0
	expect_match "$(cat out3.stdout)" '^balance=175$' "bank's stdout"
}

# ---- bad input: exit 2, one line on stderr, no trace left behind

bad_input_test() {
	avt_timed 20 record -o out -- "$@" >stdout 2>stderr
	st=$?
	expect_eq "$st" 2 "exit status of avtrace record $* ($(head -n 1 stderr))"
	expect_one_line_error stderr
	expect_no_file out/trace.avt
}

t_missing_program() {
	bad_input_test ./no-such-program
}

t_not_executable() {
	cp "$(target mutex_counter)" prog || exit
	chmod a-x prog
	bad_input_test ./prog
}

t_not_elf() {
	printf 'touch ran\n' >prog
	chmod +x prog
	bad_input_test ./prog
	[ ! -e ran ] || fail "the script ran"
}

t_setuid() {
	cp /bin/true suid-true || exit
	chmod u+s suid-true
	[ -u suid-true ] || skip "cannot set the setuid bit here"
	bad_input_test ./suid-true
}

t_unwritable_outdir() {
	if [ "$(id -u)" = 0 ]; then
		# Root writes anywhere: make the parent a regular file instead.
		: >blocker
		outdir=blocker/out
	else
		mkdir ro && chmod 555 ro
		outdir=ro/out
	fi
	avt_timed 20 record -o "$outdir" -- /bin/sh -c 'touch ran' >stdout 2>stderr
	st=$?
	expect_eq "$st" 2 "exit status of avtrace record -o $outdir ($(head -n 1 stderr))"
	expect_one_line_error stderr
	expect_no_file "$outdir/trace.avt"
	expect_no_file ran
}

t_no_program() {
	avt record >stdout 2>stderr
	expect_eq "$?" 2 "exit status of avtrace record with no program"
	avt record -o out -- >stdout 2>stderr
	expect_eq "$?" 2 "exit status of avtrace record -o out --"
	expect_no_file out/trace.avt
}

t_existing_outdir() {
	record out mutex_counter 2 5
	expect_recorded out 0
	before=$(cat out/trace.avt out/meta.json | cksum)
	prog=$(target mutex_counter) || exit
	avt_timed 20 record -o out -- "$prog" 3 5 >stdout 2>stderr
	st=$?
	expect_eq "$st" 2 "exit status of avtrace record into an existing trace ($(head -n 1 stderr))"
	expect_one_line_error stderr
	expect_eq "$(cat out/trace.avt out/meta.json | cksum)" "$before" "checksum of the old trace"
	expect_count out acquire counter_lock 10
}

t_force() {
	record out mutex_counter 2 5
	expect_recorded out 0
	expect_count out acquire counter_lock 10
	prog=$(target mutex_counter) || exit
	rm -f out.json
	avt record -o out --force -- "$prog" 3 5 >stdout 2>stderr
	expect_eq "$?" 0 "exit status of avtrace record --force ($(head -n 1 stderr))"
	expect_count out acquire counter_lock 15
	expect_count out create "" 3
}

# avtrace killed with SIGKILL: the target dies with it (PTRACE_O_EXITKILL)
# and the trace is readable up to the last flush.  No access breakpoints:
# whether the counter's sites were disarmed (two events per round or
# four) depends on the schedule, and the count below must not.
t_sigkill_avtrace() {
	need_jq
	prog=$(target lockheavy) || exit
	"$AVTRACE" record -q --no-access -o out -- "$prog" 5000000 >/dev/null 2>&1 &
	rec=$!
	i=0
	while [ ! -s out/trace.avt ] || [ "$(stat -c %s out/trace.avt)" -lt 200000 ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "no trace written after 20 s"
		sleep 0.1
	done
	child=$(pgrep -P "$rec" | head -n 1)
	[ -n "$child" ] || fail "no traced child"
	kill -9 "$rec"
	wait "$rec" 2>/dev/null
	i=0
	while kill -0 "$child" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 50 ] || fail "the target outlived avtrace"
		sleep 0.1
	done
	n=$(avt dump -d out --json 2>err.txt | jq -r .kind | grep -c acquire)
	[ "$n" -gt 1000 ] || fail "only $n acquires readable"
	expect_no_file out/meta.json
}

# glibc reuses a joined thread's pthread_t for the next thread: each join
# is of the thread just created, after its exit (was: "join T1" each time,
# committed before the new thread exited).
t_join_of_reused_pthread_t() {
	need_jq
	record out join_reuse
	expect_recorded out 0
	local created joined
	created=$(select_events out '.kind == "create"' | jq -r .child | tr '\n' ' ') || exit
	joined=$(select_events out '.kind == "join"' | jq -r .child | tr '\n' ' ') || exit
	expect_eq "$created" "T1 T2 T3 T4 " "threads created"
	expect_eq "$joined" "$created" "threads joined, in order"
	# each join after its thread's exit
	local seq_exit seq_join t
	for t in T1 T2 T3 T4; do
		seq_exit=$(select_events out ".kind == \"exit\" and .thread == \"$t\"" | jq -r .seq) || exit
		seq_join=$(select_events out ".kind == \"join\" and .child == \"$t\"" | jq -r .seq) || exit
		[ "$seq_exit" -lt "$seq_join" ] || fail "join of $t (event $seq_join) before its exit (event $seq_exit)"
	done
}

# Schedule 0 (the recorded order) is built as the events are written, not
# read back from the trace: it must still be the trace's threads, run by
# run, for one process, for many threads, and for a process tree.
t_observed_schedule_is_the_trace() {
	local t d n=0
	for t in lockheavy many_threads tree_runner; do
		case $t in
		lockheavy) record "r_$t" "$t" 20000 4 ;;
		many_threads) record "r_$t" "$t" 300 50 ;;
		*) record "r_$t" "$t" "$(target mutex_counter)" "$(target mutex_counter)" ;;
		esac
		expect_eq "$REC_STATUS" 0 "recording of $t"
		for d in $(find "r_$t" -name trace.avt -printf '%h\n'); do
			avt dump -d "$d" >one.dump 2>&1 || fail "avtrace dump of $d failed"
			awk '$2 ~ /^T[0-9]+$/ { if ($2 == last) n++; else { if (n) print "run " last " " n; last = $2; n = 1 } }
			     END { if (n) print "run " last " " n; print "free" }' one.dump >want.sched
			grep -v '^#\|^avtrace-schedule' "$d/schedules/0000.sched" >got.sched
			cmp -s want.sched got.sched || fail "$d: schedule 0 is not the trace's order: $(diff want.sched got.sched | head -5)"
			[ "$(wc -l <want.sched)" -gt 2 ] && n=$((n + 1))
		done
	done
	# lockheavy, many_threads, tree_runner's two mutex_counter processes
	[ "$n" -ge 4 ] || fail "only $n recordings with several runs"
}
