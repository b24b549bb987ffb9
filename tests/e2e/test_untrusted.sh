# shellcheck shell=bash
# Untrusted input at the command line (issue 18, item 2): damaged traces,
# schedules, pattern files and meta.json, devices instead of files, and
# numeric options out of range.  Each is refused with exit status 2 and a
# one-line error naming the file (and the offset or line) or the option;
# nothing crashes, hangs or allocates without bound.  The readers
# themselves are tested in tests/unit/test_untrusted.c, on the same
# fixtures.  Run with tests/e2e/run.sh [untrusted | t_NAME].

FIX="$REPO/tests/unit/fixtures/untrusted"

# An AddressSanitizer build reserves terabytes of shadow memory: no
# address-space limit for it (ASan itself dies on a huge allocation).
VLIMIT=1048576
if grep -q __asan_init "$AVTRACE" 2>/dev/null; then
	VLIMIT=unlimited
fi

# refused WHAT REGEX CMD...: CMD (an avtrace command) exits 2 with one
# error line matching REGEX, within 20 s and 1 GB of address space (a
# reader that allocated without bound dies instead of passing).
refused() {
	local what=$1 re=$2 st
	shift 2
	(ulimit -v $VLIMIT && avt_timed 20 "$@") >refused.out 2>refused.err
	st=$?
	sed 's/^/  | /' refused.err >&3
	expect_eq "$st" 2 "exit status of $what"
	expect_one_line_error refused.err
	expect_match "$(cat refused.err)" "$re" "error of $what"
}

# with_trace FIXTURE: a recording of mem_log whose trace.avt is the
# damaged FIXTURE (tests/unit/fixtures/untrusted), in dir bad/.
with_trace() {
	rm -rf bad
	cp -r out bad || fail "cannot copy the recording"
	cp "$FIX/$1" bad/trace.avt || fail "no fixture $1"
}

t_damaged_traces() {
	record out mem_log
	expect_recorded out 0
	# the issue's reproductions: a seq of 40,000,000 and of 0x40000000
	with_trace seq_40000000.avt
	refused "dump" "cannot read trace 'bad/trace.avt': event 12 at offset [0-9]+: seq 40000000 out of order" \
		dump -d bad
	refused "predict" "event 12 at offset [0-9]+: seq 40000000 out of order" predict -d bad
	with_trace seq_0x40000000.avt
	refused "predict" "'bad/trace.avt': event 5 at offset [0-9]+: seq 1073741824 out of order" \
		predict -d bad
	refused "replay" "'bad/trace.avt': event 5 at offset" replay -d bad --schedule 0
	# one corrupt thread id: replay allocated 3-32 GB for it
	with_trace thread_huge.avt
	refused "replay" "'bad/trace.avt': event 3 at offset [0-9]+: thread id 2147483632 above 65535" \
		replay -d bad --schedule 0
	refused "predict" "thread id 2147483632 above" predict -d bad
	with_trace thread_gap.avt
	refused "predict" "names T9, but no record names T3" predict -d bad
	with_trace kind.avt
	refused "dump" "unknown kind 99" dump -d bad --raw
	with_trace stack_seq.avt
	refused "dump" "stack record at offset [0-9]+: seq 1000000 out of order" dump -d bad
}

t_damaged_schedules() {
	record out mem_log
	expect_recorded out 0
	refused "a NUL byte" "nul.sched:3: NUL byte at column 9" \
		replay -d out --file "$FIX/nul.sched"
	refused "a binary file" "binary.sched:1: NUL byte" replay -d out --file "$FIX/binary.sched"
	refused "a count that wraps" "count_wrap.sched:2: count must be" \
		replay -d out --file "$FIX/count_wrap.sched"
	# --file /dev/zero read until memory ran out
	refused "/dev/zero" "cannot read schedule '/dev/zero': not a regular file" \
		replay -d out --file /dev/zero
	mkfifo fifo.sched
	refused "a FIFO" "not a regular file" replay -d out --file fifo.sched
	# a schedule 0 that is a device
	rm -f out/schedules/0000.sched
	ln -s /dev/zero out/schedules/0000.sched
	refused "schedule 0 on /dev/zero" "not a regular file" replay -d out --schedule 0
}

t_damaged_patterns_and_meta() {
	record out mem_log
	expect_recorded out 0
	refused "a pattern file with a NUL" "nul.pat:3: NUL byte" \
		predict -d out --pattern "$FIX/nul.pat"
	refused "a pattern file on /dev/zero" "pattern file '/dev/zero': not a regular file" \
		predict -d out --pattern /dev/zero
	cp out/meta.json meta.good
	cp "$FIX/argv_type.json" out/meta.json
	refused "meta.json with a number in argv" "cannot read 'out/meta.json': \"argv\"\\[0\\] is not a string" \
		replay -d out --schedule 0
	cp "$FIX/syntax.json" out/meta.json
	refused "meta.json with a syntax error" "'out/meta.json': line 4 column 1" \
		replay -d out --schedule 0
	rm out/meta.json
	ln -s /dev/zero out/meta.json
	refused "meta.json on /dev/zero" "'out/meta.json': not a regular file" \
		replay -d out --schedule 0
	rm out/meta.json
	cp meta.good out/meta.json
	replay out --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of replay with meta.json restored"
}

# Every numeric option of every subcommand: out of range, signed, with
# trailing text or not a number at all is a usage error naming the option;
# none wraps (--schedule 4294967296 was schedule 0, --slice -1 turned
# preemption off, --timeout 1e300 made every step INFEASIBLE).
t_numeric_options() {
	local cmd opt bad
	while read -r cmd opt bad; do
		# shellcheck disable=SC2086 # cmd: a subcommand and its fixed arguments
		refused "$cmd $opt $bad" "bad $opt '$bad'" $cmd "$opt" "$bad" -- /bin/true
	done <<-'EOF'
		record --slice -1
		record --slice 0
		record --slice 4294967297
		record --stack-depth 17
		record --cpu 99999
		record --cpu -2
		record --cpu 1x
		test -j 0
		test -j 257
		test --max 4294967297
		test --timeout 1e300
		test --timeout inf
		test --timeout nan
		test --timeout 0
		test --timeout -1
		test --explore -1
		test --seed -5
		test --seed 18446744073709551616
		test --stack-depth 0
		explore --runs 0
		explore --runs -1
		explore --depth 99999999999
		explore --timeout 1e300
		explore --seed 0x
		explore -j 4294967297
	EOF
	while read -r cmd opt bad; do
		# shellcheck disable=SC2086
		refused "$cmd $opt $bad" "bad $opt '$bad'" $cmd "$opt" "$bad"
	done <<-'EOF'
		replay --schedule 4294967296
		replay --schedule -1
		replay --schedule 1.5
		replay --timeout 1e300
		replay --timeout 1e-300
		replay --timeout 0x10
		replay --cpu 4294967296
		replay -j 0
		predict --max 0
		predict --max 4294967297
	EOF
}

# Module paths come from the trace: dump must not block opening one that
# is a FIFO (it symbolizes with the module files).
t_module_path_fifo() {
	mkdir -p d
	cp "$FIX/module_fifo.trace" d/trace.avt || fail "no fixture"
	mkfifo fifo
	avt_timed 20 dump -d d >dump.out 2>dump.err
	expect_eq "$?" 0 "exit status of dump"
	expect_match "$(cat dump.err)" "cannot read module 'fifo': not a regular file" "warning"
	expect_match "$(cat dump.out)" "create +T1 +fifo\+0x" "the sites as module+offset"
}
