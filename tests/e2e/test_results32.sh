# shellcheck shell=bash
# Issue 32, cli/ on one results model: the bugs `avtrace test` counts at
# the end, the reports it writes, --json and SARIF agree; reports/ holds
# only reproduced bugs, written as they are confirmed; a stop signal in
# the replays prints the summary so far.  And cli/ stays a house one can
# live in: no circle of files, no function over 80 lines.  Run with
# tests/e2e/run.sh tests/e2e/test_results32.sh.

# run_test's bound (lib.sh), within the runner's limit
TEST_LIMIT=50
# exploration only: no detector but the deadlock one, which finds nothing
# in these targets
EXPLORE_ONLY="--no-minimize --no-pecan --no-penelope --no-order --no-stacks"

# Two bugs that only exploration finds (explore_two: T2 before T1, T2
# between T1's critical sections): two reports, "2 bugs reproduced", two
# bugs in --json and two results in SARIF.  Exploration's runs depend only
# on the seed, whatever -j.
t_count_agrees_everywhere() {
	local prog n
	prog=$(target explore_two) || exit
	# shellcheck disable=SC2086
	run_test out -j 2 $EXPLORE_ONLY --explore 20 -- "$prog" 0
	expect_eq "$TEST_STATUS" 1 "exit status of test"
	n=$(reports out)
	expect_eq "$n" 2 "reports written (explore_two has two bugs)"
	expect_match "$(tail -n 1 out.test)" "^$n bugs reproduced; reports in out/reports/\$" "the last line"
	need_jq
	# shellcheck disable=SC2086
	avt_timed 50 test -q -f -o js -j 2 $EXPLORE_ONLY --explore 20 --json --sarif js.sarif \
		-- "$prog" 0 >js.json 2>js.err
	expect_eq "$?" 1 "exit status of test --json"
	expect_eq "$(jq '.bugs | length' js.json)" "$n" "bugs in --json"
	expect_eq "$(reports js)" "$n" "reports of the --json run"
	expect_eq "$(jq '[.bugs[] | select(.report != null)] | length' js.json)" "$n" "bugs with a report in --json"
	expect_eq "$(jq '.runs[0].results | length' js.sarif)" "$n" "results in SARIF"
}

# A failure that exploration saw but its replay does not show again
# (fail_once fails on its second run only, whatever the order): it is no
# bug.  reports/ stays empty, nothing says a bug was reproduced, --json
# has no bug, and the answer is inconclusive (exit 3).  -j 1: the runs
# take their turn at the counter one after the other.
t_unconfirmed_is_no_bug() {
	local prog
	prog=$(target fail_once) || exit
	# shellcheck disable=SC2086
	run_test out -j 1 --no-access $EXPLORE_ONLY --explore 4 -- "$prog" "$PWD/counter"
	expect_match "$(cat out.test)" "^BUG: SIGABRT in T0 seen \(unconfirmed\)$" "the failure seen"
	expect_eq "$(reports out)" 0 "reports of an unconfirmed failure"
	expect_no_match "$(cat out.test)" "bugs? reproduced;" "a count of reproduced bugs"
	expect_match "$(tail -n 1 out.test)" "^inconclusive: no bug reproduced, but 1 failure seen in exploration" \
		"the last line"
	expect_eq "$TEST_STATUS" 3 "exit status of test (inconclusive)"
	need_jq
	rm -f counter
	# shellcheck disable=SC2086
	avt_timed 50 test -q -f -o js -j 1 --no-access $EXPLORE_ONLY --explore 4 --json \
		-- "$prog" "$PWD/counter" >js.json 2>js.err
	expect_eq "$?" 3 "exit status of test --json"
	expect_eq "$(jq '.bugs | length' js.json)" 0 "bugs in --json"
	expect_eq "$(jq '.inconclusive' js.json)" true "inconclusive in --json"
}

# wait_bug_report DIR: until DIR/reports holds a report of a reproduced
# bug (or 40 s).
wait_bug_report() {
	local i r
	for i in $(seq 800); do
		for r in "$1"/reports/*.txt; do
			[ -s "$r" ] && head -n 1 "$r" | grep -q '^BUG' && return 0
		done
		sleep 0.05
	done
	fail "no report of a bug in $1/reports within 40 s"
}

# gate_left_alone: no run of gated_runs on ./gate is left (they die with
# avtrace: within 5 s).
gate_left_alone() {
	local i
	for i in $(seq 50); do
		pgrep -f -- "$PWD/gate" >/dev/null || return 0
		sleep 0.1
	done
	fail "a run of gated_runs is left: $(pgrep -af -- "$PWD/gate" | head -n 2)"
}

# SIGTERM while the predictions are replayed (the time limit of a CI job):
# gated_runs lets through the runs the test wrote a byte for (the
# recording, prediction 1's replay, which fails) and holds prediction 2's
# replay at its gate.  Sent once prediction 1's report is in reports/:
# reports/ keeps that bug and nothing else (no report of a replay cut
# short), the summary so far is printed, exit 128+15, no program left.
# limit: 60
t_sigterm_prints_summary_so_far() {
	local prog pid st r
	prog=$(target gated_runs) || exit
	mkfifo gate || fail "cannot make the gate"
	exec 9<>gate
	printf 'xx' >&9
	"$AVTRACE" test -q -f -o out -j 1 -t 30 --no-explore --no-minimize -- "$prog" "$PWD/gate" \
		>out.test 2>&1 &
	pid=$!
	wait_bug_report out
	kill -TERM "$pid"
	wait "$pid"
	st=$?
	exec 9>&-
	sed 's/^/  | /' out.test >&3
	expect_eq "$st" 143 "exit status after SIGTERM"
	for r in out/reports/*.txt; do
		expect_match "$(head -n 1 "$r")" '^(BUG|DEADLOCK) ' "first line of $r (only reproduced bugs)"
	done
	expect_eq "$(reports out)" 1 "reports after SIGTERM"
	expect_file out/reports/0001.txt
	expect_match "$(cat out.test)" '^  1 .* BUG \(SIGABRT\)$' "prediction 1's row"
	expect_match "$(cat out.test)" '^interrupted by SIGTERM: 1 of 2 schedules replayed$' "the summary"
	expect_match "$(tail -n 1 out.test)" '^1 bug reproduced so far; reports in out/reports/$' "the last line"
	expect_eq "$(find out/replays -name '*.txt' | wc -l)" 0 "text reports left in replays/"
	gate_left_alone
}

# SIGTERM while exploring: `avtrace explore` (no predictions, whose
# replays would wait at the gate too) records with the one byte it is
# given; its first run waits at the gate.  Sent once exploration has
# begun: the exploration's summary saying why it stopped, exit 128+15, no
# report, no program left.
# limit: 60
t_sigterm_while_exploring() {
	local prog pid st i
	prog=$(target gated_runs) || exit
	mkfifo gate || fail "cannot make the gate"
	exec 9<>gate
	printf 'x' >&9
	"$AVTRACE" explore -f -o out -j 1 -t 30 -- "$prog" "$PWD/gate" >out.test 2>&1 &
	pid=$!
	for i in $(seq 800); do
		grep -q '^exploring ' out.test && break
		sleep 0.05
	done
	if ! grep -q '^exploring ' out.test; then
		kill -KILL "$pid"
		fail "exploration did not begin within 40 s"
	fi
	kill -TERM "$pid"
	wait "$pid"
	st=$?
	exec 9>&-
	sed 's/^/  | /' out.test >&3
	expect_eq "$st" 143 "exit status after SIGTERM"
	expect_match "$(cat out.test)" '^0 runs in [0-9.]+ s ' "the runs' summary"
	expect_match "$(cat out.test)" '^stopped: interrupted by SIGTERM ' "why exploration stopped"
	expect_eq "$(find out -path '*/reports/*.txt' | wc -l)" 0 "reports after SIGTERM"
	gate_left_alone
}

# cli/ as issue 32 left it: no circle of files, no function over 80 lines
# (the checkers themselves are tested in test_explore_layout.sh).
# file-cycles reads objects, and the build links cli/ from its sources
# (no cli/*.o but main.o): each file is compiled here, every one of them.
# limit: 90
t_cli_layout() {
	local out f n=0
	mkdir -p objs
	for f in "$REPO"/cli/*.c; do
		# shellcheck disable=SC2046 # the flags are words
		cc -std=c11 -D_GNU_SOURCE -I"$REPO" $(pkg-config --cflags jansson libdw libelf 2>/dev/null) \
			-c -o "objs/$(basename "$f" .c).o" "$f" || fail "cannot compile $f"
		n=$((n + 1))
	done
	expect_eq "$(find objs -name '*.o' | wc -l)" "$n" "objects of cli/"
	out=$("$REPO/scripts/file-cycles" "$PWD/objs" 2>&1) || fail "circles of files in cli/: $out"
	expect_match "$out" "no circle of files in .*objs/" "file-cycles cli"
	out=$("$REPO/scripts/long-functions" "$REPO/cli" 2>&1) || fail "functions over 80 lines in cli/: $out"
}
