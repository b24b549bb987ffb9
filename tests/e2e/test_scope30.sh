# shellcheck shell=bash
# Issue 30, shape 7: the program named on the command line is the user's
# code wherever it is installed (a Debian package's own /usr/bin/PROG), so
# its accesses are events; a "#!" script's interpreter is not thereby the
# user's code, and the heap hooks keep their rule (no heap hooks for a
# process whose code is all under the system directories).
#
# A program is put in a system directory for the test alone: a copy of a
# target (its debug info with it) in a fresh mktemp -d under /usr/lib,
# removed when the test ends.

# sys_copy NAME...: copies of the targets into a fresh directory under
# /usr/lib, in SYSDIR (skips when /usr/lib is not writable).
SYSDIR=
sys_copy() {
	local n
	SYSDIR=$(mktemp -d /usr/lib/avtrace-test-XXXXXX 2>/dev/null) ||
		skip "cannot create a directory under /usr/lib (not root?)"
	trap 'rm -rf "$SYSDIR"' EXIT
	for n in "$@"; do
		cp "$(target "$n")" "$SYSDIR/" || fail "cannot copy $n into $SYSDIR"
	done
}

# The named program in /usr/lib: its loads and stores of `hits` are events,
# and `avtrace test` (no flags) finds the lost update at the marked line.
# limit: 150
t_scope_named_program_in_system_dir() {
	local line
	sys_copy acc_wronglock
	record rec "$SYSDIR/acc_wronglock"
	expect_recorded rec 0
	# two threads, three read-modify-writes each, then main's check and
	# its printf
	expect_count rec read hits 8
	expect_count rec write hits 6
	line=$(marker_line "$SRC/acc_wronglock.c" "/* HITS LINE */") || exit
	run_test out -- "$SYSDIR/acc_wronglock"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test on the copy in /usr/lib"
	[ "$(reports out)" -ge 1 ] || fail "no report"
	expect_match "$(grep -h '^  predicted:' out/reports/*.txt)" "hits at acc_wronglock[.]c:$line" \
		"a prediction naming hits at acc_wronglock.c:$line"
}

# What stays as it was: a script whose interpreter is that same program in
# /usr/lib has no access events (the user named the script, not its
# interpreter); the named program in /usr/lib gets no heap hooks (its
# calloc'd block is not named), where the same program outside the system
# directories does.  A named program of the system that never starts a
# thread (the shell of a loop) gets no access breakpoints at all: they wait
# for its first pthread_create (they made a shell loop 35x slower).
# limit: 150
t_scope_interpreter_and_heap_stay_system() {
	need_jq
	sys_copy acc_wronglock mutex_counter
	printf '#!%s\n' "$SYSDIR/acc_wronglock" >script
	chmod +x script
	record srec "$PWD/script"
	expect_recorded srec 0
	expect_count srec read "" 0
	expect_count srec write "" 0
	record sys "$SYSDIR/mutex_counter"
	expect_recorded sys 0
	expect_eq "$(jq -r .heap_blocks sys/meta.json)" 0 "heap blocks named in mutex_counter in /usr/lib"
	[ "$(count_kind sys read)" -ge 1 ] || fail "no read event in mutex_counter in /usr/lib"
	record own mutex_counter
	expect_recorded own 0
	[ "$(jq -r .heap_blocks own/meta.json)" -ge 1 ] || fail "no heap block named in mutex_counter outside /usr/lib"
	record shloop /bin/sh -c 'i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done'
	expect_recorded shloop 0
	expect_match "$(cat shloop.stderr)" "access breakpoints: 0 sites, 0 access events" "the shell's summary"
}
