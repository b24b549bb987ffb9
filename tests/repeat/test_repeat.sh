# shellcheck shell=bash
# "10 times out of 10" (issues 13 and 14): every bug shape of access
# breakpoints and of scheduling points, with `avtrace test` and no flags,
# REPEAT times in a row (default 10), -O0 and -O2; the correct
# counterparts as many times with no report.  Decisions depend on events
# and seeds only, so one failure here is a real defect, not bad luck.
# Takes minutes: not part of `make check`; run it with `make repeat`
# (tests/e2e/run.sh tests/repeat/test_repeat.sh, E2E_TIMEOUT 1800).

# the helpers bug_found and no_report (its t_* tests are not run here)
# shellcheck source=../e2e/test_access.sh
source "$E2E_DIR/test_access.sh"

REPEAT=${REPEAT:-10}

# each CMD...: CMD REPEAT times (it fails the test at the first miss).
each() {
	local i
	for i in $(seq "$REPEAT"); do
		"$@"
		echo "  $* : run $i of $REPEAT as expected" >&3
	done
}

# Issue 13, shape 1: two locks for one counter.
t_repeat_wrong_lock() {
	each bug_found acc_wronglock hits "/* HITS LINE */"
	each bug_found acc_wronglock_O2 hits "/* HITS LINE */"
}

# Shapes 2 and 6: N setters (silent stores), one checker.
t_repeat_setters() {
	each bug_found acc_setters "write b" "/* SET B LINE */"
	each bug_found acc_setters_O2 "write b" "/* SET B LINE */"
}

# Shape 3: a struct on main's stack, named by main's frame.
t_repeat_stack_object() {
	each bug_found acc_stackobj "read main's stack: e[.]stoppingFlag" "/* USE LINE */"
	each bug_found acc_stackobj_O2 "read main's stack: e[.]stoppingFlag" "/* USE LINE */"
}

# Shape 4: a work-stealing deque on the heap.
t_repeat_heap_deque() {
	each bug_found acc_deque "heap#[0-9]+ [(][^)]*[)]" "/* OWNER WRITE LINE */"
	each bug_found acc_deque_O2 "heap#[0-9]+ [(][^)]*[)]" "/* OWNER WRITE LINE */"
}

# Shape 5: lock-free only (a Treiber stack).
t_repeat_lock_free() {
	each bug_found acc_treiber "rmw top" "/* POP CAS LINE */"
	each bug_found acc_treiber_O2 "rmw top" "/* POP CAS LINE */"
}

# The correct counterparts: exit 0, no report.
t_repeat_correct() {
	local t
	for t in acc_onelock acc_setters_ok acc_stackobj_ok acc_deque_ok acc_treiber_ok acc_seqlock acc_handoff; do
		[ -x "$(target "$t")" ] || continue
		each no_report "$t"
		each no_report "${t}_O2"
	done
}

# Issue 14: main exits without joining; three workers must run in one
# order first.
exit_three_found() {
	avt_timed 90 test -q -f -o out -- "$(target exit_three)" 0 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on exit_three"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: SIGABRT in T1 at exit_three.c:$(marker_line "$SRC/exit_three.c" '/* CHECK LINE */')" "avtrace test's report on exit_three"
}

# A spin barrier whose bug needs one order.
spin_barrier_found() {
	avt_timed 90 test -q -f -o out -- "$(target spin_barrier)" >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on spin_barrier"
	expect_match "$(cat out/reports/*.txt | head -n 1)" "^BUG reproduced: SIGABRT in T2 at spin_barrier.c:$(marker_line "$SRC/spin_barrier.c" '/* CHECK LINE */')" "avtrace test's report on spin_barrier"
}

# Correct programs of the same shapes: a sleeper beside a compute-bound
# main, timed waits, exiting with a lock held.
sched_clean() {
	# 100 exploration runs of a program that computes for 0.1 s: minutes
	# on a loaded machine
	avt_timed 600 test -q -f -o out -- "$(target "$1")" >test.out 2>&1
	expect_eq "$?" 0 "exit status of avtrace test on $1"
	expect_no_match "$(cat test.out)" 'BUG|DEADLOCK' "avtrace test on $1"
}

# limit: 630
t_repeat_sched_shapes() {
	each exit_three_found
	each spin_barrier_found
	local p
	for p in sleep_compute timedwait_worker startup_register exit_locked; do
		each sched_clean "$p"
	done
}

# Issue 31: every bug target's minimal schedule (avtrace test minimises
# each reproduced bug) replays its failure REPEAT times of REPEAT, and the
# report's first screen shows its switches and the failure
# (check_minimal, tests/e2e/test_minimize.sh).  Exhaustively minimal on
# the small ones (mem_order, checkthenact, lockorder, bank, cxx_account:
# test_minimize.sh).
# limit: 1800
t_repeat_minimal_schedules() {
	# shellcheck source=../e2e/test_minimize.sh
	source "$E2E_DIR/test_minimize.sh"
	local p
	for p in acc_wronglock acc_wronglock_O2 acc_setters acc_setters_O2 acc_stackobj \
		acc_stackobj_O2 acc_deque acc_deque_O2 acc_treiber acc_treiber_O2 mem_log \
		mem_dcl mem_atomicset; do
		REPEATS=$REPEAT minimize_target 0 "$p"
	done
	for p in checkthenact lockorder invariant vec_copy; do
		REPEATS=$REPEAT minimize_target 0 "$p" 1000
	done
}

# Issue 28: a bug one process down (a wrapper script, a runner that forks
# and execs, posix_spawn, Check's CK_FORK mode, forked workers, a fork
# without exec) found REPEAT times of REPEAT with `avtrace test` and no
# flags, with its process, variable and file:line (tests/e2e/test_tree28.sh);
# the correct counterparts as many times with no report.
tree_again() {
	rm -rf out out.stdout out.stderr
	"$@"
}

# limit: 1800
t_repeat_tree_bugs() {
	# shellcheck source=../e2e/test_tree28.sh
	source "$E2E_DIR/test_tree28.sh"
	local t
	for t in t_tree_wrapper_bug t_tree_runner_bug t_tree_spawn_bug t_tree_check_fork_bug \
		t_tree_forktwo_bug t_tree_forkrace_bug; do
		each tree_again "$t"
	done
}

# limit: 3000
t_repeat_tree_correct() {
	# shellcheck source=../e2e/test_tree28.sh
	source "$E2E_DIR/test_tree28.sh"
	local t
	for t in t_tree_wrapper_ok t_tree_runner_ok t_tree_check_fork_ok t_tree_forktwo_ok \
		t_tree_forkrace_ok; do
		each tree_again "$t"
	done
}
