# shellcheck shell=bash
# Issue 30, shapes 1 and 2, and the time budget of `avtrace test`.
#
# Shape 1 (acc_account): main returns without joining a checker and two
# updaters; the checker fails only after both updaters and before the
# process exit.  Shape 2 (acc_twostage): 99 writers in two stages and one
# reader, which fails between a writer's stage 1 and every writer's
# stage 2.  Each has a correct counterpart (_ok).  Decisions under test
# depend on the seed and the run numbers (--explore N, explore -n N),
# never on the clock; --time is tested only for "it stops and says why".

# predicted: the checker's section after both updaters', before the exit
# shape1 OUT BIN: avtrace test on BIN, predictions only
shape1_predicted() {
	local lc
	lc=$(marker_line "$SRC/acc_account.c" "/* CHECK LINE */") || exit
	run_test out --no-explore -- "$(target "$1")"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test $1"
	expect_match "$(cat out.test)" '^  1 +order +reads-from +acc_account[.]c:[0-9]+ / acc_account[.]c:[0-9]+ / acc_account[.]c:[0-9]+ +BUG \(SIGABRT\)$|^  2 +order +reads-from +acc_account[.]c:[0-9]+ / acc_account[.]c:[0-9]+ / acc_account[.]c:[0-9]+ +BUG \(SIGABRT\)$' \
		"the order prediction of the checker after both updaters, among the first two"
	expect_match "$(head -n 1 out/reports/*.txt)" "^BUG reproduced: SIGABRT in T1 at acc_account[.]c:$lc \\(checker\\)" "the report"
}

# limit: 150
t_shape1_exit_predicted() { shape1_predicted acc_account; }
# limit: 150
t_shape1_exit_predicted_O2() { shape1_predicted acc_account_O2; }

# The walk: the process exit no longer wins every run (it kept running
# through its exit as the walk's current thread: 98 runs of 100 were
# main alone, no bug); seeds 1 to 3, the bug within 40 runs each.
# limit: 180
t_shape1_walk_reaches_the_checker() {
	local lc seed
	lc=$(marker_line "$SRC/acc_account.c" "/* CHECK LINE */") || exit
	record rec acc_account
	for seed in 1 2 3; do
		avt_timed 120 explore -q -d rec -n 40 --stop --seed "$seed" >"x$seed.out" 2>&1
		expect_eq "$?" 1 "exit status of explore --seed $seed"
		sed 's/^/  | /' "x$seed.out" >&3
		expect_match "$(cat "x$seed.out")" "^BUG reproduced: SIGABRT in T1 at acc_account[.]c:$lc \\(checker\\)" \
			"explore --seed $seed"
		rm -rf rec/explore
	done
	# and the workers run in most runs: main alone at most 20 of 40
	avt_timed 120 explore -q -d rec -n 40 --seed 1 >all.out 2>&1
	alone=$(grep -L '^run T[1-9]' rec/explore/runs/*.sched | wc -l)
	echo "runs of main alone: $alone of 40" >&3
	[ "$alone" -le 20 ] || fail "main ran alone in $alone runs of 40"
}

correct_no_report() {
	run_test out --explore "$2" -- "$(target "$1")"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test $1"
	expect_match "$(cat out.test)" '^no bug reproduced$' "verdict on $1"
	expect_eq "$(reports out)" 0 "reports of $1"
}

# limit: 150
t_shape1_correct() { correct_no_report acc_account_ok 100; }
# limit: 150
t_shape1_correct_O2() { correct_no_report acc_account_ok_O2 100; }

# predicted: the reader between a writer's two stages, the other writers
# (bystanders) held before their stage 2 and main before its joins
shape2_predicted() {
	local lc
	lc=$(marker_line "$SRC/acc_twostage.c" "/* CHECK LINE */") || exit
	run_test out --no-explore --no-minimize -- "$(target "$1")"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test $1"
	expect_match "$(cat out.test)" '^  [1-3] +pecan +atomic-set-8 +acc_twostage[.]c:[0-9]+ / .* +BUG \(SIGABRT\)$' \
		"the atomic-set prediction, among the first three"
	expect_match "$(head -n 1 out/reports/*.txt)" "^BUG reproduced: SIGABRT in T100 at acc_twostage[.]c:$lc \\(reader\\)" "the report"
}

# limit: 180
t_shape2_two_stages_predicted() { shape2_predicted acc_twostage; }
# limit: 180
t_shape2_two_stages_predicted_O2() { shape2_predicted acc_twostage_O2; }
# limit: 180
t_shape2_correct() { correct_no_report acc_twostage_ok 20; }

# The default budget: time, ended by the first bug; the summary says why
# it stopped.  acc_account without the order detector: exploration finds
# it (seed 1: run 4), and stops there.
# limit: 180
t_test_default_budget_stops_at_bug() {
	run_test out --no-order -- "$(target acc_account)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test"
	expect_match "$(cat out.test)" '^no bug reproduced by the predictions; exploring \(--time 30\)$' "the default budget"
	expect_match "$(cat out.test)" '^exploring for up to 30 s \(at least 100 runs\) or until a bug \(portfolio: ' "the first line"
	expect_match "$(cat out.test)" '^stopped: a run failed$' "why it stopped"
	expect_match "$(cat out.test)" '^  found by run [0-9]+: ' "runs to find it"
}

# The default budget never ends before 100 runs, however slow the machine:
# what the first 100 runs find does not depend on its speed.
# limit: 240
t_test_default_budget_floor() {
	run_test out -- "$(target acc_account_ok)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test"
	local runs
	runs=$(sed -n 's/^\([0-9][0-9]*\) runs in .*/\1/p' out.test | head -1)
	[ -n "$runs" ] || fail "no run count in the output"
	[ "$runs" -ge 100 ] || fail "the default budget stopped after $runs runs"
}

# --time: it stops, and says why; a generous bound on the whole command
# (a correct program explores until the budget is spent).
# limit: 180
t_test_time_budget_stops() {
	run_test out --time 2 -- "$(target acc_account_ok)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test --time 2"
	expect_match "$(cat out.test)" '^exploring for up to 2 s or until a bug ' "the first line"
	expect_match "$(cat out.test)" '^stopped: the time budget \(--time 2\) was spent$' "why it stopped"
	expect_match "$(cat out.test)" '^[0-9]+ runs in [0-9.]+ s ' "runs counted"
	avt_timed 120 explore -q -d out --time 1 -n 500000 >x.out 2>&1
	expect_eq "$?" 0 "exit status of explore --time 1"
	expect_match "$(cat x.out)" '^exploring 500000 runs or for 1 s, whichever ends first ' "explore's first line"
	expect_match "$(cat x.out)" '^stopped: the time budget \(--time 1\) was spent$' "explore: why it stopped"
}

# An explicit runs budget is honoured: all of it, no stop at the bug
# (acc_account without the order detector: seed 1 finds it at run 4).
# limit: 150
t_test_runs_budget_honoured() {
	run_test out --no-order --explore 7 -- "$(target acc_account)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test --explore 7"
	expect_match "$(cat out.test)" '^exploring 7 runs \(portfolio: ' "the first line"
	expect_match "$(cat out.test)" '^7 runs in .*: [0-9]+ pass, [1-9][0-9]* bug, ' "all 7 runs, the bug among them"
	expect_no_match "$(cat out.test)" '^stopped: ' "no other reason to stop"
}
