# shellcheck shell=bash
# Issue 30, shape 5: larger programs time out in exploration.  The correct
# parallel quicksort (tests/targets/acc_qsort_ok.c, N 4096: about 107,000
# events, thousands of array elements that two threads touch) is explored
# by SURW: a run draws up to every shared object as interesting, and the
# walk asked of each event, and of each event of its look-ahead, whether
# its object was among them by a scan of all of them.  Four runs in four
# ran into the 10 s run limit (INFEASIBLE) on main; they now take about a
# second each (docs/explore.md, "SURW", "Many objects").  What is checked:
# the runs' verdicts, what the walks decided (counts in the schedule
# files) and the CPU seconds spent, never wall time.

# A fresh recording of acc_qsort_ok at its default size, as last session's
# measurement had it.
bigexp_record() {
	record rec acc_qsort_ok
	expect_recorded rec 0
	local n
	n=$(sed -n 's/.*recorded [0-9]* threads, \([0-9,]*\) events.*/\1/p' rec.stderr | tr -d ,)
	echo "recorded $n events" >&3
	[ "${n:-0}" -gt 90000 ] || fail "acc_qsort_ok made ${n:-no} events: the test needs about 100,000"
}

# bigexp_explore OUT CPU_MAX ARGS...: explore -q -d rec ARGS under
# /usr/bin/time, its output in OUT; fails when its CPU seconds (avtrace,
# its runs and the program's: user + system) pass CPU_MAX.  The runs' time
# went to avtrace's own CPU (the scan), which other work on the machine
# does not change much, where wall time mostly waits for a CPU there; so
# the runs get a per-run limit (-t 30) that load cannot reach, and the cost
# is checked in CPU seconds with a wide margin (e05b310: 8.6 to 18 s for
# SURW's runs 1 and 2, this build 1.4 to 2.0 s).
bigexp_explore() {
	local out=$1 max=$2 cpu
	shift 2
	echo "+ avtrace explore -q -d rec $*" >&3
	/usr/bin/time -f '%U %S' -o cpu.txt timeout 80 "$AVTRACE" explore -q -d rec -t 30 "$@" >"$out" 2>&1
	EXPLORE_STATUS=$?
	sed 's/^/  | /' "$out" >&3
	[ "$EXPLORE_STATUS" -ne 124 ] || fail "explore $* hung (killed after 80 s)"
	cpu=$(tail -n 1 cpu.txt | awk '{ printf "%.1f", $1 + $2 }')
	echo "  cpu ${cpu} s (at most $max)" >&3
	awk -v c="$cpu" -v m="$max" 'BEGIN { exit !(c <= m) }' ||
		fail "explore $* took ${cpu} s of CPU (at most $max: SURW's look-ups again?)"
}

# SURW's runs 1 and 2 (seed 1) finish, none at the run limit, in a few
# CPU seconds, and each walk decided thousands of times (the walk was not
# coarsened to finish).
# limit: 90
t_bigexp_surw_runs_finish() {
	local f w
	command -v /usr/bin/time >/dev/null || skip "no /usr/bin/time (apt-get install time)"
	bigexp_record
	bigexp_explore x.out 6 -n 2 -j 1 --policy surw --seed 1
	expect_eq "$EXPLORE_STATUS" 0 "exit status of explore --policy surw"
	expect_match "$(cat x.out)" '^2 runs in .*: 2 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error$' \
		"every SURW run passes, none at the run limit"
	for f in rec/explore/runs/000[12].sched; do
		w=$(sed -n '2s/.* walks=\([0-9]*\) .*/\1/p' "$f")
		echo "$f: walks=$w" >&3
		[ "${w:-0}" -ge 1000 ] || fail "$f: ${w:-no} walks (a walk decides at most events)"
	done
}

# The default policy (the portfolio: surw, pos, surw, pct), 4 runs.
# limit: 90
t_bigexp_portfolio_runs_finish() {
	command -v /usr/bin/time >/dev/null || skip "no /usr/bin/time (apt-get install time)"
	bigexp_record
	bigexp_explore x.out 12 -n 4 -j 1 --seed 1
	expect_eq "$EXPLORE_STATUS" 0 "exit status of explore"
	expect_match "$(cat x.out)" '^4 runs in .*: 4 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error$' \
		"every run passes, none at the run limit"
}
