# shellcheck shell=bash
# Sync specs (docs/sync-spec.md, issue 29 "Library APIs by a spec"): GLib's
# GMutex, GCond and GRWLock are futex words inside libglib, known to avtrace
# by its built-in GLib spec: `avtrace test` with no flags finds the bug of
# each buggy GLib target and names its lock as the program names it, at
# the program's line; the correct counterparts pass with every schedule run
# to its end.  A program's own lock functions are known from the user's
# spec (--sync-spec); a wrong spec is "FILE:LINE: what", exit 2.
# Run with tests/e2e/run.sh test_syncspec.sh.

# glib_target NAME: the GLib target's path (skip when GLib is missing).
glib_target() {
	[ -x "$TARGETS/$1" ] || skip "no $1: GLib's headers are missing (scripts/setup --test installs libglib2.0-dev)"
	printf '%s\n' "$TARGETS/$1"
}

# test_prog OUT PROG [ARG] [-- AVTRACE OPTIONS...]: avtrace test -o OUT
# (and the options) -- PROG [ARG], its output in OUT.out (also in the
# log), status in TST.
TST=
test_prog() {
	local out=$1 prog=$2 arg=()
	shift 2
	if [ $# -gt 0 ] && [ "$1" != -- ]; then
		arg=("$1")
		shift
	fi
	[ "${1:-}" != -- ] || shift
	avt_timed 280 test -o "$out" "$@" -- "$prog" "${arg[@]}" >"$out.out" 2>&1
	TST=$?
	sed 's/^/  | /' "$out.out" >&3
}

# found OUT NAME LOCKLINE_MARKER EVENT_REGEX FAIL_MARKER: a bug of target
# NAME reproduced: exit 1, a report whose failure is at FAIL_MARKER's line
# and whose events name the lock (EVENT_REGEX, then the marker's line).
found() {
	local out=$1 name=$2 lock_marker=$3 ev=$4 fail_marker=$5 prog lline fline
	prog=$(glib_target "$name") || exit
	natively "$name"
	lline=$(marker_line "$SRC/$name.c" "$lock_marker") || exit
	fline=$(marker_line "$SRC/$name.c" "$fail_marker") || exit
	test_prog "$out" "$prog"
	expect_eq "$TST" 1 "exit status of avtrace test on $name"
	expect_file "$out/reports"
	local rep
	rep=$(cat "$out"/reports/*.txt)
	expect_match "$rep" "^BUG reproduced: SIGABRT in T[0-9]+ at $name\\.c:$fline " "$name's report"
	expect_match "$rep" "$ev +$name\\.c:$lline " "$name's report (the lock by its name)"
}

# clean OUT NAME EVENT_REGEX: a correct target: exit 0, no report, no
# schedule infeasible or stuck, and its lock in the recording by its name
# (EVENT_REGEX, a line of avtrace dump).  Its preamble is short (1000000 iterations, not
# 50000000): the order it gives only matters to the buggy programs, and a
# long computation without an event is what a loaded machine can make
# last past a run's time limit.  Its exploration is 200 runs by count
# (--explore 200), not the default "30 s, but at least 100 runs": the
# runs the default guarantees, without waiting out the rest of the 30 s.
clean() {
	local out=$1 name=$2 ev=$3 prog
	prog=$(glib_target "$name") || exit
	natively "$name" 1000000
	test_prog "$out" "$prog" 1000000 -- --explore 200
	expect_eq "$TST" 0 "exit status of avtrace test on $name"
	[ -z "$(ls "$out/reports" 2>/dev/null)" ] || fail "$name: reports written: $(ls "$out/reports")"
	local txt
	txt=$(cat "$out.out")
	expect_no_match "$txt" "INFEASIBLE|DIVERGED|STUCK" "$name's table"
	expect_match "$txt" "^([0-9]+) of \\1 schedules? ran to (their|its) end \\(0 diverged" "$name's summary"
	avt dump -d "$out" >"$out.dump" 2>&1
	expect_match "$(cat "$out.dump")" "$ev" "the recording of $name"
}

# limit: 300
t_syncspec_glib_bank() {
	found out glib_bank "/* READ LOCK LINE */" "acquire balance_lock[^ ]*" "/* ASSERT LINE */"
}

# limit: 300
t_syncspec_glib_bank_ok() {
	clean out glib_bank_ok " acquire +balance_lock "
}

# limit: 300
t_syncspec_glib_cond_if() {
	found out glib_cond_if "/* WAIT LINE */" "wait not_empty[^ ]*" "/* TAKE LINE */"
}

# limit: 300
t_syncspec_glib_cond_ok() {
	clean out glib_cond_ok " wait +not_empty[^ ]* \\(releases queue_lock\\) "
}

# limit: 300
t_syncspec_glib_rwlock_split() {
	found out glib_rwlock_split "/* READ LOCK LINE */" "rd_acquire pair_lock[^ ]*" "/* CHECK LINE */"
}

# limit: 300
t_syncspec_glib_rwlock_ok() {
	clean out glib_rwlock_ok " wr_acquire +pair_lock[^ ]* "
}

# A program's own lock functions, from the user's spec: the bug found,
# the lock named, the spec kept in the recording for its replays.
# limit: 300
t_syncspec_user_spec() {
	local prog lline wline rep
	prog=$(target spec_mylock) || exit
	natively spec_mylock
	lline=$(marker_line "$SRC/spec_mylock.c" "/* READ LOCK LINE */") || exit
	wline=$(marker_line "$SRC/spec_mylock.c" "/* WRITE LOCK LINE */") || exit
	printf '# the program'"'"'s own lock\nlibrary program\nmy_lock    acquire\nmy_unlock  release arg=1\n' >my.spec
	test_prog out "$prog" -- --sync-spec my.spec
	expect_eq "$TST" 1 "exit status of avtrace test --sync-spec on spec_mylock"
	rep=$(cat out/reports/*.txt)
	# the acquire at a call of my_lock (the reader's or the writer's: which
	# of them the report's window shows depends on the prediction that
	# reproduced first), named as the program names the lock
	expect_match "$rep" "acquire balance_lock[^ ]* +spec_mylock\\.c:($lline|$wline)( |$)" "spec_mylock's report (the lock by its name)"
	grep -q 'my_lock *acquire' <(jq -r .sync_spec out/meta.json) ||
		fail "the recording's meta.json does not keep the spec: $(jq -c .sync_spec out/meta.json)"
	# without the spec the lock is no lock: no acquire of it anywhere
	avt_timed 120 record -o plain -- "$prog" >plain.out 2>&1 || fail "record without the spec: $(tail -n 3 plain.out)"
	avt dump -d plain >plain.dump 2>&1
	expect_no_match "$(cat plain.dump)" "acquire +balance_lock" "the recording without the spec"
}

# A wrong spec: "FILE:LINE: what is wrong" on one line, exit 2, before
# anything runs.
t_syncspec_bad_file() {
	local prog st err
	prog=$(target spec_mylock) || exit
	printf 'library program\n\nmy_lock acquire\nmy_unlock relase\n' >bad1.spec
	printf 'my_lock acquire lock=2\n' >bad2.spec
	printf 'my_lock acquire\nmy_lock release\n' >bad3.spec
	printf 'pthread_mutex_lock release\n' >bad4.spec
	printf 'my_lock try-acquire ok=maybe\n' >bad5.spec
	local f line
	for f in bad1:4 bad2:1 bad3:2 bad4:1 bad5:1; do
		line=${f#*:}
		f=${f%%:*}
		avt_timed 30 test -o "o$f" --sync-spec "$f.spec" -- "$prog" >"$f.out" 2>"$f.err"
		st=$?
		expect_eq "$st" 2 "exit status with $f.spec"
		err=$(cat "$f.err")
		expect_match "$err" "^avtrace: $f\\.spec:$line: " "the error for $f.spec"
		expect_eq "$(grep -c . "$f.err")" 1 "lines of the error for $f.spec"
		[ ! -e "o$f/meta.json" ] || fail "$f.spec: a recording was made"
	done
	avt_timed 30 record -o r --sync-spec missing.spec -- "$prog" >m.out 2>m.err
	expect_eq "$?" 2 "exit status with a missing spec"
	expect_match "$(cat m.err)" "missing\\.spec" "the error for a missing spec"
}
