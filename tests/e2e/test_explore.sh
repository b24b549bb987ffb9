# shellcheck shell=bash
# Acceptance tests of exploration (docs/explore.md): `avtrace test` finds
# the bugs of tests/targets/explore_*.c, which no prediction reaches, with
# its default exploration budget; the run it reports replays to the same
# failure ten times out of ten; correct programs get no report after the
# whole budget; runs are deterministic for a seed.  Run with
# tests/e2e/run.sh explore.

# avtrace test explores 100 runs here: run_test's bound (lib.sh).
TEST_LIMIT=150
# Busy work for the targets that order their threads natively with it: a
# computing thread keeps its priority in exploration (it gives way after
# 200 ms on a CPU with no event, docs/explore.md), so its length changes
# only how long a run takes, not which order it explores; short keeps the
# suite fast on a loaded machine.
SHORT_DELAY=2000000

# found_by_exploration OUT NAME THREAD LINE FUNC: `avtrace test` (in OUT.test)
# reproduced one bug, through exploration: SIGABRT in THREAD at
# NAME.c:LINE (FUNC); the confirmed run replays to that failure 10 times
# out of 10.
found_by_exploration() {
	local out=$1 name=$2 thr=$3 line=$4 func=$5 head rundir i
	local want="^BUG reproduced: SIGABRT in $thr at $name[.]c:$line \\($func\\)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test $name"
	expect_match "$(cat "$out.test")" '^no bug reproduced by the predictions; exploring \(--explore 100\)$' \
		"exploration after the predictions"
	expect_match "$(cat "$out.test")" '^exploring 100 runs \(portfolio: surw, pos, surw, pct \(depth 3\) in turn, seed 1, -j [0-9]+\)$' \
		"the budget printed"
	expect_match "$(cat "$out.test")" "$want" "the bug found"
	expect_match "$(cat "$out.test")" '^  found by run [0-9]+: [0-9]+ runs? to find it' "runs to find it"
	expect_eq "$(find "$out/reports" -name 'explore-*.txt' | wc -l)" 1 "exploration reports"
	expect_eq "$(find "$out/reports" -name '*.txt' | wc -l)" 1 "reports"
	head=$(head -n 1 "$out"/reports/explore-*.txt)
	expect_match "$head" "$want" "the report"
	rundir=$(sed -n 's/^  confirmed: avtrace replay -d \(.*\) --schedule 0$/\1/p' "$out.test")
	[ -n "$rundir" ] || fail "no confirmed run named in the output"
	expect_file "$rundir/schedules/0000.sched"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		avt_timed 30 replay -d "$rundir" --schedule 0 >"$out.replay$i" 2>/dev/null
		expect_eq "$?" 1 "exit status of replay $i of the reported run"
		expect_match "$(head -n 1 "$out.replay$i")" "$want" "replay $i of the reported run"
	done
}

# limit: 180
t_explore_updaters_before_checker() {
	local l
	l=$(marker_line "$SRC/explore_checker.c" "/* CHECK LINE */") || exit
	# --no-order: the order detector predicts it (t_order_finds_checker);
	# this is exploration's test
	run_test out --no-order --explore 100 -- "$(target explore_checker)" 0
	found_by_exploration out explore_checker T1 "$l" checker
	# its predictions replayed without failing: the first runs start there
	expect_match "$(cat out.test)" '^the first [1-9][0-9]* runs? starts? where a prediction that did not fail left off$' \
		"runs starting where predictions left off"
	expect_match "$(head -n 2 out/explore/runs/0001.sched)" '# explore run 1 \(seed 1, from prediction start 1 \([0-9]+/[0-9]+ pattern events, bystanders at random\), then portfolio: surw ' \
		"run 1's choices"
}

# limit: 180
t_explore_three_threads_ordered() {
	local l
	l=$(marker_line "$SRC/explore_three.c" "/* CHECK LINE */") || exit
	run_test out --no-order --explore 100 -- "$(target explore_three)" 0
	found_by_exploration out explore_three T0 "$l" main
}

# The order detector (docs/predict.md, Order): a read in a critical section
# taking its value from another thread's later write on the same lock.
# The relay's legs must run T2, T3, T1: "T1 reads stage from T3's write"
# is predicted, ranked first (the reader moved furthest) and reproduces it
# with no exploration; the checker must see both updaters' first halves.
order_found() {
	local name=$1 thread=$2 marker=$3 want=$4 l
	l=$(marker_line "$SRC/$name.c" "$marker") || exit
	run_test out --no-explore -- "$(target "$name")" 0
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test $name --no-explore"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: SIGABRT in $thread at $name[.]c:$l " "report of $name"
	expect_match "$(grep -h '^  predicted:' out/reports/*.txt)" "$want" "the order prediction that reproduced it"
}

# limit: 180
t_order_finds_relay_and_checker() {
	order_found explore_three T0 "/* CHECK LINE */" \
		'^  predicted: 1: order reads-from — T3 write stage at explore_three[.]c:[0-9]+, T1 read stage at explore_three[.]c:[0-9]+'
	order_found explore_checker T1 "/* CHECK LINE */" \
		'order reads-from — T3 write b_step1 at explore_checker[.]c:[0-9]+, T1 read b_step1 at explore_checker[.]c:[0-9]+'
}

# The rare-variable bug is a lost update PENELOPE also predicts from the
# recording (RWW on checkpoints), so `avtrace test` reproduces it before
# exploring; `avtrace explore` with its defaults must find it alone.
# limit: 180
t_explore_rare_variable() {
	local l want rundir i
	l=$(marker_line "$SRC/explore_rare.c" "/* CHECK LINE */") || exit
	want="^BUG reproduced: SIGABRT in T0 at explore_rare[.]c:$l \\(main\\)"
	avt_timed 150 explore -q -o out --stop -- "$(target explore_rare)" 0 >out.explore 2>/dev/null
	expect_eq "$?" 1 "exit status of avtrace explore explore_rare"
	sed 's/^/  | /' out.explore >&3
	expect_match "$(cat out.explore)" '^exploring 200 runs \(portfolio: surw, pos, surw, pct \(depth 3\) in turn, seed 1, -j [0-9]+\)$' \
		"the default budget"
	expect_match "$(cat out.explore)" "$want" "the bug found by exploration"
	rundir=$(sed -n 's/^  confirmed: avtrace replay -d \(.*\) --schedule 0$/\1/p' out.explore)
	[ -n "$rundir" ] || fail "no confirmed run named in the output"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		avt_timed 30 replay -d "$rundir" --schedule 0 >"out.replay$i" 2>/dev/null
		expect_eq "$?" 1 "exit status of replay $i of the reported run"
		expect_match "$(head -n 1 "out.replay$i")" "$want" "replay $i of the reported run"
	done
	run_test t -- "$(target explore_rare)" 0
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test explore_rare"
	expect_match "$(cat t.test)" "penelope(\+pecan)? +RWW .*BUG \\(SIGABRT\\)" "predicted by penelope"
	expect_match "$(head -n 1 t/reports/*.txt)" "$want" "the report of avtrace test"
}

# Correct programs: the whole budget, no report (one test each: a
# budget takes a while on a loaded machine).  A budget in runs: the
# default, in time, would make the count the clock's.
correct_program_no_report() {
	local t=$1
	run_test "out_$t" --explore 100 -- "$(target "$t")"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test $t"
	expect_match "$(cat "out_$t.test")" '^100 runs in .*: [0-9]+ pass, 0 bug, 0 deadlock, [0-9]+ infeasible, 0 error$' \
		"the whole budget on $t"
	expect_match "$(cat "out_$t.test")" '^no bug reproduced$' "verdict on $t"
	expect_eq "$(find "out_$t/reports" -name '*.txt' | wc -l)" 0 "reports of $t"
}

# limit: 180
t_explore_correct_explore_ok() { correct_program_no_report explore_ok; }
# limit: 180
t_explore_correct_mutex_counter() { correct_program_no_report mutex_counter; }
# limit: 180
t_explore_correct_condvar() { correct_program_no_report condvar; }
# limit: 180
t_explore_correct_rwlock() { correct_program_no_report rwlock; }
# limit: 180
t_explore_correct_barrier() { correct_program_no_report barrier; }
# limit: 180
t_explore_correct_sem() { correct_program_no_report sem; }

# A thread spinning on a flag that a lower-priority thread sets is dropped
# below it: after slices without an event (spinflag: plain loads), or
# after repeating one read event (mem_spinflag: annotated loads).  The runs
# end, and pass.
# limit: 150
t_explore_spin_flag_does_not_hang() {
	local t
	for t in spinflag mem_spinflag; do
		avt_timed 120 explore -q -o "out_$t" -n 20 -- "$(target "$t")" >"$t.explore" 2>&1
		expect_eq "$?" 0 "exit status of avtrace explore $t"
		sed 's/^/  | /' "$t.explore" >&3
		expect_match "$(cat "$t.explore")" '^20 runs in .*: 20 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error$' \
			"every run of $t passes"
	done
}

# explore_runs DIR NAME ARGS...: avtrace explore -d DIR ARGS, its runs'
# schedules moved to NAME/ (the next exploration of DIR removes them).
explore_runs() {
	local dir=$1 name=$2
	shift 2
	avt_timed 120 explore -q -d "$dir" "$@" >"$name.out" 2>&1
	mkdir -p "$name/explore"
	mv "$dir/explore/runs" "$name/explore/runs" || fail "no runs in $dir/explore"
}

# Run N depends on the recording, the seed and N only: the same orders
# with -j 1 and -j 2.  (The policies read the recording, so both explore
# one recording: two recordings may differ where a time slice ended.)
# limit: 150
t_explore_deterministic_for_a_seed() {
	record rec explore_three 0
	expect_recorded rec 0
	explore_runs rec a -n 30 --seed 7 -j 1
	expect_eq "$(find a/explore/runs -maxdepth 1 -name '*.sched' | wc -l)" 30 "schedules of the first exploration"
	explore_runs rec c -n 30 --seed 7 -j 2
	for f in a/explore/runs/*.sched; do
		cmp -s "$f" "c/explore/runs/$(basename "$f")" ||
			fail "run $(basename "$f" .sched) differs between -j 1 and -j 2 with seed 7"
	done
	explore_runs rec d -n 30 --seed 8 -j 2
	local same=0
	for f in a/explore/runs/*.sched; do
		cmp -s "$f" "d/explore/runs/$(basename "$f")" && same=$((same + 1))
	done
	[ "$same" -lt 30 ] || fail "seeds 7 and 8 gave the same 30 runs"
}

# Plain PCT rarely hits the one access the rare-variable bug needs; with
# variable bounding the variable is drawn first (bench/explore measures the
# medians over 20 seeds).  Here: one seed, a fixed budget.
# limit: 150
t_explore_variable_bounding_beats_pct() {
	local prog
	prog=$(target explore_rare) || exit
	avt_timed 120 explore -q -o vb -n 60 --algo pctvb --depth 2 --vars 1 -- "$prog" 0 >vb.out 2>&1
	expect_eq "$?" 1 "exit status of PCTVB on explore_rare"
	avt_timed 120 explore -q -o pct -n 60 --algo pct --depth 2 -- "$prog" 0 >pct.out 2>&1
	sed 's/^/  | /' vb.out pct.out >&3
	local fv fp
	fv=$(sed -n 's/^60 runs in .*: [0-9]* pass, \([0-9]*\) bug.*/\1/p' vb.out)
	fp=$(sed -n 's/^60 runs in .*: [0-9]* pass, \([0-9]*\) bug.*/\1/p' pct.out)
	[ -n "$fv" ] && [ -n "$fp" ] || fail "no run counts in the outputs"
	[ "$fv" -gt "$fp" ] || fail "PCTVB failed $fv of 60 runs, PCT $fp: variable bounding should hit more"
}

t_explore_usage_errors() {
	avt explore >/dev/null 2>err1
	expect_eq "$?" 2 "exit status without a program"
	expect_one_line_error err1
	avt explore --algo nope -- /bin/true >/dev/null 2>err2
	expect_eq "$?" 2 "exit status of a bad --algo"
	expect_match "$(cat err2)" "bad --policy 'nope'" "bad --algo message"
	avt explore --policy nope -- /bin/true >/dev/null 2>err2
	expect_eq "$?" 2 "exit status of a bad --policy"
	expect_match "$(cat err2)" "bad --policy 'nope' \(pct, pctvb, tb, pos, surw, guided or portfolio\)" "bad --policy message"
	avt explore --depth 0 -- /bin/true >/dev/null 2>err3
	expect_eq "$?" 2 "exit status of --depth 0"
	expect_match "$(cat err3)" "bad --depth '0'" "bad --depth message"
	avt explore -d nowhere -- /bin/true >/dev/null 2>err4
	expect_eq "$?" 2 "exit status of -d with a program"
	avt explore -d nowhere >/dev/null 2>err5
	expect_eq "$?" 2 "exit status of a missing recording"
	expect_match "$(cat err5)" "nowhere" "the missing recording named"
	avt test --explore x -- /bin/true >/dev/null 2>err6
	expect_eq "$?" 2 "exit status of a bad test --explore"
	expect_match "$(cat err6)" "bad --explore 'x'" "bad --explore message"
}

# Every policy finds the three-thread order within a small budget (seed 1;
# bench/explore measures the medians over 20 seeds).
# limit: 150
t_explore_every_policy_finds_three() {
	local prog p l
	prog=$(target explore_three) || exit
	l=$(marker_line "$SRC/explore_three.c" "/* CHECK LINE */") || exit
	for p in surw pos guided pct pctvb; do
		avt_timed 120 explore -q -o "o_$p" -n 60 --stop --policy "$p" -- "$prog" 0 >"$p.out" 2>&1
		expect_eq "$?" 1 "exit status of --policy $p on explore_three"
		sed 's/^/  | /' "$p.out" >&3
		expect_match "$(cat "$p.out")" "^BUG reproduced: SIGABRT in T0 at explore_three[.]c:$l \\(main\\)" \
			"the bug found by $p"
		expect_match "$(cat "$p.out")" "^  found by run [0-9]+: .*\\($p " "$p's choices named"
	done
}

# A hundred threads: the default policy finds the publish/consume race
# that PCT misses in the same budget (bench/explore: 20 seeds).
# limit: 180
t_explore_hundred_threads() {
	local prog l
	prog=$(target explore_hundred) || exit
	l=$(marker_line "$SRC/explore_hundred.c" "/* CHECK LINE */") || exit
	avt_timed 150 explore -q -o out -n 60 --stop -- "$prog" 0 >out.explore 2>&1
	expect_eq "$?" 1 "exit status of avtrace explore explore_hundred"
	sed 's/^/  | /' out.explore >&3
	expect_match "$(cat out.explore)" "^BUG reproduced: SIGABRT in T[0-9]+ at explore_hundred[.]c:$l \\(consume\\)" \
		"the bug found"
}

# Guided runs depend on earlier rounds, folded in run order: -j 1 and
# -j 2 still run the same runs.
# limit: 150
t_explore_guided_deterministic() {
	local f
	record rec explore_ok
	expect_recorded rec 0
	# -t 50: a loaded machine must not turn a run into a timeout
	explore_runs rec a -n 8 -t 50 --policy guided --seed 3 -j 1
	explore_runs rec c -n 8 -t 50 --policy guided --seed 3 -j 2
	expect_eq "$(find a/explore/runs -maxdepth 1 -name '*.sched' | wc -l)" 8 "schedules of the first exploration"
	for f in a/explore/runs/*.sched; do
		cmp -s "$f" "c/explore/runs/$(basename "$f")" ||
			fail "guided run $(basename "$f" .sched) differs between -j 1 and -j 2"
	done
	# later rounds started from the corpus or aimed at new pairs
	grep -h '^# explore run' a/explore/runs/*.sched | grep -q 'target ' ||
		fail "no guided run drew a target"
}
