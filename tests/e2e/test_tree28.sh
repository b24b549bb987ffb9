# shellcheck shell=bash
# shellcheck disable=SC2016 # jq filters name jq's variables ($p, $r)
# Issue 28: `avtrace test -o OUT -- CMD`, with no other option, follows
# the whole process tree of CMD: a wrapper script that execs the program,
# runners that fork and exec (or posix_spawn) each test program, ctest,
# Check's CK_FORK mode, a parent forking workers without exec, a child
# racing after a fork.  The contract (DRAFT: written before the tracer's
# side has landed; every test below fails until it has):
#   - exit 1 when a bug was reproduced, 0 when none, 2 on tool errors
#   - each multithreaded process other than the root is recorded in
#     OUT/procs/NNNN/ (meta.json, trace.avt, its reports in reports/)
#   - OUT/tree.json: {"processes":[{"id","pid","parent","how" (root, exec,
#     fork or vfork),"argv","threads","recording" ("procs/NNNN" or
#     null)}, ...]}
#   - stdout names, for each reproduced bug, the process (its program),
#     the variable and the file:line of the racing access
#   - a file that cannot be executed: a one-line error, exit 2, no OUT.
# The targets are tests/targets/tree_*.c, tree_wrapper*.sh and
# cmake_proj/; each buggy one passes natively (checked with natively).
# limit: 300

# a correct program's tree runs `avtrace test`'s exploration (30 s a
# process by default): room for two of them and the predictions
TEST_LIMIT=240

# A tree with a correct multithreaded process in it is tested with
# TREE_OPTS=$OK_EXPLORE: 200 explored runs of each correct process, by
# count, instead of the default "30 s, but at least 100 runs" (the same
# guaranteed runs, without waiting out the rest of the 30 s).  A bug found
# by the predictions ends a process's testing either way.  The trees of
# buggy processes only (wrapper_bug, check_fork_bug, forkrace_bug,
# sh_c_bug) keep the contract's "no other option".
OK_EXPLORE="--explore 200"

# tree_test OUT CMD [ARGS...]: avtrace test -o OUT -- CMD ARGS, with no
# other option but $TREE_OPTS (unset: none); stdout in OUT.stdout, stderr
# in OUT.stderr, the exit status in TEST_STATUS.
TEST_STATUS=
tree_test() {
	local out=$1
	shift
	# shellcheck disable=SC2086 # TREE_OPTS: options, split
	avt_timed "$TEST_LIMIT" test ${TREE_OPTS:-} -o "$out" -- "$@" >"$out.stdout" 2>"$out.stderr"
	TEST_STATUS=$?
	{
		echo "  exit status $TEST_STATUS; stdout:"
		sed 's/^/  | /' "$out.stdout"
		echo "  stderr:"
		sed 's/^/  | /' "$out.stderr"
	} >&3
}

# all_reports OUT: the number of reports anywhere in OUT (the root's
# reports/ and every procs/NNNN/reports/).
all_reports() {
	find "$1" -path '*/reports/*.txt' 2>/dev/null | wc -l
}

# tree_jq OUT [JQ_OPTIONS...] FILTER: jq -r on OUT/tree.json.
tree_jq() {
	local out=$1
	shift
	need_jq
	[ -f "$out/tree.json" ] || fail "no $out/tree.json"
	jq -r "$@" "$out/tree.json" || fail "jq cannot read $out/tree.json (filter '${*: -1}')"
}

# recordings_of OUT PROG: the recordings (directories relative to OUT) of
# the multithreaded processes whose argv[0] is PROG (its basename), in
# the order of their ids, one a line; each must be a recording.
recordings_of() {
	local r recs
	recs=$(tree_jq "$1" --arg p "$2" '[.processes[]
		| select(.threads > 1 and ((.argv[0] // "") | split("/") | last) == $p)]
		| sort_by(.id) | .[] | .recording // "(none)"') || exit
	for r in $recs; do
		{ [ -f "$1/$r/meta.json" ] && [ -f "$1/$r/trace.avt" ]; } ||
			fail "the recording '$r' of a multithreaded $2 in $1/tree.json has no meta.json and trace.avt"
	done
	printf '%s\n' "$recs"
}

# expect_recorded_procs OUT PROG N: exactly N multithreaded processes
# running PROG, each recorded.
expect_recorded_procs() {
	local recs
	recs=$(recordings_of "$1" "$2") || exit
	expect_eq "$(printf '%s' "$recs" | grep -c .)" "$3" "recorded multithreaded processes running $2"
}

# reports_in OUT REC: the number of reports of the recording OUT/REC.
reports_in() {
	find "$1/$2/reports" -name '*.txt' 2>/dev/null | wc -l
}

# expect_tree_bug OUT PROG VAR SRC MARKER...: the last tree_test
# reproduced a bug: exit 1, a report, and stdout names the process PROG
# (its program's name, not as part of another name nor of the source
# file's), the variable VAR (not in the program's own output: lines with
# 'VAR=' or an assertion's message are left out) and SRC:LINE for the
# line of one of the markers in tests/targets/SRC.
expect_tree_bug() {
	local out=$1 prog=$2 var=$3 src=$4 m n lines=
	shift 4
	for m in "$@"; do
		n=$(marker_line "$SRC/$src" "$m") || exit
		lines=${lines:+$lines|}$n
	done
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test ($(head -n 1 "$out.stderr"))"
	[ "$(all_reports "$out")" -ge 1 ] || fail "exit 1 but no report in $out"
	expect_match "$(cat "$out.stdout")" "(^|[^A-Za-z0-9_])$prog(\$|[^A-Za-z0-9_.]|[.](\$|[[:space:]]))" \
		"avtrace test's stdout (the process $prog)"
	expect_match "$(grep -v -e "$var=" -e 'Assertion' "$out.stdout")" "(^|[^A-Za-z0-9_])$var(\$|[^A-Za-z0-9_])" \
		"avtrace test's stdout (the variable $var)"
	expect_match "$(cat "$out.stdout")" "${src//./[.]}:($lines)(\$|[^0-9])" \
		"avtrace test's stdout (the racing access at $src:$lines)"
}

# expect_tree_ok OUT: the last tree_test found nothing: exit 0, no
# report, no BUG nor DEADLOCK on stdout.
expect_tree_ok() {
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test ($(head -n 1 "$1.stderr"))"
	expect_eq "$(all_reports "$1")" 0 "reports in $1"
	expect_no_match "$(cat "$1.stdout")" 'BUG|DEADLOCK' "avtrace test's stdout"
}

# ---- a wrapper script (#!/bin/sh) that execs the program, as libtool's do

t_tree_wrapper_bug() {
	natively tree_wrapper.sh 250
	tree_test out "$(target tree_wrapper.sh)" 250
	expect_tree_bug out tree_bank balance tree_bank.c "/* TREE BANK READ */" "/* TREE BANK WRITE */"
}

t_tree_wrapper_ok() {
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_wrapper_ok.sh)" 250
	expect_tree_ok out
	# the exec'd program was recorded (as the root: the wrapper execs it in
	# its own process; replays run the wrapper again): the recording's
	# executable is the program, its command the wrapper
	need_jq
	[ "$(find out -name trace.avt | wc -l)" -ge 1 ] || fail "no recording in out"
	expect_match "$(jq -r '.executable' out/meta.json)" '/tree_bank_ok$' "the recording's executable"
	expect_match "$(jq -r '.argv[0]' out/meta.json)" '/tree_wrapper_ok[.]sh$' "the recording's argv[0]"
	expect_match "$(jq -r '.threads' out/meta.json)" '^[3-9]' "the recording's threads"
}

# ---- runners: fork and execv, posix_spawn, ctest

t_tree_runner_bug() {
	local bank bank_ok rec
	bank=$(target tree_bank) || exit
	bank_ok=$(target tree_bank_ok) || exit
	natively tree_runner "$bank" "$bank_ok"
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_runner)" "$bank" "$bank_ok"
	expect_tree_bug out tree_bank balance tree_bank.c "/* TREE BANK READ */" "/* TREE BANK WRITE */"
	# the bug is tree_bank's, not the correct program's
	rec=$(recordings_of out tree_bank) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded tree_bank processes"
	[ "$(reports_in out "$rec")" -ge 1 ] || fail "no report in tree_bank's recording $rec"
	rec=$(recordings_of out tree_bank_ok) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded tree_bank_ok processes"
	expect_eq "$(reports_in out "$rec")" 0 "reports in tree_bank_ok's recording $rec"
}

t_tree_runner_ok() {
	local bank_ok
	bank_ok=$(target tree_bank_ok) || exit
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_runner)" "$bank_ok" "$bank_ok"
	expect_tree_ok out
	expect_recorded_procs out tree_bank_ok 2
}

# posix_spawn: glibc's is clone(CLONE_VM|CLONE_VFORK) and exec
t_tree_spawn_bug() {
	local bank bank_ok rec
	bank=$(target tree_bank) || exit
	bank_ok=$(target tree_bank_ok) || exit
	natively tree_spawn "$bank" "$bank_ok"
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_spawn)" "$bank" "$bank_ok"
	expect_tree_bug out tree_bank balance tree_bank.c "/* TREE BANK READ */" "/* TREE BANK WRITE */"
	rec=$(recordings_of out tree_bank) || exit
	[ "$(reports_in out "$rec")" -ge 1 ] || fail "no report in tree_bank's recording $rec"
	expect_recorded_procs out tree_bank_ok 1
}

# ctest runs the tests of tests/targets/cmake_proj (built by targets.mk
# when cmake is there): deposit_race (bank_test, tree_bank.c's bug) and
# deposit_locked (bank_ok_test)
t_tree_ctest_bug() {
	local here=$PWD rec
	command -v ctest >/dev/null 2>&1 || skip "ctest is not installed"
	[ -x "$TARGETS/cmake_proj/bank_test" ] || skip "tests/targets/bin/cmake_proj is not built (no cmake?)"
	cd "$TARGETS/cmake_proj" || fail "cannot cd to $TARGETS/cmake_proj"
	timeout 60 ctest --output-on-failure >"$here/native.out" 2>&1 ||
		fail "ctest fails natively: $(tail -n 3 "$here/native.out")"
	TREE_OPTS=$OK_EXPLORE tree_test "$here/out" ctest --output-on-failure
	cd "$here" || exit
	expect_tree_bug out bank_test balance tree_bank.c "/* TREE BANK READ */" "/* TREE BANK WRITE */"
	rec=$(recordings_of out bank_test) || exit
	[ "$(reports_in out "$rec")" -ge 1 ] || fail "no report in bank_test's recording $rec"
	rec=$(recordings_of out bank_ok_test) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded bank_ok_test processes"
	expect_eq "$(reports_in out "$rec")" 0 "reports in bank_ok_test's recording $rec"
}

# ---- forks without exec

# Check's default CK_FORK mode: each test in a forked child; test_tally's
# child (the only multithreaded one) has the bug
t_tree_check_fork_bug() {
	local rec
	natively_usually tree_check_fork
	tree_test out "$(target tree_check_fork)"
	expect_tree_bug out tree_check_fork shared_count tree_check_fork.c "/* CHECK READ */" "/* CHECK WRITE */"
	rec=$(recordings_of out tree_check_fork) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded multithreaded processes of the suite"
	[ "$(reports_in out "$rec")" -ge 1 ] || fail "no report in test_tally's child's recording $rec"
	expect_eq "$(tree_jq out --arg r "$rec" '.processes[] | select(.recording == $r) | .how')" fork \
		"how test_tally's process came"
}

t_tree_check_fork_ok() {
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_check_fork_ok)"
	expect_tree_ok out
	expect_recorded_procs out tree_check_fork_ok 1
}

# two forked workers at once, each multithreaded: the second has the bug
t_tree_forktwo_bug() {
	local recs first second
	natively_usually tree_forktwo
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_forktwo)"
	expect_tree_bug out tree_forktwo balance tree_forktwo.c "/* FORKTWO READ */" "/* FORKTWO WRITE */"
	recs=$(recordings_of out tree_forktwo) || exit
	expect_eq "$(printf '%s' "$recs" | grep -c .)" 2 "recorded children"
	first=$(printf '%s\n' "$recs" | sed -n 1p)
	second=$(printf '%s\n' "$recs" | sed -n 2p)
	expect_eq "$(reports_in out "$first")" 0 "reports of the first child ($first, correct)"
	[ "$(reports_in out "$second")" -ge 1 ] || fail "no report in the second child's recording $second"
	expect_eq "$(tree_jq out '[.processes[] | select(.threads > 1) | .how] | join(" ")')" "fork fork" \
		"how the children came"
}

t_tree_forktwo_ok() {
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_forktwo_ok)"
	expect_tree_ok out
	expect_recorded_procs out tree_forktwo_ok 2
}

# single-threaded work, one fork, the child races
t_tree_forkrace_bug() {
	local rec
	natively_usually tree_forkrace
	tree_test out "$(target tree_forkrace)"
	expect_tree_bug out tree_forkrace balance tree_forkrace.c "/* FORKRACE READ */" "/* FORKRACE WRITE */"
	rec=$(recordings_of out tree_forkrace) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded children"
	[ "$(reports_in out "$rec")" -ge 1 ] || fail "no report in the child's recording $rec"
}

t_tree_forkrace_ok() {
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_forkrace_ok)"
	expect_tree_ok out
	expect_recorded_procs out tree_forkrace_ok 1
}

# ---- tree.json

# tree_runner's tree: the root (single-threaded, not recorded) and the two
# programs it exec'd, with their argv, 3 threads each, each recorded.  A
# child's parent is the root's id (the pid is accepted too: the draft
# contract leaves it open); an entry for the forked child before its exec
# is allowed (single-threaded, how "fork"), none other.
t_tree_json() {
	local bank bank_ok root n p
	bank=$(target tree_bank) || exit
	bank_ok=$(target tree_bank_ok) || exit
	TREE_OPTS=$OK_EXPLORE tree_test out "$(target tree_runner)" "$bank" "$bank_ok"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test ($(head -n 1 out.stderr))"
	expect_eq "$(tree_jq out '.processes | map(select(.how == "root")) | length')" 1 "root entries"
	root=$(tree_jq out -c '.processes[] | select(.how == "root")
		| [.argv, .threads, .recording, .parent]') || exit
	# the root's recording is the output directory itself (".")
	expect_eq "$root" "[[\"$(target tree_runner)\",\"$bank\",\"$bank_ok\"],1,\".\",null]" \
		"the root's [argv, threads, recording, parent]"
	for p in "$bank" "$bank_ok"; do
		n=$(tree_jq out --arg p "$p" -c '(.processes[] | select(.how == "root")) as $r
			| [.processes[] | select(.how == "exec" and .argv == [$p]
				and (.parent == $r.id or .parent == $r.pid) and .threads == 3
				and (.recording | type) == "string")] | length') || exit
		expect_eq "$n" 1 "exec'd children of the root running [$p] with 3 threads and a recording"
	done
	expect_eq "$(tree_jq out '[.processes[] | select(.how == "exec")] | length')" 2 "exec entries"
	expect_eq "$(tree_jq out '[.processes[] | select(.how != "root" and .how != "exec"
		and (.how != "fork" or .threads != 1 or .recording != null))] | length')" 0 \
		"entries other than the root, the two exec'd programs and their forked children"
	expect_eq "$(tree_jq out '[.processes[].id] | unique | length')" \
		"$(tree_jq out '.processes | length')" "distinct ids"
	expect_eq "$(tree_jq out '[.processes[] | select((.pid | type) != "number" or .pid <= 0)] | length')" 0 \
		"entries without a pid"
	recordings_of out tree_bank >/dev/null || exit
	recordings_of out tree_bank_ok >/dev/null || exit
}

# ---- what cannot be executed: one line, exit 2, no OUT

t_tree_not_executable() {
	local f st
	cp "$(target tree_bank)" noxbit && chmod a-x noxbit
	printf 'echo hello\n' >noshebang && chmod a+x noshebang
	for f in noxbit noshebang; do
		avt_timed 30 test -o "out_$f" -- "./$f" >"$f.stdout" 2>"$f.stderr"
		st=$?
		sed 's/^/  | /' "$f.stderr" >&3
		expect_eq "$st" 2 "exit status of avtrace test on ./$f"
		expect_one_line_error "$f.stderr"
		expect_no_file "out_$f"
	done
}

# ---- the whole tree in --json and --sarif: one document, every process

t_tree_json_output() {
	local bank bank_ok
	bank=$(target tree_bank) || exit
	bank_ok=$(target tree_bank_ok) || exit
	need_jq
	# shellcheck disable=SC2086 # OK_EXPLORE: options, split
	avt_timed "$TEST_LIMIT" test $OK_EXPLORE --json --sarif out.sarif -o out -- "$(target tree_runner)" "$bank" "$bank_ok" \
		>out.json 2>out.stderr
	expect_eq "$?" 1 "exit status of avtrace test --json"
	jq -e . out.json >/dev/null || fail "stdout is not one JSON document: $(head -c 200 out.json)"
	expect_eq "$(jq '.exit_status' out.json)" 1 "the document's exit_status"
	expect_eq "$(jq '.processes | length' out.json)" 2 "processes in the document (the two exec'd programs)"
	# every bug is tree_bank's, named so, and counted in the top-level list
	[ "$(jq '.bugs | length' out.json)" -ge 1 ] || fail "no bug in the document"
	expect_eq "$(jq '[.bugs[] | select(.process | test("/tree_bank[ ,]"))] | length' out.json)" \
		"$(jq '.bugs | length' out.json)" "bugs named as tree_bank's"
	expect_eq "$(jq '[.processes[] | select(.process | test("tree_bank_ok")) | .bugs[]] | length' out.json)" 0 \
		"bugs of tree_bank_ok"
	# SARIF: one run per process, the bug's run named for its process
	expect_eq "$(jq '.runs | length' out.sarif)" 2 "SARIF runs"
	expect_eq "$(jq '[.runs[] | select(.automationDetails.id | test("/tree_bank[ ,]")) | .results[]] | length' out.sarif)" \
		"$(jq '.bugs | length' out.json)" "SARIF results of tree_bank's run"
}

# ---- SIGTERM with a child running: the tree is killed, the summary said
# (SIGINT is ignored by a background job of a script: TERM is what a CI
# runner sends)

t_tree_sigterm_with_child() {
	local pid i st
	# the child's argument tells it apart from any other sleep on the machine
	# avtrace itself in the background (avt would put a subshell between)
	echo "+ avtrace record -o out -- sh -c 'sleep 71.28; echo never' &" >&3
	"$AVTRACE" record -o out -- sh -c 'sleep 71.28; echo never' >out.stdout 2>out.stderr &
	pid=$!
	for i in $(seq 300); do
		pgrep -f '^sleep 71[.]28' >/dev/null && break
		sleep 0.1
	done
	pgrep -f '^sleep 71[.]28' >/dev/null || fail "the child never started"
	kill -TERM "$pid"
	wait "$pid"
	st=$?
	sed 's/^/  | /' out.stderr >&3
	expect_eq "$st" 143 "exit status of avtrace record after SIGTERM"
	expect_match "$(cat out.stderr)" "interrupted by SIGTERM" "avtrace's stderr"
	pgrep -f '^sleep 71[.]28' >/dev/null && fail "the child outlived avtrace"
	[ -f out/meta.json ] || fail "no out/meta.json after SIGTERM"
}

# ---- each process recording is one for every command: record alone, then
# predict, replay and explore it with -d (a fork path replayed: the parent
# runs again up to its fork, the child is the one scheduled)

t_tree_commands_per_process() {
	local n k st found=
	need_jq
	avt_timed 120 record -o out -- "$(target tree_forkrace)" >out.stdout 2>out.stderr
	expect_eq "$?" 0 "exit status of avtrace record"
	expect_eq "$(tree_jq out -c '[.processes[] | select(.recording == "procs/0001") | .how]')" '["fork"]' \
		"the recorded child"
	expect_eq "$(jq -c .fork_path out/procs/0001/meta.json)" "[1]" "the child's fork path"
	avt_timed 120 predict -d out/procs/0001 >predict.out 2>&1 || fail "avtrace predict -d out/procs/0001 failed"
	n=$(jq '.predictions | length' out/procs/0001/predictions.json)
	[ "$n" -ge 1 ] || fail "no prediction for the child"
	for k in $(seq "$n"); do
		avt_timed 60 replay -d out/procs/0001 --schedule "$k" >"replay$k.out" 2>&1
		st=$?
		[ $st -eq 1 ] && grep -q "BUG" "replay$k.out" && found=$k
	done
	[ -n "$found" ] || fail "no replay of the child's predictions reproduced its bug"
	expect_match "$(cat "replay$found.out")" "tree_forkrace[.]c:[0-9]+" "the replay's report"
	# the same schedule twice: the same outcome (the ancestors are no schedule's)
	avt_timed 60 replay -d out/procs/0001 --schedule "$found" >again.out 2>&1
	expect_eq "$?" 1 "exit status of the second replay of schedule $found"
	avt_timed 120 explore -d out/procs/0001 -n 20 --seed 3 >explore.out 2>&1
	st=$?
	[ $st -le 1 ] || fail "avtrace explore -d out/procs/0001: exit $st: $(tail -n 3 explore.out)"
}

# ---- sh -c 'PROG; echo done': the shell vforks, and its child runs in the
# shell's memory, over the shell's breakpoints, until it execs (it used to
# die there of SIGTRAP)

t_tree_sh_c_bug() {
	tree_test out sh -c "$(target tree_bank) 250; echo done"
	expect_tree_bug out tree_bank balance tree_bank.c "/* TREE BANK READ */" "/* TREE BANK WRITE */"
	expect_eq "$(tree_jq out '[.processes[] | select(.how == "exec")] | length')" 1 \
		"the exec'd program"
}

# ---- avtrace explore -- CMD: each multithreaded process of the tree
# explored in turn, under a header naming it; the tree's exit status

t_tree_explore_runner() {
	local bank bank_ok st rec
	bank=$(target tree_bank) || exit
	bank_ok=$(target tree_bank_ok) || exit
	avt_timed "$TEST_LIMIT" explore -n 40 -o out -- "$(target tree_runner)" "$bank" "$bank_ok" \
		>out.stdout 2>out.stderr
	st=$?
	sed 's/^/  | /' out.stdout >&3
	expect_eq "$st" 1 "exit status of avtrace explore ($(head -n 1 out.stderr))"
	expect_match "$(cat out.stdout)" "== process [0-9]+ \\($bank, pid" "a header naming tree_bank's process"
	expect_match "$(cat out.stdout)" "== process [0-9]+ \\($bank_ok, pid" "a header naming tree_bank_ok's process"
	rec=$(recordings_of out tree_bank) || exit
	[ -d "out/$rec/explore/runs" ] || fail "tree_bank's recording $rec was not explored"
	[ "$(all_reports "out/$rec")" -ge 1 ] || fail "no report of tree_bank's recording $rec"
	rec=$(recordings_of out tree_bank_ok) || exit
	[ -d "out/$rec/explore/runs" ] || fail "tree_bank_ok's recording $rec was not explored"
	expect_eq "$(all_reports "out/$rec")" 0 "reports of tree_bank_ok's recording $rec"
	# the one-threaded runner itself: nothing to explore
	[ ! -d out/explore ] || fail "the one-threaded runner was explored"
}

# ---- what following the tree costs a script's programs: the agent is the
# focus's alone (the programs a script runs do not even map it: it is
# blanked out of their LD_PRELOAD at their exec), and a shell, all system
# code, gets no heap hooks (two stops per malloc for no event)

t_tree_children_without_agent() {
	local maps
	need_jq
	# --agent: the pass on ptrace alone (AVTRACE_AGENT=0) too
	avt_timed 120 record --agent -o out -- sh -c 'i=0; while [ $i -lt 30 ]; do i=$((i+1)); done
		grep -c avtrace-agent /proc/self/maps' >out.stdout 2>out.stderr
	expect_eq "$?" 1 "exit status of avtrace record (grep's, which found nothing)"
	maps=$(grep -E '^[0-9]+$' out.stdout)
	expect_eq "$maps" 0 "lines of the agent in the maps of the script's grep"
	expect_match "$(jq -r .agent out/meta.json)" 'libavtrace-agent[.]so$' "the shell's agent (meta.json)"
	expect_eq "$(jq -r .heap_blocks out/meta.json)" 0 "heap blocks named in the shell (meta.json)"
	# a program of the user's, run by the same shell, has both
	avt_timed 120 record --agent -o out2 -- sh -c "exec $(target mutex_counter)" >/dev/null 2>out2.stderr
	expect_eq "$?" 0 "exit status of avtrace record of the user's program"
	[ "$(jq -r .heap_blocks out2/meta.json)" -ge 1 ] || fail "no heap block named in mutex_counter (its calloc)"
	[ "$(jq -r .agent_events out2/meta.json)" -ge 1 ] || fail "no agent event in mutex_counter"
}

# ---- an autotools project's `make check` (tests/targets/am_proj: automake,
# a libtool library, two test programs): make runs automake's test driver
# (sh), which runs each program's libtool wrapper script (sh), which execs
# the program in .libs/ (the bug is in the library, ledger.c)

t_tree_automake_check_bug() {
	local am=$TARGETS/am_proj rec lines st
	[ -x "$am/bank_test" ] || skip "tests/targets/bin/am_proj is not built (no autoreconf or libtoolize?)"
	head -n 1 "$am/bank_test" | grep -q '^#!' || fail "$am/bank_test is not libtool's wrapper script"
	timeout 120 make -s -C "$am" check >native.out 2>&1 || fail "make check fails natively: $(tail -n 5 native.out)"
	TREE_OPTS=$OK_EXPLORE tree_test out make -s -C "$am" check
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test ($(head -n 1 out.stderr))"
	lines=$(marker_line "$SRC/am_proj/ledger.c" "/* LEDGER READ */")\|$(marker_line "$SRC/am_proj/ledger.c" "/* LEDGER WRITE */") || exit
	expect_match "$(cat out.stdout)" "== process [0-9]+ \\($am/[.]libs/bank_test, pid" "the header of bank_test's process"
	expect_match "$(cat out.stdout)" "ledger[.]c:($lines)(\$|[^0-9])" "avtrace test's stdout (the racing access in the library)"
	expect_match "$(grep -v 'balance=' out.stdout)" "on balance" "avtrace test's stdout (the variable)"
	rec=$(recordings_of out bank_test) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded bank_test processes"
	[ "$(reports_in out "$rec")" -ge 1 ] || fail "no report in bank_test's recording $rec"
	rec=$(recordings_of out bank_ok_test) || exit
	expect_eq "$(printf '%s' "$rec" | grep -c .)" 1 "recorded bank_ok_test processes"
	expect_eq "$(reports_in out "$rec")" 0 "reports in bank_ok_test's recording $rec"
	# bank_test's recording is one like any other: predicted and replayed alone
	rec=$(recordings_of out bank_test)
	avt_timed 60 replay -d "out/$rec" --schedule 1 >replay.out 2>&1
	st=$?
	[ $st -le 1 ] || fail "avtrace replay -d out/$rec --schedule 1: exit $st: $(tail -n 3 replay.out)"
}
