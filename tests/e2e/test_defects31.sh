# shellcheck shell=bash
# Issue 31, the smaller defects a new user met: a clang-built program's
# reports without source lines, reports without their replay command, the
# program's own stderr hidden, cut interleaving columns, a changed library
# replayed as INFEASIBLE, SARIF URIs with '..', and a demo that did not
# build the agent.  Run with tests/e2e/run.sh test_defects31.sh.

# `make demo` builds the agent (Makefile: demo depends on $(AGENT)): with
# AGENT pointing at a file that does not exist, `make -n demo` would build
# it; and the demo says it records through the agent, and does.
t_demo_records_through_agent() {
	local probe=$PWD/agent-probe.so st
	make -C "$REPO" -n demo AGENT="$probe" >make.out 2>&1
	sed 's/^/  | /' make.out >&3
	expect_match "$(cat make.out)" "-o $probe" "make -n demo (does demo build the agent?)"
	[ -e "$REPO/libavtrace-agent.so" ] || skip "libavtrace-agent.so is not built"
	AVTRACE_DEMO_OUT=$PWD/demo timeout 120 "$REPO/examples/demo.sh" >demo.out 2>&1
	st=$?
	sed 's/^/  | /' demo.out >&3
	expect_eq "$st" 0 "exit status of examples/demo.sh"
	expect_match "$(cat demo.out)" '^recording through the in-process agent' "the demo's output"
	expect_match "$(cat demo.out)" '^avtrace: [1-9][0-9,]* events through the in-process agent$' \
		"events recorded through the agent"
}

# every_report_replays OUT: each OUT/reports/*.txt ends with the command
# that re-enacts it, and that command reproduces its first line.
every_report_replays() {
	local out=$1 r cmd n=0
	for r in "$out"/reports/*.txt; do
		[ -e "$r" ] || fail "no report in $out/reports"
		cmd=$(sed -n 's/^  replay: \(avtrace replay -d .* --schedule [0-9][0-9]*\)$/\1/p' "$r")
		[ -n "$cmd" ] || fail "report '$r' has no replay command: $(tail -n 2 "$r")"
		# shellcheck disable=SC2086
		avt_timed 60 ${cmd#avtrace } >again.out 2>/dev/null
		expect_eq "$?" 1 "exit status of '$cmd'"
		expect_eq "$(head -n 1 again.out)" "$(head -n 1 "$r")" "first line of '$cmd'"
		n=$((n + 1))
	done
	echo "$n reports replayed by their own command" >&3
}

t_reports_carry_replay_command() {
	avt_timed 120 test -q -o "$PWD/out" --no-explore -- "$EXAMPLES/bank" 1000 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on bank"
	every_report_replays out
}

# A bug found by exploration: its report (a copy of the confirmed run's)
# names that run's directory.
t_explore_report_carries_replay_command() {
	avt_timed 300 test -q -o "$PWD/out" --no-order -- "$(target explore_checker)" 0 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on explore_checker"
	expect_eq "$(find out/reports -name 'explore-*.txt' | wc -l)" 1 "exploration reports"
	expect_match "$(cat out/reports/explore-*.txt)" '^  replay: avtrace replay -d .*/explore/runs/[0-9]+ --schedule 0$' \
		"the exploration report's replay command"
	every_report_replays out
}
