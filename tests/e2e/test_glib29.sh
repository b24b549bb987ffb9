# shellcheck shell=bash
# Issue 29, GLib's installed thread tests under exploration: the shapes of
# theirs that made explored runs crawl to their time limit, on targets of
# our own.  Run with tests/e2e/run.sh tests/e2e/test_glib29.sh.

# glib_target NAME: the GLib target's path (skip when GLib is missing).
glib_target() {
	[ -x "$TARGETS/$1" ] || skip "no $1: GLib's headers are missing (scripts/setup --test installs libglib2.0-dev)"
	printf '%s\n' "$TARGETS/$1"
}

# max_yield DIR: the largest count of a "yield T n" step in the schedules
# of DIR's explored runs (0: none).
max_yield() {
	cat "$1"/explore/runs/*.sched | awk '$1 == "yield" && $3 > m { m = $3 } END { print m + 0 }'
}

# glib_spinwait (thread-pool's shape): main spins with no event on a
# counter its new worker sets.  Recorded with --no-access, as an installed
# program is (no access breakpoints in the system directories), so the
# spin makes no event.  A SURW walk that picked main to make its next
# event (the lock after the spin) held that decision through 10 x 10
# slices of the spin ("yield T0 100", 1 s of CPU a round); a spin seen as
# one (the same registers at two slice ends) now gives way after the
# usual 10 slices.  Counts of scheduling points, not times.
# limit: 120
t_glib29_spinwait_gives_way() {
	local prog n
	prog=$(glib_target glib_spinwait) || exit
	REC_OPTS=--no-access record rec "$prog" 4
	expect_recorded rec 0
	avt_timed 100 explore -d rec -n 6 -j 1 --policy surw --seed 1 >x.out 2>&1
	expect_eq "$?" 0 "exit status of explore"
	sed 's/^/  | /' x.out >&3
	expect_match "$(cat x.out)" "6 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error" "explore's summary"
	n=$(max_yield rec)
	[ "$n" -ge 1 ] || fail "no yield step: main never spun (the shape is gone)"
	[ "$n" -le 10 ] || fail "a spinning main ran $n turns before its worker (at most 10: EXPLORE_SPIN_SLICES)"
}

# The same under `avtrace test` with no flags but a runs budget: exit 0,
# no report, every schedule run to its end.
# limit: 120
t_glib29_spinwait_test() {
	local prog st n
	prog=$(glib_target glib_spinwait) || exit
	avt_timed 100 test -o t --no-access --explore 12 -- "$prog" 4 >t.out 2>&1
	st=$?
	sed 's/^/  | /' t.out >&3
	expect_eq "$st" 0 "exit status of avtrace test"
	[ -z "$(ls t/reports 2>/dev/null)" ] || fail "avtrace test reported: $(ls t/reports)"
	expect_match "$(cat t.out)" " 0 bug, 0 deadlock, 0 infeasible, 0 error$" "the explored runs"
	n=$(max_yield t)
	[ "$n" -le 10 ] || fail "a spinning main ran $n turns before its worker (at most 10)"
}

# glib_oncestack (thread-pool's diverged predictions): g_once_init_enter
# takes GLib's g_once_mutex inside, a part of the once call.  With
# --stacks (as `avtrace test` records) that inner lock was recorded as an
# event of its own, and the recorded order's replay, which never makes it,
# diverged at T0's 6th event.  And g_set_prgname's unlock, a tail call
# returning through the slot --stacks had swapped for its trampoline, had
# the trampoline's address for its site.  Now the recording has the same
# events with and without --stacks, at main's line, and its order replays.
# limit: 60
t_glib29_once_under_stacks() {
	local prog n0 n1 line
	prog=$(glib_target glib_oncestack) || exit
	line=$(marker_line "$SRC/glib_oncestack.c" "/* PRGNAME LINE */") || exit
	record plain "$prog"
	expect_recorded plain 0
	REC_OPTS=--stacks record rec "$prog"
	expect_recorded rec 0
	n0=$(grep -o '"events": *[0-9]*' plain/meta.json | grep -o '[0-9]*$')
	n1=$(grep -o '"events": *[0-9]*' rec/meta.json | grep -o '[0-9]*$')
	[ -n "$n0" ] || fail "no event count in plain/meta.json"
	expect_eq "$n1" "$n0" "events recorded with --stacks (without: $n0)"
	avt dump -d rec >dump.txt || fail "avtrace dump failed"
	expect_no_match "$(cat dump.txt)" " g_once_init_enter$" "the events inside g_once_init_enter"
	expect_match "$(cat dump.txt)" "T0 +release .* glib_oncestack.c:$line main" "g_set_prgname's unlock"
	replay rec --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of replaying the recorded order"
	expect_match "$(cat rec.replay)" "^PASS: schedule 0" "the replay"
}

# glib_lockspin (mutex and rec-mutex's perf and contended cases): each
# helper spins in `while (do_addition (&x))`, a lock, a test of x, an
# unlock, until main stores x.  The lock's events ended every run of
# reads, so the spin was never seen as one: a PCT run that ranked a helper
# above main kept running it and ended at its time limit, counted
# infeasible (on b371687, seed 1: 5 of 8 runs, 50 s; with --no-access, as
# an installed program records, where the lock and the unlock are all the
# spin shows: PCT 3 of 8, SURW 1 of 8).  The lock's events now count as
# reads of it: every policy's runs end, in a fraction of a second.  The
# time limit is 10 s; the runs are counted, not timed.
# limit: 120
t_glib29_lockspin_runs_end() {
	local prog p opts
	prog=$(glib_target glib_lockspin) || exit
	for opts in "" --no-access; do
		rm -rf rec
		REC_OPTS=$opts record rec "$prog" 2
		expect_recorded rec 0
		for p in pct pos surw; do
			rm -rf rec/explore
			avt_timed 100 explore -d rec -n 8 -j 1 --policy "$p" --seed 1 >x.out 2>&1
			expect_eq "$?" 0 "exit status of explore --policy $p ($opts)"
			sed 's/^/  | /' x.out >&3
			expect_match "$(cat x.out)" "8 pass, 0 bug, 0 deadlock, 0 infeasible, 0 error" \
				"explore --policy $p's summary ($opts)"
		done
	done
}

# glib_pool_ok (thread-pool's shape): main pushes jobs two at a time, each
# push a critical section on the pool's queue inside libglib, which its
# workers pop.  Those windows (SideTrack: main's two pushes in one call of
# submit_two, a worker's pop between) are libglib's code, whose accesses
# are no events: three predictions, one of them INFEASIBLE (the worker met
# another lock than recorded), and the same on GLib's own thread-pool
# test.  Now not predicted (their events all lie outside the recording's
# scope); `predict` says so with -v.  The program's own GMutex windows stay
# predicted: t_syncspec's glib_bank cases.
# limit: 150
t_glib29_library_windows_not_predicted() {
	local prog
	prog=$(glib_target glib_pool_ok) || exit
	TEST_LIMIT=100 run_test t --explore 5 -- "$prog" 4
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test"
	expect_no_match "$(cat t.test)" "INFEASIBLE|BUG|DEADLOCK" "avtrace test on glib_pool_ok"
	expect_no_match "$(cat t.test)" "^  [0-9]+ +sidetrack" "predictions inside libglib"
	expect_match "$(cat t.test)" "^([0-9]+) of \\1 schedules? ran to (their|its) end \\(0 diverged" "the schedules"
	avt predict -v -d t >p.log 2>&1 || fail "avtrace predict exited $?"
	expect_match "$(cat p.log)" "every event in code outside the scope, not predicted" "predict -v"
}

# acc_atomic_inc_ok (thread-pool's g_atomic_int_inc's, issue 29): two
# locked adds of `hits` (line 35) or ors of `seen` (36) whose flags
# nothing reads commute, so no prediction is made of them alone: before,
# a race-WW and an atomicity-WWW of `hits` and an atomic-set of both, at
# -O0 and -O2.  The decrements of `refs` (37), whose flags decide who
# left last, still race.  `avtrace test --no-explore`: exit 0, no
# report, nothing INFEASIBLE or diverged.
# limit: 180
t_glib29_commuting_updates() {
	local b where
	for b in acc_atomic_inc_ok acc_atomic_inc_ok_O2; do
		record "r$b" "$b" 2 3
		expect_recorded "r$b" 0
		avt predict -d "r$b" >"p$b.out" 2>&1 || fail "$b: predict failed: $(tail -n 1 "p$b.out")"
		sed 's/^/  | /' "p$b.out" >&3
		# the sites of each prediction, line numbers only
		where=$(awk '$2 == "pecan" { s = ""; for (i = 5; i <= NF - 1; i++) if ($i ~ /:[0-9]+$/) { sub(/.*:/, "", $i); s = s " " $i }; print $3 ":" s }' "p$b.out")
		printf '%s\n' "$where" | grep -q '^race-WW: 37 37$' ||
			fail "$b: no race of the decrements of refs (line 37): $where"
		if printf '%s\n' "$where" | grep -Eq '^[^:]*:( 3[56])+$'; then
			fail "$b: a prediction of commuting updates alone (lines 35, 36): $(printf '%s\n' "$where" | grep -E '^[^:]*:( 3[56])+$' | tr '\n' ';')"
		fi
		TEST_LIMIT=100 run_test "t$b" --no-explore -- "$TARGETS/$b" 2 3
		expect_eq "$TEST_STATUS" 0 "$b: exit status of avtrace test"
		expect_eq "$(reports "t$b")" 0 "$b: reports"
		if grep -Eq 'INFEASIBLE|DIVERGED|STUCK' "t$b.test"; then
			fail "$b: a schedule did not run to its end: $(grep -E 'INFEASIBLE|DIVERGED|STUCK' "t$b.test" | head -n 2 | tr '\n' ';')"
		fi
	done
}
