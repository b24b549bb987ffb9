# shellcheck shell=bash
# Issue 30, shape 6b: one policy is not enough.  explore_nullpub's closer
# must run all of its 21 events between main's publishing and main's use;
# POS and PCT (a higher priority for the closer) find it in a few runs,
# SURW alone in none of 300 for seeds 1 to 10 (docs/explore.md).  The
# portfolio, the default policy, takes surw, pos, surw and pct in turn,
# each run being the run its member would make alone.  Decisions depend on
# seeds and run numbers only.

# The portfolio finds it within 30 runs for seeds 1 to 3 (28, 8, 8).
# limit: 240
t_portfolio_finds_the_null_use() {
	local lc seed
	lc=$(marker_line "$SRC/explore_nullpub.c" "/* CHECK: main used a NULL connection */") || exit
	record rec explore_nullpub
	for seed in 1 2 3; do
		avt_timed 120 explore -q -d rec -n 30 --stop --policy portfolio --seed "$seed" >"x$seed.out" 2>&1
		expect_eq "$?" 1 "exit status of explore --policy portfolio --seed $seed"
		sed 's/^/  | /' "x$seed.out" >&3
		expect_match "$(cat "x$seed.out")" "^BUG reproduced: SIGABRT in T0 at explore_nullpub[.]c:$lc \\(main\\)" \
			"explore --policy portfolio --seed $seed"
		expect_match "$(cat "x$seed.out")" "[(]portfolio: (pos|pct)" "found by a priority member, said so"
		rm -rf rec/explore
	done
}

# The same seed gives the same runs, and run 4k+2 is POS's run k+1 alone.
# limit: 180
t_portfolio_same_seed_same_runs() {
	local i
	record rec explore_nullpub
	for i in 1 2; do
		avt_timed 120 explore -q -d rec -n 10 -j 2 --policy portfolio --seed 4 >/dev/null 2>&1
		cp -r rec/explore/runs "runs$i"
		rm -rf rec/explore
	done
	for i in 0001 0002 0003 0004 0005 0006 0007 0008 0009 0010; do
		cmp -s "runs1/$i.sched" "runs2/$i.sched" || fail "run $i differs between two explorations with seed 4"
	done
	avt_timed 120 explore -q -d rec -n 3 -j 2 --policy pos --seed 4 >/dev/null 2>&1
	# the order (the header names the run and its policy)
	order() { grep -v '^#' "$1"; }
	cmp -s <(order runs1/0002.sched) <(order rec/explore/runs/0001.sched) || fail "portfolio run 2 is not pos run 1"
	cmp -s <(order runs1/0006.sched) <(order rec/explore/runs/0002.sched) || fail "portfolio run 6 is not pos run 2"
	cmp -s <(order runs1/0010.sched) <(order rec/explore/runs/0003.sched) || fail "portfolio run 10 is not pos run 3"
}

# avtrace test --policy portfolio: the bug within a bounded exploration.
# --no-pecan: PECAN's site pairs predict it (test_pairs30.sh), and this is
# about exploration.
# limit: 240
t_portfolio_in_test() {
	local lc
	lc=$(marker_line "$SRC/explore_nullpub.c" "/* CHECK: main used a NULL connection */") || exit
	run_test out --no-pecan --policy portfolio --explore 30 --seed 2 -- "$(target explore_nullpub)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test --policy portfolio"
	expect_match "$(head -n 1 out/reports/*.txt)" "^BUG reproduced: SIGABRT in T0 at explore_nullpub[.]c:$lc \\(main\\)" "the report"
}

# The portfolio is the default: `avtrace test` with no policy finds the
# null use (SURW alone, the default before, finds it in none of 300 runs
# for seeds 1 to 10), and run 3 is SURW's run 2 alone.  --no-pecan: as in
# t_portfolio_in_test, the prediction would find it first.
# limit: 240
t_portfolio_is_the_default() {
	local lc
	lc=$(marker_line "$SRC/explore_nullpub.c" "/* CHECK: main used a NULL connection */") || exit
	run_test out --no-pecan --explore 30 --seed 2 -- "$(target explore_nullpub)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test with the default policy"
	expect_match "$(cat out.test)" '^exploring 30 runs \(portfolio: surw, pos, surw, pct \(depth 3\) in turn, seed 2, ' "the policy said"
	expect_match "$(head -n 1 out/reports/*.txt)" "^BUG reproduced: SIGABRT in T0 at explore_nullpub[.]c:$lc \\(main\\)" "the report"
	record rec explore_nullpub
	avt_timed 120 explore -q -d rec -n 4 -j 2 --seed 5 >/dev/null 2>&1
	cp -r rec/explore/runs runs
	rm -rf rec/explore
	avt_timed 120 explore -q -d rec -n 2 -j 2 --policy surw --seed 5 >/dev/null 2>&1
	order() { grep -v '^#' "$1"; }
	cmp -s <(order runs/0001.sched) <(order rec/explore/runs/0001.sched) || fail "default run 1 is not surw run 1"
	cmp -s <(order runs/0003.sched) <(order rec/explore/runs/0002.sched) || fail "default run 3 is not surw run 2"
}
