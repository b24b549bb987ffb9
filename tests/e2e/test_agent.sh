# shellcheck shell=bash
# `avtrace record --agent` (docs/agent.md): the in-process agent gives the
# same trace as the ptrace path, event by event; its recordings replay; a
# SIGKILLed target or avtrace leaves a readable trace and no process.
# Run with tests/e2e/run.sh agent.

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

# record_both MODE PROG ARGS...: records PROG with and without --agent
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
	local opts="--no-auto-watch --slice 60000"
	REC_OPTS=$opts record p "$prog" "$@"
	expect_recorded p 0
	REC_OPTS="$opts --agent" record a "$prog" "$@"
	expect_recorded a 0
	expect_match "$(cat a.stderr)" '^avtrace: [0-9,]+ events through the in-process agent' "record --agent summary"
	n=$(jq .agent_events a/meta.json)
	[ "$n" -gt 0 ] || fail "no event came through the agent"
	expect_eq "$(jq .agent_events p/meta.json)" 0 "agent events without --agent"
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

t_agent_checkthenact_same() {
	record_both global checkthenact
}

t_agent_forker() {
	# forks: the child is untraced and must not write into the ring
	record_both perthread forker
	expect_count a acquire parent_lock 10
	expect_count a acquire child_lock 0
	expect_match "$(jq -r .forks_untraced a/meta.json)" '^[1-9]' "forks untraced"
}

t_agent_exec() {
	# the agent follows an exec (the memfd and LD_PRELOAD are inherited)
	record_both perthread execer
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
t_agent_sigkill_target() {
	need_jq
	local prog rec child i st marker=3000023
	prog=$(target lockheavy) || exit
	"$AVTRACE" record -o out --agent --no-auto-watch -- "$prog" "$marker" 2 >out.stdout 2>out.stderr &
	rec=$!
	i=0
	while [ ! -s out/trace.avt ] || [ "$(stat -c %s out/trace.avt)" -lt 300000 ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "no trace written after 30 s"
		sleep 0.1
	done
	child=$(pgrep -P "$rec" -x lockheavy | head -n 1)
	[ -n "$child" ] || fail "no traced child"
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
	local prog rec i marker=3000029
	prog=$(target lockheavy) || exit
	"$AVTRACE" record -q -o out --agent -- "$prog" "$marker" 2 >/dev/null 2>&1 &
	rec=$!
	i=0
	while [ ! -s out/trace.avt ] || [ "$(stat -c %s out/trace.avt)" -lt 300000 ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "no trace written after 30 s"
		sleep 0.1
	done
	kill -9 "$rec"
	wait "$rec" 2>/dev/null
	no_target_left "$marker"
	n=$(avt dump -d out --json 2>err.txt | jq -r .kind | grep -c acquire)
	[ "$n" -gt 1000 ] || fail "only $n acquires readable"
}

# no_target_left MARKER: no lockheavy with that argument runs any more.
no_target_left() {
	local i
	for i in $(seq 1 50); do
		pgrep -f -- "lockheavy $1" >/dev/null || return 0
		sleep 0.1
	done
	fail "processes left behind: $(pgrep -af -- "lockheavy $1" | head -n 3 | tr '\n' ';')"
}

t_agent_with_stacks_refused() {
	prog=$(target mutex_counter) || exit
	avt record -o out --agent --stacks -- "$prog" >out.stdout 2>out.stderr
	expect_eq "$?" 2 "exit status"
	expect_one_line_error out.stderr
	expect_no_file out/trace.avt
}

t_agent_missing_library() {
	prog=$(target mutex_counter) || exit
	AVTRACE_AGENT_LIB=/nonexistent/libavtrace-agent.so avt record -o out --agent -- "$prog" >out.stdout 2>out.stderr
	expect_eq "$?" 2 "exit status"
	expect_one_line_error out.stderr
	expect_match "$(cat out.stderr)" "agent library '/nonexistent/libavtrace-agent.so'" "error"
}
