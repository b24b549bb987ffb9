# shellcheck shell=bash
# Issue 30: the heap's records through the in-process agent.  With the
# agent on (the default) malloc, calloc, realloc and free are recorded
# in-process (agent/avtrace_agent.c, avt_heap_fast) instead of stopping
# twice under ptrace; the recording must name heap objects exactly as the
# ptrace path (--no-agent) does.  Run with tests/e2e/run.sh heap30.
# The agent is the subject here: the ptrace-only pass does not switch it
# off.
unset AVTRACE_AGENT

# project DIR: one line per event with its heap names (obj_name).
project() {
	avt dump -d "$1" --json >"$1.json" || fail "avtrace dump -d $1 failed"
	jq -c '[.seq, .thread, .tindex, .kind, .obj_name, .site]' "$1.json" ||
		fail "jq cannot parse the dump of $1"
}

# heap30 (2 threads handing malloc'd blocks to each other, with calloc,
# realloc and free around them), recorded with the agent and with
# --no-agent, a slice long enough that no thread is preempted (the record
# policy is then deterministic): every event the same, the same heap#N
# names, the same number of blocks, and the agent made the heap's calls.
# limit: 120
t_heap30_same_records() {
	need_jq
	REC_OPTS="--slice 60000 --no-agent" record p heap30 200
	expect_recorded p 0
	REC_OPTS="--slice 60000 --agent" record a heap30 200
	expect_recorded a 0
	# 1 + 2 x 200 x (malloc, calloc, realloc): realloc's block is new
	expect_eq "$(jq .heap_blocks a/meta.json)" 1201 "heap_blocks with the agent"
	expect_eq "$(jq .heap_blocks p/meta.json)" "$(jq .heap_blocks a/meta.json)" "heap_blocks, ptrace and agent"
	expect_eq "$(jq .agent_heap_calls p/meta.json)" 0 "heap calls through the agent with --no-agent"
	# the workers' 2 x 200 x 5 calls but the first free(old) (of NULL:
	# no call, as free(NULL) is none), and main's 3; libc's own are not
	# the program's
	expect_eq "$(jq .agent_heap_calls a/meta.json)" 2002 "the program's heap calls through the agent"
	project p >p.proj || exit
	project a >a.proj || exit
	n=$(grep -c '"heap#[0-9]* ([0-9]* bytes, malloc at heap30[.]c:[0-9]* in worker)"' a.proj)
	[ "$n" -ge 400 ] || fail "only $n events on the workers' blocks named heap#N (malloc in worker)"
	expect_match "$(cat a.proj)" '"heap#1 [(]8 bytes, calloc at heap30[.]c:[0-9]+ in main[)]"' "main's block"
	cmp -s p.proj a.proj || fail "the traces differ: $(diff p.proj a.proj | head -n 3 | tr '\n' ' ')"
}

# A bug on a heap object (acc_deque: the owner's unlocked write to the
# deque it malloc'd) is still found, reproduced by a replay and named
# heap#N with the agent on, which made the heap's calls in-process.
# limit: 150
t_heap30_bug_named() {
	need_jq
	line=$(marker_line "$SRC/acc_deque.c" "/* OWNER WRITE LINE */") || exit
	REC_OPTS="--agent" record r acc_deque
	n=$(jq .agent_heap_calls r/meta.json)
	[ "$n" -gt 0 ] || fail "acc_deque: no heap call through the agent ($n)"
	run_test out --agent -- "$(target acc_deque)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test acc_deque"
	[ "$(reports out)" -ge 1 ] || fail "no report for acc_deque"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: exit status 1" "report of acc_deque"
	expect_match "$(grep -h '^  predicted:' out/reports/*.txt)" \
		"heap#[0-9]+ [(][^)]*[)].* at acc_deque[.]c:$line" "a prediction naming the heap object at acc_deque.c:$line"
}
