# shellcheck shell=bash
# `avtrace record --agent` (docs/agent.md): the in-process agent gives the
# same trace as the ptrace path, event by event; its recordings replay; a
# SIGKILLed target or avtrace leaves a readable trace and no process.
# Run with tests/e2e/run.sh agent.  These tests are about the agent: the
# suite's ptrace-only pass (AVTRACE_AGENT=0, make e2e-ptrace) does not
# switch it off here.
unset AVTRACE_AGENT

# project DIR: one line per event, the fields both paths must agree on:
# symbolized, and the raw site (module + offset) when it is in the
# executable (module 0 in both; library module ids differ, the agent
# being one more module).
project() {
	events "$1" >/dev/null || exit
	avt dump -d "$1" --json --raw >"$1.raw" || fail "avtrace dump --raw -d $1 failed"
	jq -c -n --slurpfile s "$1.json" --slurpfile r "$1.raw" '[$s, $r] | transpose[]
		| .[0] as $e | (.[1].site // "" | if startswith("0+") then . else "lib" end) as $raw
		| [$e.seq, $e.thread, $e.tindex, $e.kind, $e.obj_name, $e.site, $e.func, $e.child, $e.flags, $raw]' ||
		fail "jq cannot parse the dumps of $1"
}

# record_pair OPTS PROG ARGS...: records PROG with OPTS and --no-agent
# into p/, with OPTS and --agent into a/; both must exit 0.
record_pair() {
	local opts=$1 prog=$2
	shift 2
	REC_OPTS="$opts --no-agent" record p "$prog" "$@"
	expect_recorded p 0
	REC_OPTS="$opts --agent" record a "$prog" "$@"
	expect_recorded a 0
}

# record_both MODE PROG ARGS...: records PROG with --no-agent and --agent
# into p/ and a/, with no automatic watchpoints (their budgets are global:
# the accesses a thread gets depend on the interleaving) and a slice long
# enough that no thread is preempted (the record policy is then
# deterministic), and compares:
#   global    every event in order
#   perthread each thread's events in order (for programs that sleep in
#             the kernel, fork's waitpid: when that is noticed is timing)
# The agent must have taken some of the events itself.
record_both() {
	need_jq
	local mode=$1 prog=$2 t
	shift 2
	record_pair "--no-auto-watch --slice 60000" "$prog" "$@"
	expect_match "$(cat a.stderr)" '^avtrace: [0-9,]+ events through the in-process agent' "record --agent summary"
	n=$(jq .agent_events a/meta.json)
	[ "$n" -gt 0 ] || fail "no event came through the agent"
	expect_eq "$(jq .agent_events p/meta.json)" 0 "agent events with --no-agent"
	project p >p.proj || exit
	project a >a.proj || exit
	if [ "$mode" = global ]; then
		cmp -s p.proj a.proj ||
			fail "the traces differ: $(diff p.proj a.proj | head -n 3 | tr '\n' ' ')"
	else
		[ "$(wc -l <p.proj)" = "$(wc -l <a.proj)" ] ||
			fail "$(wc -l <p.proj) events without the agent, $(wc -l <a.proj) with"
		for t in $(jq -r '.[1]' p.proj | sort -u); do
			jq -c --arg t "$t" 'select(.[1] == $t) | .[1:]' p.proj >"p.$t"
			jq -c --arg t "$t" 'select(.[1] == $t) | .[1:]' a.proj >"a.$t"
			cmp -s "p.$t" "a.$t" ||
				fail "$t's events differ: $(diff "p.$t" "a.$t" | head -n 3 | tr '\n' ' ')"
		done
	fi
	AGENT_EVENTS=$n
}

# access_both PROG ARGS...: records PROG with --no-agent and with the
# agent, access breakpoints on (the default), and compares every event in
# order and the disarm records; the agent takes the accesses of the sites
# long enough for a jump through its stubs (decode/stub.h).  An unnamed
# address on the stack differs by the environment's length (the agent's
# two variables): it compares as "stack".  Sets AGENT_EVENTS, STUBS.
access_both() {
	need_jq
	local prog=$1
	shift
	record_pair "-f --slice 60000 ${ACC_OPTS:-}" "$prog" "$@"
	expect_match "$(cat a.stderr)" '^avtrace: access breakpoints: [0-9]+ sites?, .*; [1-9][0-9]* taken in-process' "record --agent summary"
	expect_eq "$(jq .access_stubs p/meta.json)" 0 "in-process sites with --no-agent"
	project p | sed -E 's/"0x7fff[0-9a-f]+"/"stack"/g' >p.proj || exit
	project a | sed -E 's/"0x7fff[0-9a-f]+"/"stack"/g' >a.proj || exit
	cmp -s p.proj a.proj || fail "the traces differ: $(diff p.proj a.proj | head -n 3 | tr '\n' ' ')"
	avt dump -d p | grep '^# disarmed' >p.disarm
	avt dump -d a | grep '^# disarmed' >a.disarm
	cmp -s p.disarm a.disarm || fail "the disarms differ: $(diff p.disarm a.disarm | head -n 3 | tr '\n' ' ')"
	AGENT_EVENTS=$(jq .agent_events a/meta.json)
	STUBS=$(jq .access_stubs a/meta.json)
}

# Shared loads and stores (never disarmed): all in-process but those of
# short instructions, which keep their int3.
t_agent_access_same() {
	access_both acc_events 5000
	[ "$AGENT_EVENTS" -ge 9900 ] || fail "only $AGENT_EVENTS of 10,000 accesses in-process"
	[ "$STUBS" -gt 0 ] || fail "no site taken in-process"
	access_both acc_events_O2 5000
	[ "$AGENT_EVENTS" -ge 9900 ] || fail "-O2: only $AGENT_EVENTS of 10,000 accesses in-process"
}

# -O0's shared loads and stores through pointers are 2-4 bytes, too short
# for the jmp: each is displaced with the instructions after it (no site,
# no branch, nothing of the module jumping into them), so the agent takes
# them too.  The same events and disarms both ways, on ptrace the same
# covers; the deque's thief has a `jne` into what a cover would displace
# (refused) and still runs right.
t_agent_access_short_covered() {
	local p
	for p in acc_deque acc_treiber; do
		access_both "$p"
		local covers
		covers=$(jq .access_covers a/meta.json)
		[ "$covers" -ge 10 ] || fail "$p: $covers short sites covered"
		expect_eq "$(jq .access_covers p/meta.json)" "$covers" "$p: covers with --no-agent"
		[ "$STUBS" -ge 20 ] || fail "$p: only $STUBS sites taken in-process"
		# (19 of acc_deque's 30 access events, 19 of acc_treiber's 37: a
		# thread's accesses to its own frames, most of the in-process
		# ones before, are no events since issue 30's own-stack rule)
		[ "$AGENT_EVENTS" -ge 15 ] || fail "$p: only $AGENT_EVENTS events in-process"
	done
}

# A stripped program has no symbol for its functions: they come from its
# .eh_frame FDEs, so its short sites are covered as in the build with
# symbols (the same covers, the same events both ways, next to no ptrace
# stop: without the FDEs, about 4,000), its output is the native one, and
# `avtrace test` gives the unstripped build's verdict.
# limit: 120
t_agent_access_stripped_covered() {
	local covers stops
	access_both acc_locked_hot_stripped
	covers=$(jq .access_covers a/meta.json)
	expect_eq "$covers" "$(jq .access_covers p/meta.json)" "covers with --no-agent"
	REC_OPTS="-f --slice 60000 --agent" record u acc_locked_hot
	expect_recorded u 0
	expect_eq "$covers" "$(jq .access_covers u/meta.json)" "covers stripped and not"
	[ "$covers" -ge 6 ] || fail "only $covers short sites covered"
	stops=$(jq .ptrace_stops a/meta.json)
	[ "$stops" -le 200 ] || fail "$stops ptrace stops"
	expect_eq "$(cat a.stdout)" "$("$(target acc_locked_hot_stripped)")" "the program's output"
	TEST_LIMIT=40 run_test ts --explore 3 -- "$(target acc_locked_hot_stripped)"
	local st=$TEST_STATUS
	TEST_LIMIT=40 run_test tu --explore 3 -- "$(target acc_locked_hot)"
	expect_eq "$st" "$TEST_STATUS" "avtrace test's verdict, stripped and not"
	expect_eq "$st" 0 "avtrace test's verdict"
}

# The private budget: a site's hit that reaches it always stops at ptrace,
# where the site is disarmed after exactly as many hits as without the
# agent (here 10, and the default 256).
t_agent_access_budget() {
	ACC_OPTS="--access-budget 10" access_both acc_private
	[ "$(grep -c . a.disarm)" -gt 0 ] || fail "no site disarmed with --access-budget 10"
	expect_match "$(cat a.disarm)" 'after 10 hits' "the disarm records"
	access_both acc_private
	[ "$(grep -c . a.disarm)" -gt 0 ] || fail "no site disarmed at the default budget"
	[ "$AGENT_EVENTS" -gt 0 ] || fail "no access in-process"
}

# Objects on the stack (own-stack flags, names from the frame), atomics,
# a deque, the double-checked lock: the same events both ways.
t_agent_access_shapes_same() {
	local p
	for p in acc_stackobj_O2 acc_treiber_O2 acc_deque_O2 mem_dcl_plain acc_setters; do
		access_both "$p"
	done
}

# A recording whose accesses came through the agent replays through it
# (the run token covers them) with the same events as on ptrace alone.
# limit: 90
t_agent_access_replay_in_process() {
	need_jq
	record out acc_events 5000
	expect_recorded out 0
	avt_timed 60 replay -d out --schedule 0 --json >a.json 2>a.err
	expect_eq "$(jq -r .outcome a.json)" PASS "outcome through the agent ($(head -n 1 a.err))"
	[ "$(jq .agent_events a.json)" -ge 9900 ] ||
		fail "only $(jq .agent_events a.json) of 10,000 accesses in-process in the replay"
	replay_dump out 0 ra >ra.proj || exit
	avt_timed 60 replay -d out --schedule 0 --json --no-agent >p.json 2>p.err
	expect_eq "$(jq -r .outcome p.json)" PASS "outcome with --no-agent ($(head -n 1 p.err))"
	replay_dump out 0 rp >rp.proj || exit
	cmp -s rp.proj ra.proj || fail "the replays differ: $(diff rp.proj ra.proj | head -n 3 | tr '\n' ' ')"
}

# explore_both PROG ARGS...: records PROG (through the agent), explores
# it 12 runs with seed 7 through the agent and with --no-agent, and
# compares every run's schedule file (its order, its policy's choices and
# outcome in the comment) and the summary line.  (A failing run's
# directory holds timings: not compared.)  Sets IN_PROCESS (the
# runs' events the agent took).
explore_both() {
	local prog=$1
	shift
	rm -rf out a.runs p.runs
	record out "$prog" "$@"
	expect_recorded out 0
	avt_timed 120 explore -q -d out -n 12 -j 2 --seed 7 >a.txt 2>a.err
	cp -r out/explore/runs a.runs || fail "no runs of the exploration through the agent"
	avt_timed 120 explore -q -d out -n 12 -j 2 --seed 7 --no-agent >p.txt 2>p.err
	cp -r out/explore/runs p.runs || fail "no runs of the exploration with --no-agent"
	expect_eq "$(ls a.runs/*.sched | wc -l)" 12 "schedules of the runs"
	for f in a.runs/*.sched; do
		diff "$f" "p.runs/${f#a.runs/}" >runs.diff ||
			fail "run ${f#a.runs/} differs: $(head -n 4 runs.diff | tr '\n' ' ')"
	done
	expect_eq "$(grep 'runs in' a.txt | sed 's/ in .* s (.*runs\/s)//')" \
		"$(grep 'runs in' p.txt | sed 's/ in .* s (.*runs\/s)//')" "the summary through the agent"
	expect_no_match "$(cat p.txt)" 'in-process' "explore --no-agent's summary"
	IN_PROCESS=$(sed -n 's/^  \([0-9]*\) of the runs.*/\1/p' a.txt)
}

# SURW's events that need no decision run in-process (the run token,
# each checked against the recorded event the policy expects there): the
# same runs, decision for decision, as on ptrace alone.
# limit: 150
t_agent_explore_same() {
	explore_both lockheavy 3000 2
	[ "${IN_PROCESS:-0}" -gt 0 ] || fail "no event of the runs in-process: $(cat a.txt)"
	explore_both acc_deque
	expect_match "$(cat a.txt)" ' [1-9][0-9]* bug' "acc_deque's runs"
}

# Hand-over scripts (docs/agent.md): a walk another thread wins goes on
# in-process when that thread can wait for its turn in the agent (at a
# lock, an unlock or an access stub): the same runs as on ptrace, with
# hand-overs made in-process; two and three threads on one lock, and a
# lock-free stack whose threads wait at their access stubs.  lockheavy's
# second thread makes accesses its recording does not have (the sites
# were disarmed as private before it came to them): before an event no
# walk decides, those too are made in-process.
# limit: 150
t_agent_explore_handovers() {
	local args h x
	for args in "lockheavy 3000 2" "lockheavy 1000 3" "acc_treiber_O2"; do
		# shellcheck disable=SC2086
		explore_both $args
		h=$(sed -n 's/^  \([0-9]*\) hand-overs between threads in-process.*/\1/p' a.txt)
		[ "${h:-0}" -gt 0 ] || fail "no hand-over in-process on $args: $(cat a.txt)"
		expect_no_match "$(cat p.txt)" 'hand-overs' "explore --no-agent's summary on $args"
		if [ "$args" = "lockheavy 3000 2" ]; then
			x=$(sed -n 's/^  \([0-9]*\) accesses the recording does not have.*/\1/p' a.txt)
			[ "${x:-0}" -gt 0 ] || fail "no access the recording does not have in-process: $(cat a.txt)"
		fi
	done
}

# An exec with an empty environment: the new image has no agent, so its
# access sites keep their ptrace stops (a stub calling the old image's
# agent entry would lose them, or worse); the same accesses as without
# the agent.
t_agent_exec_without_agent() {
	local a p
	REC_OPTS="--agent" record a exec_noenv
	expect_recorded a 0
	REC_OPTS="--no-agent" record p exec_noenv
	expect_recorded p 0
	a=$(avt dump -d a | grep -c 'acc_events\.c')
	p=$(avt dump -d p | grep -c 'acc_events\.c')
	[ "$p" -ge 1000 ] || fail "only $p events of the second image without the agent"
	expect_eq "$a" "$p" "events of the second image (acc_events.c) through the agent"
	[ "$(jq .agent_events a/meta.json)" -gt 0 ] || fail "no event of the first image in-process"
}

# Signals sent to a thread that runs through in-process accesses, with a
# 1 ms slice (preempted anywhere, inside a stub too, and the signal then
# delivered there): the thread's sums, its floating point and the
# handler's count come out exact (the target checks them).  Where the
# signals land is timing; what is asserted holds wherever they land.
t_agent_access_signals() {
	REC_OPTS="--agent --slice 1 --access-budget 1000000000" record a acc_signals 200000
	expect_recorded a 0
	expect_match "$(cat a.stdout)" '^ok [0-9]+$' "acc_signals' own check"
	[ "$(jq .agent_events a/meta.json)" -ge 100000 ] || fail "few accesses in-process"
}

# lock_discipline DIR OBJ: in the global order, OBJ (a normal mutex) is
# acquired only when free and released only by its holder.
lock_discipline() {
	local bad
	events "$1" >/dev/null || exit
	bad=$(jq -rs --arg o "$2" '
		reduce (.[] | select(.obj_name == $o and (.kind == "acquire" or .kind == "release"))) as $e
			({holder: null, bad: []};
			 if $e.kind == "acquire" then
				(if .holder == null then . else .bad += [$e.seq] end) | .holder = $e.thread
			 else
				(if .holder == $e.thread then . else .bad += [$e.seq] end) | .holder = null
			 end)
		| .bad[:3] | map(tostring) | join(",")' "$1.json") || fail "jq failed on $1"
	expect_eq "$bad" "" "events of $2 that break mutual exclusion (seq)"
}

t_agent_lockheavy_same() {
	record_both global lockheavy 3000 2
	# all but the slow paths (a lock held by a stopped thread)
	[ "$AGENT_EVENTS" -ge 11000 ] || fail "only $AGENT_EVENTS of 12,000 lock events in-process"
	lock_discipline a heavy_lock
}

# With a 1 ms slice the threads are preempted often, inside the agent's
# fast path too (put off until it is out): the locks still alternate
# correctly and every thread has all its events, in its order.
# The recording takes 0.2 s; the checks (a 29 MB dump read by five jq
# passes) about 13 s of cpu, over 60 s of wall at load 10 on 2 cpus, on
# main as with the heap's calls in-process (issue 30).
# limit: 240
t_agent_lockheavy_sliced() {
	need_jq
	REC_OPTS="--no-auto-watch --agent --slice 1" record a lockheavy 50000 2
	expect_recorded a 0
	lock_discipline a heavy_lock
	expect_count a acquire heavy_lock 100000
	expect_count a release heavy_lock 100000
	for t in T1 T2; do
		ok=$(jq -s --arg t "$t" '[.[] | select(.thread == $t and .obj_name == "heavy_lock") | .kind]
			| . == ([range(50000)] | map("acquire", "release"))' a.json)
		expect_eq "$ok" true "$t: 50,000 acquire/release pairs in order"
	done
	[ "$(jq .agent_events a/meta.json)" -ge 90000 ] || fail "few events through the agent"
}

t_agent_mutex_counter_same() {
	record_both global mutex_counter 4 25
	expect_count a acquire counter_lock 100
}

t_agent_trylock_same() {
	# failing trylocks and a timed lock (stays on ptrace) in one thread
	record_both global trylock 5
	expect_count a trylock_fail held_lock 6
	expect_count a acquire free_lock 1
}

# rwlocks (readers side by side, writers alone) and spinlocks through the
# agent: the same trace, and the agent took most of them.
t_agent_rwlock_same() {
	record_both global rwlock 3 2 20
	[ "$AGENT_EVENTS" -ge 150 ] || fail "only $AGENT_EVENTS rwlock events in-process"
	expect_count a rd_acquire table_lock 60
	expect_count a wr_acquire table_lock 40
}

t_agent_spin_same() {
	record_both global spin 2 100
	[ "$AGENT_EVENTS" -ge 300 ] || fail "only $AGENT_EVENTS spinlock events in-process"
}

# Contended: with a 1 ms slice threads are preempted holding the lock, and
# the others' fast paths fail over to the ptrace hook (the slow path, a
# jump to libc's own function): mutual exclusion holds in the trace, and
# the program's own count is right.
t_agent_rwlock_spin_contended() {
	REC_OPTS="--no-auto-watch --agent --slice 1" record r rwlock 4 4 3000
	expect_recorded r 0
	expect_match "$(cat r.stdout)" 'torn=0' "rwlock's output"
	[ "$(jq .agent_events r/meta.json)" -gt 1000 ] || fail "few rwlock events through the agent"
	REC_OPTS="--no-auto-watch --agent --slice 1" record s spin 4 20000
	expect_recorded s 0
	expect_match "$(cat s.stdout)" 'spin_counter=80000' "spin's output"
	[ "$(jq .agent_events s/meta.json)" -gt 10000 ] || fail "few spinlock events through the agent"
}

# Each kind of lock held across a sleep while another thread asks for it:
# that thread's fast path finds it taken and jumps to libc's function,
# where the ptrace hook blocks it in the model (the slow path).  The same
# events per thread as on ptrace, locks exclusive, the count right.
t_agent_held_locks_slow_path() {
	need_jq
	local lk total
	record_both perthread held_across 3
	expect_match "$(cat a.stdout)" '^held_count=21$' "held_across's output"
	total=$(jq -s '[.[] | select(.kind | test("acquire|release|trylock"))] | length' a.json)
	[ "$AGENT_EVENTS" -lt "$total" ] || fail "no lock event took the slow path ($AGENT_EVENTS of $total in-process)"
	[ "$AGENT_EVENTS" -ge 30 ] || fail "only $AGENT_EVENTS lock events in-process"
	for lk in held_mutex held_spin; do
		lock_discipline a "$lk"
	done
}

# Condition variables: signal and broadcast in-process (the model wakes
# the waiters when the record is drained); waits stay on ptrace.
t_agent_condvar_same() {
	record_both global condvar
	expect_count a signal "" 200
	[ "$AGENT_EVENTS" -ge 600 ] || fail "only $AGENT_EVENTS events in-process (signals included: 600)"
}

t_agent_workqueue_same() {
	record_both global workqueue 4 32
	expect_match "$(cat a.stdout)" . "workqueue's output"
	[ "$(count_kind a broadcast)" -ge 1 ] || fail "no broadcast recorded"
}

# A replay through the agent that puts the condition variable's waits and
# signals in another order than the recording: the same as on ptrace.
# limit: 90
t_agent_condvar_replay_reordered() {
	need_jq
	REC_OPTS="--no-access" record out condvar 8
	expect_recorded out 0
	# the consumer starts right after main, before the producer (as in
	# test_replay.sh's t_condvar_observed_and_reordered)
	awk '/^run T2 / && !done { n = $3 - 1; if (n) print "run T2 " n; done = 1; next }
	     { print } /^run T0 3$/ && !ins { print "run T2 1"; ins = 1 }' \
		out/schedules/0000.sched >out/schedules/0001.sched
	avt_timed 60 replay -d out --schedule 1 --json --no-agent >p.json 2>/dev/null
	replay_dump out 1 rp >rp.proj || exit
	avt_timed 60 replay -d out --schedule 1 --json >a.json 2>/dev/null
	replay_dump out 1 ra >ra.proj || exit
	expect_eq "$(jq -r .outcome a.json)" "$(jq -r .outcome p.json)" "outcome through the agent"
	expect_eq "$(jq -r .outcome a.json)" PASS "outcome"
	[ "$(jq .agent_events a.json)" -gt 0 ] || fail "no replay event through the agent"
	cmp -s rp.proj ra.proj || fail "the replays differ: $(diff rp.proj ra.proj | head -n 3 | tr '\n' ' ')"
}

t_agent_checkthenact_same() {
	record_both global checkthenact
}

t_agent_forker() {
	# forks: the child is followed lightly (issue 28) and must not write
	# into the ring; one-threaded, it gets no recording of its own
	record_both perthread forker
	expect_count a acquire parent_lock 10
	expect_count a acquire child_lock 0
	expect_match "$(jq '.processes | length' a/tree.json)" '^[2-9]' "processes in the tree"
	expect_eq "$(jq '[.processes[] | select(.recording != null and .recording != ".")] | length' a/tree.json)" 0 "process recordings"
}

t_agent_exec() {
	# the agent follows an exec (the memfd and LD_PRELOAD are inherited)
	record_both perthread execer
}

# Thread creation and join in-process (docs/agent.md, "Threads"): the
# same events as on ptrace, every one in order; a thread costs only the
# kernel's stops (its clone, exit event and end: 3; 7 when the create and
# join entries, and ld.so's TLS lock at each creation, stopped); the
# recording replays, its joins waiting for their threads' exits.
# limit: 240
t_agent_threads_in_process() {
	local threads stops
	record_both global many_threads 300 30
	threads=$(jq .threads a/meta.json)
	stops=$(jq .ptrace_stops a/meta.json)
	expect_eq "$threads" 301 "threads recorded"
	[ "$((stops / threads))" -le 3 ] || fail "$stops ptrace stops for $threads threads: $((stops / threads)) a thread, at most 3"
	replay a --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of the replay"
	expect_match "$(cat a.replay)" '^PASS' "outcome of the replay"
	expect_eq "$(avt dump -d a/replays/0000.avt --raw | awk '{ $1 = ""; print }')" \
		"$(avt dump -d a --raw | awk '{ $1 = ""; print }')" "the replay's events"
}

# A recording made with the agent replays (replay uses ptrace only; the
# recorded environment preloads the agent, which stays passive there).
t_agent_replay() {
	REC_OPTS="--agent" record out lockheavy 2000 2
	expect_recorded out 0
	expect_match "$(jq -r '.env[]' out/meta.json | grep '^LD_PRELOAD=')" 'libavtrace-agent\.so' "recorded LD_PRELOAD"
	replay out --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of replay"
	expect_match "$(cat out.replay)" 'PASS' "replay verdict"
}

# The target SIGKILLed in the middle of an agent recording: everything
# the agent committed is drained; the trace is whole and consistent.
# The marker is lockheavy's iteration count: 400 million pairs, about a
# minute and a half through the agent, so the target is still running when
# the trace passes 300 KB (with 3 million it ended within 0.7 s, and on a
# loaded machine the trace was first seen at 300 KB after its end: "no
# traced child").  (The dump and jq over a few MB of trace take most of
# the test: over the default 60 s under load.)
# limit: 150
t_agent_sigkill_target() {
	need_jq
	local prog rec child i st marker=400000023
	prog=$(target lockheavy) || exit
	"$AVTRACE" record -o out --agent --no-auto-watch -- "$prog" "$marker" 2 >out.stdout 2>out.stderr &
	rec=$!
	wait_trace_size out 300000 "$rec"
	child=$(pgrep -P "$rec" -x lockheavy | head -n 1)
	[ -n "$child" ] || fail "no traced child: $(tail -n 3 out.stderr | tr '\n' ' ')"
	kill -9 "$child"
	wait "$rec"
	st=$?
	sed 's/^/  | /' out.stderr >&3
	expect_eq "$st" 137 "record's status (the target's SIGKILL)"
	no_target_left "$marker"
	events out >/dev/null || exit
	n=$(jq -s 'length' out.json)
	expect_eq "$n" "$(jq .events out/meta.json)" "events in the dump and in meta.json"
	[ "$(jq .agent_events out/meta.json)" -gt 10000 ] || fail "few events through the agent"
	ok=$(jq -s 'map(.seq) == [range(0; length)]' out.json)
	expect_eq "$ok" true "seq numbers 0..N-1"
	lock_discipline out heavy_lock
}

# avtrace itself SIGKILLed: the target dies with it, the trace is readable.
t_agent_sigkill_avtrace() {
	need_jq
	local prog rec st marker=400000029
	prog=$(target lockheavy) || exit
	"$AVTRACE" record -q -o out --agent -- "$prog" "$marker" 2 >/dev/null 2>&1 &
	rec=$!
	wait_trace_size out 300000 "$rec"
	kill -9 "$rec"
	wait "$rec" 2>/dev/null
	st=$?
	expect_eq "$st" 137 "avtrace's status (killed while recording)"
	no_target_left "$marker"
	n=$(avt dump -d out --json 2>err.txt | jq -r .kind | grep -c acquire)
	[ "$n" -gt 1000 ] || fail "only $n acquires readable"
}

# no_target_left MARKER: no process with that argument (a word of its
# command line) runs any more.
no_target_left() {
	local i
	for i in $(seq 1 50); do
		pgrep -f -- " $1( |\$)" >/dev/null || return 0
		sleep 0.1
	done
	fail "processes left behind: $(pgrep -af -- " $1( |\$)" | head -n 3 | tr '\n' ';')"
}

# wait_trace_size DIR BYTES PID: waits until DIR/trace.avt holds BYTES or
# more; fails when PID (the recording) ends first or after 30 s.
wait_trace_size() {
	local i=0
	while [ ! -s "$1/trace.avt" ] || [ "$(stat -c %s "$1/trace.avt")" -lt "$2" ]; do
		kill -0 "$3" 2>/dev/null || fail "the recording ended before its trace held $2 bytes"
		i=$((i + 1))
		[ $i -lt 3000 ] || fail "no $2 bytes of trace after 30 s"
		sleep 0.01
	done
}

# With --stacks (a call stack is walked at a ptrace stop) the agent is
# preloaded but passive: the recording is the ptrace path's, event by
# event and stack by stack; its replays run through the agent.
# limit: 90
t_agent_with_stacks_passive() {
	need_jq
	REC_OPTS="--no-auto-watch --slice 60000 --stacks --no-agent" record p lockheavy 2000 2
	expect_recorded p 0
	REC_OPTS="--no-auto-watch --slice 60000 --stacks --agent" record a lockheavy 2000 2
	expect_recorded a 0
	expect_eq "$(jq .agent_events a/meta.json)" 0 "agent events with --stacks"
	expect_match "$(jq -r .agent a/meta.json)" 'libavtrace-agent\.so$' "meta.json's agent"
	project p >p.proj || exit
	project a >a.proj || exit
	cmp -s p.proj a.proj || fail "the traces differ: $(diff p.proj a.proj | head -n 3 | tr '\n' ' ')"
	avt dump -d p >p.stacks 2>&1 || fail "dump p: $(head -n 1 p.stacks)"
	avt dump -d a >a.stacks 2>&1 || fail "dump a: $(head -n 1 a.stacks)"
	[ "$(grep -c . p.stacks)" -gt 8000 ] || fail "few stack lines: $(grep -c . p.stacks)"
	cmp -s p.stacks a.stacks || fail "the stacks differ: $(diff p.stacks a.stacks | head -n 3 | tr '\n' ' ')"
	avt_timed 60 replay -d a --schedule 0 --json >r.json 2>r.err
	expect_eq "$(jq -r .outcome r.json)" PASS "replay's outcome ($(head -n 1 r.err))"
	[ "$(jq .agent_events r.json)" -ge 7000 ] || fail "only $(jq .agent_events r.json) replay events in-process"
}

t_agent_missing_library() {
	prog=$(target mutex_counter) || exit
	AVTRACE_AGENT_LIB=/nonexistent/libavtrace-agent.so avt record -o out --agent -- "$prog" >out.stdout 2>out.stderr
	expect_eq "$?" 2 "exit status"
	expect_one_line_error out.stderr
	expect_match "$(cat out.stderr)" "agent library '/nonexistent/libavtrace-agent.so'" "error"
}

# The agent is the default for record (not with --stacks); --no-agent and
# AVTRACE_AGENT=0 keep the ptrace path alone, as does --stacks.
t_agent_is_default() {
	need_jq
	local prog
	prog=$(target mutex_counter) || exit
	avt record -q -o d -- "$prog" 4 25 >/dev/null 2>d.err || fail "record: $(head -n 1 d.err)"
	[ "$(jq .agent_events d/meta.json)" -gt 0 ] || fail "no event through the agent by default"
	expect_match "$(jq -r .agent d/meta.json)" 'libavtrace-agent\.so$' "meta.json's agent"
	avt record -q -o n --no-agent -- "$prog" 4 25 >/dev/null 2>n.err || fail "record --no-agent: $(head -n 1 n.err)"
	expect_eq "$(jq .agent_events n/meta.json)" 0 "agent events with --no-agent"
	expect_eq "$(jq .agent n/meta.json)" false "meta.json's agent with --no-agent"
	AVTRACE_AGENT=0 avt record -q -o e -- "$prog" 4 25 >/dev/null 2>e.err || fail "record: $(head -n 1 e.err)"
	expect_eq "$(jq .agent_events e/meta.json)" 0 "agent events with AVTRACE_AGENT=0"
	AVTRACE_AGENT=0 avt record -q -o f --agent -- "$prog" 4 25 >/dev/null 2>f.err || fail "record: $(head -n 1 f.err)"
	[ "$(jq .agent_events f/meta.json)" -gt 0 ] || fail "--agent beats AVTRACE_AGENT=0"
	avt record -q -o s --stacks -- "$prog" 4 25 >/dev/null 2>s.err || fail "record --stacks: $(head -n 1 s.err)"
	expect_eq "$(jq .agent_events s/meta.json)" 0 "agent events with --stacks (passive)"
}

# replay_dump DIR N OUT: the events replay N of DIR ran, projected as by
# project (DIR/replays/NNNN.avt read with the recording's meta.json).
replay_dump() {
	local d=$1 n r
	n=$(printf %04d "$2")
	r=$3
	mkdir -p "$r" && cp "$d/meta.json" "$r/" && cp "$d/replays/$n.avt" "$r/trace.avt" ||
		fail "cannot copy replay $2 of $d"
	project "$r"
}

# A recording made with the agent replays through it: the thread a step
# names runs the step's events in-process (the run token), and stops at
# the step's end.  The same run as on ptrace alone, event by event.
# limit: 150
t_agent_replay_in_process() {
	need_jq
	local prog
	REC_OPTS="--no-auto-watch" record out lockheavy 3000 2
	expect_recorded out 0
	avt_timed 60 replay -d out --schedule 0 --json >a.json 2>a.err
	expect_eq "$?" 0 "exit status of the replay through the agent ($(head -n 1 a.err))"
	expect_eq "$(jq -r .outcome a.json)" PASS "outcome through the agent"
	[ "$(jq .agent_events a.json)" -ge 11000 ] ||
		fail "only $(jq .agent_events a.json) of 12,000 lock events in-process in the replay"
	replay_dump out 0 ra >ra.proj || exit
	avt_timed 120 replay -d out --schedule 0 --json --no-agent >p.json 2>p.err
	expect_eq "$?" 0 "exit status of the replay with --no-agent ($(head -n 1 p.err))"
	expect_eq "$(jq -r .outcome p.json)" PASS "outcome with --no-agent"
	expect_eq "$(jq .agent_events p.json)" 0 "agent events with --no-agent"
	replay_dump out 0 rp >rp.proj || exit
	expect_eq "$(wc -l <ra.proj)" 12010 "events of the replay"
	cmp -s rp.proj ra.proj || fail "the replays differ: $(diff rp.proj ra.proj | head -n 3 | tr '\n' ' ')"
}

# Schedules that interleave the threads' critical sections, that end in
# a failure, or that the program cannot follow: the same outcome, the
# same events, the same divergence through the agent as on ptrace.
# limit: 90
t_agent_replay_schedules_same() {
	need_jq
	local s i want got
	REC_OPTS="--no-access" record out checkthenact
	expect_recorded out 0
	[ "$(jq .agent_events out/meta.json)" -gt 0 ] || fail "no event through the agent"
	i=1
	for s in checkthenact_bug checkthenact_diverge checkthenact_held; do
		cp "$REPO/tests/e2e/schedules/$s.sched" "out/schedules/000$i.sched" || fail "cannot install $s"
		avt_timed 60 replay -d out --schedule $i --json --no-agent >p$i.json 2>/dev/null
		replay_dump out $i rp$i >rp$i.proj || exit
		avt_timed 60 replay -d out --schedule $i --json >a$i.json 2>/dev/null
		replay_dump out $i ra$i >ra$i.proj || exit
		want=$(jq -c '[.outcome, .reason, .step, .expected, .actual, .signal]' p$i.json)
		got=$(jq -c '[.outcome, .reason, .step, .expected, .actual, .signal]' a$i.json)
		expect_eq "$got" "$want" "$s through the agent"
		cmp -s rp$i.proj ra$i.proj ||
			fail "$s: the replays differ: $(diff rp$i.proj ra$i.proj | head -n 3 | tr '\n' ' ')"
		i=$((i + 1))
	done
	expect_eq "$(jq -r .outcome p1.json)" BUG "checkthenact_bug's outcome"
	expect_eq "$(jq -r .outcome p2.json)" INFEASIBLE "checkthenact_diverge's outcome"
	[ "$(jq '[.agent_events] | add' a1.json a2.json a3.json | jq -s add)" -gt 0 ] ||
		fail "no replay event through the agent"
}

# kill_at WHO I: records sigkill_at through the agent; it SIGKILLs WHO
# (self: the target, parent: avtrace) after a number of lock/unlock pairs
# drawn from I (the same for the same I, 1 to 20,000).  Nothing may be
# left running or stopped, and the trace must read up to its last event:
# seq numbers 0..N-1, mutual exclusion of the lock.  When the target
# killed itself, avtrace wrote meta.json too, with the same count, and
# every acquire committed before the kill is in the trace.
kill_at() {
	local who=$1 i=$2 marker n st acq
	marker=$((3100000 + i))
	RANDOM=$i
	n=$((1 + (RANDOM * 2) % 20000))
	timeout 120 "$AVTRACE" record -q -o "k$i" --no-auto-watch -- "$PROG" "$who" "$n" "$marker" \
		>/dev/null 2>"k$i.err"
	st=$?
	if [ "$who" = self ]; then
		expect_eq "$st" 137 "kill $i after $n pairs: record's status ($(head -n 1 "k$i.err"))"
	else
		expect_eq "$st" 137 "kill $i after $n pairs: avtrace killed"
	fi
	no_target_left "$marker"
	avt dump -d "k$i" --json >"k$i.json" 2>"k$i.derr" ||
		fail "kill $i after $n pairs: dump failed: $(head -n 1 "k$i.derr")"
	expect_eq "$(jq -s 'map(.seq) == [range(0; length)]' "k$i.json")" true "kill $i: seq numbers 0..N-1"
	lock_discipline "k$i" kill_lock
	[ "$who" = self ] || return 0
	expect_eq "$(jq .events "k$i/meta.json")" "$(jq -s length "k$i.json")" "kill $i: events in meta.json"
	acq=$(jq -s '[.[] | select(.kind == "acquire")] | length' "k$i.json")
	[ "$acq" -ge "$n" ] || fail "kill $i: $acq acquires in the trace, $n committed"
	[ "$(jq .agent_events "k$i/meta.json")" -gt 0 ] || fail "kill $i: no event through the agent"
}

# kill_20 WHO: kill_at WHO at twenty points.
kill_20() {
	need_jq
	PROG=$(target sigkill_at) || exit
	local i
	for i in $(seq 1 20); do
		kill_at "$1" "$i"
		rm -rf "k$i" "k$i".*
	done
}

# Twenty SIGKILLs of the target, at twenty points of the recording (a
# record, a dump and four jq passes over up to 40,000 events each: about
# 3 s a point on a loaded 2-core machine, over the default 60 s).
# limit: 240
t_agent_sigkill_target_20() {
	kill_20 self
}

# Twenty SIGKILLs of avtrace: the target dies with it (PR_SET_PDEATHSIG),
# nothing is left stopped, the trace reads up to its last event.
# limit: 240
t_agent_sigkill_avtrace_20() {
	kill_20 parent
}

# GLib's GMutex in-process (docs/agent.md, "GMutex"): glib_contend's
# 4 threads x 2000 critical sections give the same events as on ptrace,
# every one in order, and stop at ptrace only where a decision is made
# (thread 0's g_thread_yield in every 8th critical section, a lock found
# held, the threads' own stops): not at every g_mutex_lock and
# g_mutex_unlock (4 stops a critical section: entry and return of each,
# 32,000 and more).  Thread 0's yields are made holding the lock the
# three others wait for, so the record policy's pick at such a yield's
# stop could only resume it: 249 of its 250 yields (the first comes
# before the others wait) are taken in-process (docs/agent.md, "Yields
# in-process"); before, each was a stop (298 stops, now under 100).  The
# recording replays.
# limit: 240
t_agent_gmutex_in_process() {
	local stops
	[ -x "$TARGETS/glib_contend" ] || skip "no glib_contend: GLib's headers are missing (scripts/setup --test installs libglib2.0-dev)"
	record_both global glib_contend 2000
	expect_match "$(cat a.stdout)" '^count=8000$' "the count"
	[ "$(jq '[.[] | select(.[3] == "acquire" and .[4] == "count_lock")] | length' -s a.proj)" = 8000 ] ||
		fail "not 8000 acquires of count_lock"
	stops=$(jq .ptrace_stops a/meta.json)
	[ "$stops" -lt 100 ] || fail "$stops ptrace stops for 8000 critical sections and 250 yields (under 100)"
	expect_eq "$(jq .agent_yields a/meta.json)" 249 "yields taken in-process"
	[ "$AGENT_EVENTS" -ge 16000 ] || fail "$AGENT_EVENTS events through the agent, not 16000"
	replay a --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of the replay"
	expect_match "$(cat a.replay)" '^PASS' "outcome of the replay"
}

# GLib loaded late: dl_glib is not linked with GLib and dlopen()s a
# plugin that is, long after the agent started.  GMutex still goes
# through the agent (it finds libglib's functions when first called,
# docs/agent.md "GMutex"): the same events as on ptrace, each of the 1,000
# critical sections in the trace, and no ptrace stop for them.
t_agent_gmutex_glib_loaded_late() {
	local stops
	[ -f "$TARGETS/libglibplug.so" ] || skip "no libglibplug.so: GLib's headers are missing (scripts/setup --test installs libglib2.0-dev)"
	record_both global dl_glib 500
	expect_match "$(cat a.stdout)" '^count=1000$' "the count"
	[ "$(jq '[.[] | select(.[3] == "acquire" and .[4] == "plug_lock")] | length' -s a.proj)" = 1000 ] ||
		fail "not 1000 acquires of plug_lock"
	stops=$(jq .ptrace_stops a/meta.json)
	[ "$stops" -lt 200 ] || fail "$stops ptrace stops for 1000 critical sections (under 200; $(jq .ptrace_stops p/meta.json) on ptrace alone)"
	[ "$AGENT_EVENTS" -ge 2000 ] || fail "$AGENT_EVENTS events through the agent, not 2000"
}

# A yield made while another thread can run stops at ptrace, as before
# (docs/agent.md, "Yields in-process"): the pick there gives the other
# its turn.  spin_barrier's workers yield until both have arrived: the
# same events as on ptrace, none of the yields in-process (one taken so
# would spin on until its 60 s slice: the test's timeout).
t_agent_yield_stops_when_others_run() {
	record_both global spin_barrier
	expect_eq "$(jq .agent_yields a/meta.json)" 0 "spin_barrier's yields taken in-process"
}

# The GLib programs of test_syncspec.sh: the same events with the agent
# (GMutex in-process, GCond and GRWLock on ptrace) as without it.
t_agent_gmutex_same() {
	local p
	for p in glib_bank_ok glib_cond_ok glib_rwlock_ok; do
		[ -x "$TARGETS/$p" ] || skip "no $p: GLib's headers are missing (scripts/setup --test installs libglib2.0-dev)"
		mkdir "$p" && (cd "$p" && record_both global "$p" 1000) || fail "$p: the traces differ"
	done
}

# Records are taken while the thread that made them runs on (the record
# sink's drain_running, at the tracer's tick): agent_drained waits, with
# no event and no stop, until avtrace has taken its 1,000 lock/unlock
# pairs from the ring.  With a 60 s slice nothing else stops it: drained
# at stops alone (before), it waited for the slice and ran into the
# timeout.  The events are still every one of them, in order.
t_agent_drained_while_running() {
	need_jq
	local prog
	prog=$(target agent_drained) || exit
	avt_timed 20 record -q -o a --agent --no-auto-watch --slice 60000 -- "$prog" 1000 >a.stdout 2>a.stderr
	expect_eq "$?" 0 "exit status of the record (a timeout: the ring was not drained while it ran)"
	expect_match "$(cat a.stdout)" '^drained 1000$' "the program's output"
	[ "$(jq .agent_drained_running a/meta.json)" -ge 2000 ] ||
		fail "$(jq .agent_drained_running a/meta.json) records taken while the program ran, not 2000"
	[ "$(avt dump -d a --json | jq -s '[.[] | select(.obj_name == "m")] | length')" = 2000 ] ||
		fail "not 2000 events on m"
}
