# shellcheck shell=bash
# Acceptance tests of the exploration targets, tests/targets/explore_*.c:
# bugs that natural and recorded runs never show and that reordering at
# event boundaries (sync calls, avtrace.h annotations) exposes, the kind
# `avtrace explore` must find.  Run with tests/e2e/run.sh
# [explore_targets | t_NAME].
#
# For each target: native runs exit 0, the recording exits 0 with the
# events its header comment lists, and the hand-written schedule
# tests/e2e/schedules/NAME_bug.sched replays BUG at the marked line.
# explore_ok has no bug: its recorded order, and the order that breaks
# explore_checker, replay PASS.
#
# replay, thread_events and expect_bug_replays are lib.sh's; the fields
# thread_events shows are THREAD_FIELDS below.

SCHEDS="$REPO/tests/e2e/schedules"

# natively (lib.sh): five runs each
NATIVE_RUNS=5

# thread_events (lib.sh): "kind name site" (name: obj_name, else child,
# else "-").
THREAD_FIELDS='[.kind, (.obj_name // .child // "-"), (.site // "-")]'

# expect_bug OUT SCHED THREAD SIGNAL FILE LINE FUNC: the hand-written
# schedule SCHED (--file) reproduces the failure three times out of three.
expect_bug() {
	expect_file "$SCHEDS/$2.sched"
	# shellcheck disable=SC2086 # BUG_REPLAY_OPTS: more replay options
	expect_bug_replays "$@" --file "$SCHEDS/$2.sched" ${BUG_REPLAY_OPTS:-}
}

# expect_passes OUT ARGS...: replaying OUT with ARGS (--schedule N or
# --file F) ends PASS.
expect_passes() {
	local out=$1
	shift
	replay "$out" "$@"
	expect_eq "$RP_STATUS" 0 "exit status of the replay of $out ($*)"
	expect_match "$(cat "$out.replay")" '^PASS' "replay of $out ($*)"
}

# expect_total DIR N: DIR's trace has N events in all.
expect_total() {
	local n
	n=$(events "$1" | grep -c .) || true
	expect_eq "$n" "$2" "number of events in $1"
}

# repeat N TEXT: TEXT N times, one per line (a run of identical events).
repeat() {
	local i
	for ((i = 0; i < $1; i++)); do
		printf '%s\n' "$2"
	done
}

# ---- explore_checker: updaters before checker

t_explore_checker() {
	f=$SRC/explore_checker.c
	s=explore_checker.c
	ck=$(marker_line "$f" "/* CHECKER LOCK */") || exit
	ca=$(marker_line "$f" "/* CHECK A */") || exit
	cb=$(marker_line "$f" "/* CHECK B */") || exit
	cf=$(marker_line "$f" "/* CHECK FINISHED */") || exit
	cu=$(marker_line "$f" "/* CHECKER UNLOCK */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	l1=$(marker_line "$f" "/* STEP1 LOCK */") || exit
	w1=$(marker_line "$f" "/* STEP1 LINE */") || exit
	u1=$(marker_line "$f" "/* STEP1 UNLOCK */") || exit
	l2=$(marker_line "$f" "/* STEP2 LOCK */") || exit
	ra=$(marker_line "$f" "/* STEP2 READ A */") || exit
	rb=$(marker_line "$f" "/* STEP2 READ B */") || exit
	wc=$(marker_line "$f" "/* COMMIT LINE */") || exit
	u2=$(marker_line "$f" "/* STEP2 UNLOCK */") || exit
	natively explore_checker
	record out explore_checker
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^finished=1$' "target's stdout"
	expect_thread_events out T1 "start - -
acquire state_lock $s:$ck
read a_step1 $s:$ca
read b_step1 $s:$cb
read finished $s:$cf
release state_lock $s:$cu
exit - -"
	for k in 2 3; do
		flag=a_step1
		[ $k = 3 ] && flag=b_step1
		expect_thread_events out "T$k" "start - -
acquire state_lock $s:$l1
write $flag $s:$w1
release state_lock $s:$u1
acquire state_lock $s:$l2
read a_step1 $s:$ra
read b_step1 $s:$rb
write finished $s:$wc
release state_lock $s:$u2
exit - -"
	done
	expect_eq "$(thread_events out T0 | cut -d' ' -f1,2 | tr '\n' ' ')" \
		"start - create T1 create T2 create T3 join T1 join T2 join T3 exit - " "main's events"
	expect_total out 35
	expect_passes out --schedule 0
	expect_bug out explore_checker_bug T1 SIGABRT explore_checker "$lc" checker
}

# ---- explore_three: a three-thread order

# three_order OUT A B C: schedule running main up to its first join, then
# the whole legs of TA, TB, TC in that order, then free.
three_order() {
	printf 'avtrace-schedule 1\nrun T0 4\nrun T%s 5\nrun T%s 5\nrun T%s 5\nfree\n' \
		"$2" "$3" "$4" >"$1"
}

t_explore_three() {
	f=$SRC/explore_three.c
	s=explore_three.c
	ll=$(marker_line "$f" "/* LEG LOCK */") || exit
	lr=$(marker_line "$f" "/* READ STAGE */") || exit
	lw=$(marker_line "$f" "/* WRITE STAGE */") || exit
	lu=$(marker_line "$f" "/* LEG UNLOCK */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	natively explore_three
	record out explore_three
	expect_recorded out 0
	# T1 always runs its leg first (stage stays 0); 2 unless a loaded
	# machine let T3's longer busy work end first
	expect_match "$(cat out.stdout)" '^stage=[12]$' "target's stdout"
	for k in 1 2 3; do
		expect_thread_events out "T$k" "start - -
acquire relay_lock $s:$ll
read stage $s:$lr
write stage $s:$lw
release relay_lock $s:$lu
exit - -"
	done
	expect_total out 26
	expect_passes out --schedule 0
	expect_bug out explore_three_bug T0 SIGABRT explore_three "$lc" main
	# of the six orders of the legs, only T2 T3 T1 fails; in particular
	# neither the natural order nor its reverse
	for order in "1 2 3" "1 3 2" "2 1 3" "3 1 2" "3 2 1"; do
		# shellcheck disable=SC2086 # the order: three words
		three_order "order.sched" $order
		expect_passes out --file order.sched
	done
	three_order order.sched 2 3 1
	replay out --file order.sched
	expect_eq "$RP_STATUS" 1 "exit status of the order T2 T3 T1"
	expect_match "$(cat out.replay)" "^BUG reproduced: SIGABRT in T0 at $s:$lc \\(main\\)" "replay of the order T2 T3 T1"
}

# ---- explore_rare: a lost update on a rare variable beside a hot one

t_explore_rare() {
	f=$SRC/explore_rare.c
	s=explore_rare.c
	ll=$(marker_line "$f" "/* HOT LOCK */") || exit
	lh=$(marker_line "$f" "/* READ HOT */") || exit
	lw=$(marker_line "$f" "/* WRITE HOT */") || exit
	lu=$(marker_line "$f" "/* HOT UNLOCK */") || exit
	rr=$(marker_line "$f" "/* READ RARE */") || exit
	rw=$(marker_line "$f" "/* WRITE RARE */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	natively explore_rare
	record out explore_rare
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^hot=60 checkpoints=2$' "target's stdout"
	round="acquire hot_lock $s:$ll
read hot $s:$lh
write hot $s:$lw
release hot_lock $s:$lu"
	rounds=$(repeat 15 "$round")
	for k in 1 2; do
		expect_thread_events out "T$k" "start - -
$rounds
read checkpoints $s:$rr
write checkpoints $s:$rw
$rounds
exit - -"
	done
	expect_total out 254
	expect_count out read hot 60
	expect_count out write hot 60
	expect_count out read checkpoints 2
	expect_count out write checkpoints 2
	expect_passes out --schedule 0
	expect_bug out explore_rare_bug T0 SIGABRT explore_rare "$lc" main
}

# ---- explore_ok: the same shapes done right

t_explore_ok() {
	f=$SRC/explore_ok.c
	s=explore_ok.c
	# the assertions that must never fail: each marked once
	marker_line "$f" "/* CHECK LINE */" >/dev/null || exit
	marker_line "$f" "/* FINAL CHECK */" >/dev/null || exit
	rl=$(marker_line "$f" "/* RARE LOCK */") || exit
	rr=$(marker_line "$f" "/* READ RARE */") || exit
	rw=$(marker_line "$f" "/* WRITE RARE */") || exit
	ru=$(marker_line "$f" "/* RARE UNLOCK */") || exit
	ul=$(marker_line "$f" "/* UPDATE LOCK */") || exit
	us=$(marker_line "$f" "/* STEP1 LINE */") || exit
	ua=$(marker_line "$f" "/* UPDATE READ A */") || exit
	ub=$(marker_line "$f" "/* UPDATE READ B */") || exit
	uc=$(marker_line "$f" "/* COMMIT LINE */") || exit
	uu=$(marker_line "$f" "/* UPDATE UNLOCK */") || exit
	hl=$(marker_line "$f" "/* HOT LOCK */") || exit
	hr=$(marker_line "$f" "/* READ HOT */") || exit
	hw=$(marker_line "$f" "/* WRITE HOT */") || exit
	hu=$(marker_line "$f" "/* HOT UNLOCK */") || exit
	natively explore_ok
	record out explore_ok
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^hot=40 checkpoints=2 finished=1$' "target's stdout"
	expect_total out 199
	expect_count out read hot 40
	expect_count out write hot 40
	expect_count out read checkpoints 2
	expect_count out write checkpoints 2
	rounds=$(repeat 10 "acquire hot_lock $s:$hl
read hot $s:$hr
write hot $s:$hw
release hot_lock $s:$hu")
	for k in 2 3; do
		flag=a_step1
		[ $k = 3 ] && flag=b_step1
		expect_thread_events out "T$k" "start - -
$rounds
acquire hot_lock $s:$rl
read checkpoints $s:$rr
write checkpoints $s:$rw
release hot_lock $s:$ru
$rounds
acquire state_lock $s:$ul
write $flag $s:$us
read a_step1 $s:$ua
read b_step1 $s:$ub
write finished $s:$uc
release state_lock $s:$uu
exit - -"
	done
	for i in 1 2 3; do
		expect_passes out --schedule 0
	done
	expect_passes out --file "$SCHEDS/explore_ok_reordered.sched"
	expect_no_match "$(cat out.replay)" 'BUG|SIGABRT' "replay of explore_ok_reordered"
}

# ---- explore_hundred: a two-stage publish/consume race among 100 workers

t_explore_hundred() {
	f=$SRC/explore_hundred.c
	s=explore_hundred.c
	l1=$(marker_line "$f" "/* STAGE ONE */") || exit
	lp=$(marker_line "$f" "/* PUBLISH */") || exit
	l2=$(marker_line "$f" "/* STAGE TWO */") || exit
	rs=$(marker_line "$f" "/* READ STAGE */") || exit
	rp=$(marker_line "$f" "/* READ PAYLOAD */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	natively explore_hundred
	record out explore_hundred
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^consumed=99 stage=2$' "target's stdout"
	expect_thread_events out T1 "start - -
write stage $s:$l1
write payload $s:$lp
write stage $s:$l2
exit - -"
	expect_eq "$(thread_events out T100 | cut -d' ' -f1,2 | tr '\n' ' ')" \
		"start - acquire count_lock read consumed write consumed release count_lock read stage read payload exit - " \
		"T100's events"
	expect_match "$(thread_events out T2 | tr '\n' '|')" "read stage ${s}:${rs}[|]read payload ${s}:${rp}[|]exit" \
		"T2 reads the stage, then the payload"
	expect_total out 999
	expect_count out read stage 99
	expect_count out read payload 99
	# a hundred threads on a loaded machine: more than the 2 s default
	# before a thread counts as stuck
	expect_passes out --schedule 0 --timeout 20
	BUG_REPLAY_OPTS="--timeout 20" expect_bug out explore_hundred_bug T2 SIGABRT explore_hundred "$lc" consume
}

# ---- explore_abastack: ABA on a lock-free stack.  With access
# breakpoints its window holds events (the load of top->next, the CAS on
# top), so exploration finds the bug (seed 1: run 35 of SURW).

# limit: 180
t_explore_abastack() {
	f=$SRC/explore_abastack.c
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	natively explore_abastack
	record out explore_abastack
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^victim=[0-9] thief=[0-9] stack=[0-9]$' "target's stdout"
	ev=$(thread_events out T1 | cut -d' ' -f1,2 | tr '\n' ' ')
	expect_match "$ev" 'read nodes\[0\]\.next .*rmw top ' "the victim's window (top->next read, then the CAS)"
	expect_passes out --schedule 0
	avt_timed 150 explore -q -d out -n 200 --stop >x.out 2>&1
	expect_eq "$?" 1 "explore status on explore_abastack"
	expect_match "$(cat x.out)" "BUG reproduced: SIGABRT in T0 at explore_abastack\.c:$lc" "explore's report"
}
