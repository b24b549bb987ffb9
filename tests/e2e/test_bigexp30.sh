# shellcheck shell=bash
# Issue 30, shape 5: larger programs time out in exploration.  The correct
# parallel quicksort (tests/targets/acc_qsort_ok.c, N 4096: about 107,000
# events, thousands of array elements that two threads touch) is explored
# by SURW: a run draws up to every shared object as interesting, and the
# walk asked of each event, and of each event of its look-ahead, whether
# its object was among them by a scan of all of them.  Four runs in four
# ran into the 10 s run limit (INFEASIBLE) on main; they now take about a
# second each (docs/explore.md, "SURW", "Many objects").  What is checked
# is the runs' verdicts and what the walks decided (counts in the schedule
# files), not a time: a run that ran into the limit says so.

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

# SURW's runs 1 to 4 (seed 1) all finish: none at the run limit, and each
# walk decided thousands of times (the walk was not coarsened to finish).
# limit: 90
t_bigexp_surw_runs_finish() {
	local f w
	bigexp_record
	avt_timed 80 explore -q -d rec -n 4 -j 1 --policy surw --seed 1 >x.out 2>&1
	expect_eq "$?" 0 "exit status of explore --policy surw"
	sed 's/^/  | /' x.out >&3
	expect_match "$(cat x.out)" '^4 runs in .*: 4 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error$' \
		"every SURW run passes, none at the run limit"
	for f in rec/explore/runs/000[1-4].sched; do
		expect_no_match "$(sed -n 2p "$f")" 'timed out' "$f"
		w=$(sed -n '2s/.* walks=\([0-9]*\) .*/\1/p' "$f")
		echo "$f: walks=$w" >&3
		[ "${w:-0}" -ge 1000 ] || fail "$f: ${w:-no} walks (a walk decides at most events)"
	done
}

# The default policy (the portfolio: surw, pos, surw, pct), 8 runs.
# limit: 90
t_bigexp_portfolio_runs_finish() {
	bigexp_record
	avt_timed 80 explore -q -d rec -n 8 -j 1 --seed 1 >x.out 2>&1
	expect_eq "$?" 0 "exit status of explore"
	sed 's/^/  | /' x.out >&3
	expect_match "$(cat x.out)" '^8 runs in .*: 8 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error$' \
		"every run passes, none at the run limit"
}
