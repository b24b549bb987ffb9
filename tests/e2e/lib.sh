# shellcheck shell=bash
# Helpers for end-to-end tests, sourced by run.sh in each test's own bash,
# in the test's fresh directory (the cwd).  Set by run.sh: REPO, AVTRACE,
# E2E_DIR, E2E_REASON_FILE.
#
# Helpers that print a value (count_kind, marker_line, ...) are meant for
# $(...): when they fail (or skip) they record the reason and exit the
# subshell with status 1 (or 77), so write
#     n=$(count_kind out acquire counter_lock) || exit
# (a bare exit passes the status on).  The first recorded reason is the one
# the runner prints.

# Built targets, built examples, target sources (for line markers).
export TARGETS=$REPO/tests/targets/bin
export EXAMPLES=$REPO/examples/bin
export SRC=$REPO/tests/targets

# The test's log (the runner's $dir.log) stays reachable on fd 3 even when
# a helper's caller redirects stderr.
exec 3>&2

# fail REASON...: end the test as failed.
fail() {
	printf '%s\n' "$*" >>"$E2E_REASON_FILE"
	echo "fail: $*" >&3
	exit 1
}

# skip REASON...: end the test as skipped.
skip() {
	printf '%s\n' "$*" >>"$E2E_REASON_FILE"
	exit 77
}

# avt ARGS...: the avtrace under test ($AVTRACE, default ./avtrace at the
# repo root).  The command line goes to the test log.
avt() {
	echo "+ avtrace $*" >&3
	"$AVTRACE" "$@"
}

# avt_timed SECONDS ARGS...: avt under timeout(1); a hang fails the test
# with a clear reason instead of running into the runner's timeout.
avt_timed() {
	local secs=$1 st
	shift
	# a bound the runner would never let fire is a mistake in the test
	[ "$secs" -lt "${E2E_LIMIT:-999999}" ] ||
		fail "avt_timed $secs in a test whose limit is ${E2E_LIMIT} s: declare '# limit: N' above it (run.sh)"
	echo "+ avtrace $* (timeout ${secs} s)" >&3
	timeout "$secs" "$AVTRACE" "$@"
	st=$?
	[ $st -ne 124 ] || fail "avtrace $1 hung (killed after $secs s)"
	return $st
}

# expect_eq ACTUAL EXPECTED [WHAT]
expect_eq() {
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"
}

# expect_match TEXT REGEX [WHAT]: TEXT (some line of it) matches grep -E REGEX.
expect_match() {
	printf '%s\n' "$1" | grep -qE -- "$2" ||
		fail "${3:-output} does not match /$2/: '$(printf '%s' "$1" | head -c 300)'"
}

# expect_no_match TEXT REGEX [WHAT]: no line of TEXT matches.
expect_no_match() {
	if printf '%s\n' "$1" | grep -qE -- "$2"; then
		fail "${3:-output} matches /$2/: '$(printf '%s\n' "$1" | grep -E -- "$2" | head -n 1 | head -c 300)'"
	fi
}

expect_file() {
	[ -e "$1" ] || fail "missing file '$1'"
}

expect_no_file() {
	[ ! -e "$1" ] || fail "file '$1' should not exist"
}

# expect_one_line_error FILE: FILE (captured stderr) is exactly one line,
# an avtrace error message.
expect_one_line_error() {
	local n
	n=$(wc -l <"$1")
	[ "$n" -eq 1 ] || fail "expected a one-line error, got $n lines: '$(head -c 300 "$1")'"
	expect_match "$(cat "$1")" '^avtrace: [^[:space:]]' "error message"
}

need_jq() {
	command -v jq >/dev/null 2>&1 || skip "jq is not installed"
}

# target NAME: path of tests/targets/bin/NAME; fails if not built.
target() {
	[ -x "$TARGETS/$1" ] || fail "target '$1' is not built (run make targets)"
	printf '%s\n' "$TARGETS/$1"
}

# marker_line FILE MARKER: the line number of the only line of FILE
# containing MARKER (a fixed string, e.g. "/* CRASH LINE */").
marker_line() {
	local lines
	lines=$(grep -nF -- "$2" "$1" | cut -d: -f1)
	[ "$(printf '%s\n' "$lines" | grep -c .)" -eq 1 ] ||
		fail "marker '$2' must occur exactly once in $1"
	printf '%s\n' "$lines"
}

# record OUT PROG [ARGS...]: avtrace record -o OUT -- PROG ARGS, with PROG a
# path or the name of a test target.  Stdout and stderr go to OUT.stdout and
# OUT.stderr; the exit status is left in REC_STATUS.  Never fails itself.
REC_STATUS=
record() {
	local out=$1 prog=$2
	shift 2
	case $prog in
	*/*) ;;
	*) prog=$(target "$prog") || exit ;;
	esac
	rm -f "$out.json"
	# shellcheck disable=SC2086 # REC_OPTS: extra record options of a test file
	avt record -o "$out" ${REC_OPTS:-} -- "$prog" "$@" >"$out.stdout" 2>"$out.stderr"
	REC_STATUS=$?
	{
		echo "  exit status $REC_STATUS; stderr:"
		sed 's/^/  | /' "$out.stderr"
	} >&3
}

# replay OUT ARGS...: avtrace replay -d OUT ARGS; output in OUT.replay,
# status in RP_STATUS.
RP_STATUS=
replay() {
	local out=$1
	shift
	avt_timed 30 replay -d "$out" "$@" >"$out.replay" 2>&1
	RP_STATUS=$?
	sed 's/^/  | /' "$out.replay" >&3
}

# run_test OUT ARGS...: avtrace test -q -f -o OUT ARGS (test options, then
# -- PROG ARGS); stdout and stderr in OUT.test (and the test's log), the
# exit status in TEST_STATUS.  Bounded by TEST_LIMIT seconds (default 120;
# a test file may set it, within the limit the runner gives its tests).
TEST_STATUS=
run_test() {
	local out=$1
	shift
	avt_timed "${TEST_LIMIT:-120}" test -q -f -o "$out" "$@" >"$out.test" 2>&1
	TEST_STATUS=$?
	sed 's/^/  | /' "$out.test" >&3
}

# reports OUT: the number of reports `avtrace test -o OUT` wrote.
reports() {
	find "$1/reports" -name '*.txt' 2>/dev/null | wc -l
}

# natively PROG [ARGS...]: run a target (a name in tests/targets/bin) without
# avtrace NATIVE_RUNS times (default 3); each run must exit 0 (the bug
# never shows in a natural run).
natively() {
	local prog i st
	prog=$(target "$1") || exit
	shift
	for i in $(seq "${NATIVE_RUNS:-3}"); do
		timeout 20 "$prog" "$@" >/dev/null 2>&1
		st=$?
		expect_eq "$st" 0 "exit status of native run $i of $(basename "$prog")"
	done
}

# natively_usually PROG [ARGS...]: a buggy target whose bug needs an order
# its threads take natively only by bad luck (its second thread does other
# work first): at least one of NATIVE_RUNS runs (default 3) exits 0.  That
# every run does is timing, not a fact to test: tree_forktwo's first native
# run lost its deposit once in CI, on a loaded machine.
natively_usually() {
	local prog i st seen=""
	prog=$(target "$1") || exit
	shift
	for i in $(seq "${NATIVE_RUNS:-3}"); do
		timeout 20 "$prog" "$@" >/dev/null 2>&1
		st=$?
		[ "$st" = 0 ] && return 0
		seen="$seen $st"
	done
	fail "no native run of $(basename "$prog") exited 0 (exit statuses:$seen)"
}

# expect_recorded OUT STATUS: the last record exited STATUS and left a trace.
expect_recorded() {
	expect_eq "$REC_STATUS" "$2" "exit status of avtrace record ($(head -n 1 "$1.stderr"))"
	expect_file "$1/trace.avt"
	expect_file "$1/meta.json"
}

# events DIR: the JSON lines of `avtrace dump -d DIR --json`, cached in
# DIR.json (run once per recording).
events() {
	local d=$1 st
	if [ ! -f "$d.json" ] || [ "$d/trace.avt" -nt "$d.json" ]; then
		avt dump -d "$d" --json >"$d.json.tmp" 2>"$d.json.err"
		st=$?
		if [ $st -ne 0 ]; then
			rm -f "$d.json.tmp"
			fail "avtrace dump -d $d --json exited $st: $(head -n 1 "$d.json.err")"
		fi
		mv "$d.json.tmp" "$d.json"
	fi
	cat "$d.json"
}

# count_kind DIR KIND [OBJ_NAME]: number of events of KIND (on the object
# named OBJ_NAME) in DIR's trace.  Uses jq; falls back to grep on the
# compact form when jq is missing.
count_kind() {
	local d=$1 kind=$2 n
	events "$d" >/dev/null || exit
	if command -v jq >/dev/null 2>&1; then
		if [ $# -ge 3 ]; then
			n=$(jq -c --arg k "$kind" --arg o "$3" \
				'select(.kind == $k and .obj_name == $o)' "$d.json") ||
				fail "jq cannot parse the dump of $d"
		else
			n=$(jq -c --arg k "$kind" 'select(.kind == $k)' "$d.json") ||
				fail "jq cannot parse the dump of $d"
		fi
		printf '%s' "$n" | grep -c . || true
	elif [ $# -ge 3 ]; then
		grep -F "\"kind\":\"$kind\"" "$d.json" | grep -cF "\"obj_name\":\"$3\"" || true
	else
		grep -cF "\"kind\":\"$kind\"" "$d.json" || true
	fi
}

# expect_count DIR KIND OBJ_NAME N: exactly N events of KIND on OBJ_NAME
# ("" for any object).
expect_count() {
	local n
	if [ -n "$3" ]; then
		n=$(count_kind "$1" "$2" "$3") || exit
		expect_eq "$n" "$4" "number of $2 events on $3"
	else
		n=$(count_kind "$1" "$2") || exit
		expect_eq "$n" "$4" "number of $2 events"
	fi
}

# select_events DIR JQ_CONDITION: the events (JSON lines) for which the jq
# condition holds, e.g. '.kind == "acquire" and .obj_name == "m"'.
select_events() {
	need_jq
	events "$1" >/dev/null || exit
	jq -c "select($2)" "$1.json" || fail "jq failed on '$2'"
}

# field JSON_LINE NAME: a top-level field of one event ("" if absent).
field() {
	need_jq
	printf '%s\n' "$1" | jq -r --arg f "$2" '.[$f] // empty' ||
		fail "not a JSON event: '$1'"
}

# nthreads DIR: number of distinct threads that have events.
nthreads() {
	need_jq
	events "$1" >/dev/null || exit
	jq -r '.thread' "$1.json" | sort -u | grep -c . || true
}

# thread_events DIR THREAD: THREAD's events in order, one per line: the
# fields of THREAD_FIELDS (a jq array, set by the test file) joined by
# spaces.
thread_events() {
	need_jq
	events "$1" >/dev/null || exit
	jq -r --arg t "$2" "select(.thread == \$t) | $THREAD_FIELDS | join(\" \")" "$1.json" ||
		fail "jq cannot read the dump of $1"
}

# expect_thread_events DIR THREAD EXPECTED: thread_events is EXPECTED.
expect_thread_events() {
	local got
	got=$(thread_events "$1" "$2") || exit
	[ "$got" = "$3" ] ||
		fail "$2's events in $1: expected [$(printf '%s' "$3" | tr '\n' '|')], got [$(printf '%s' "$got" | tr '\n' '|')]"
}

# expect_bug_replays OUT SCHED THREAD SIGNAL FILE LINE FUNC REPLAY_ARGS...:
# replaying OUT with REPLAY_ARGS (which choose the schedule SCHED) ends BUG
# three times out of three: SIGNAL in THREAD at FILE.c:LINE (FUNC).
expect_bug_replays() {
	local out=$1 sched=$2 thread=$3 sig=$4 file=$5 line=$6 func=$7 i
	shift 7
	for i in 1 2 3; do
		replay "$out" "$@"
		expect_eq "$RP_STATUS" 1 "exit status of replay $i of $sched"
		expect_match "$(cat "$out.replay")" \
			"^BUG reproduced: $sig in $thread at $file[.]c:$line \\($func\\)" "replay $i of $sched"
	done
}

# same_as_native NAME TIMEOUT [RECORD_OPTIONS...]: record NAME with the
# options (avt_timed: a hang fails the test); exit status 0 and output
# identical to the native run.
same_as_native() {
	local prog name=$1 limit=$2 st how
	shift 2
	how=${*:+ with $*}
	prog=$(target "$name") || exit
	"$prog" >native.out 2>&1 || fail "$name fails natively"
	avt_timed "$limit" record -o out "$@" -- "$prog" >recorded.out 2>rec.err
	st=$?
	sed 's/^/  | /' rec.err >&3
	expect_eq "$st" 0 "exit status of avtrace record$how on $name ($(tail -n 1 rec.err))"
	cmp -s native.out recorded.out ||
		fail "$name printed '$(head -c 200 recorded.out)' recorded$how, '$(head -c 200 native.out)' natively"
}

# sarif_validate FILE...: the reference validator reports nothing (its
# exit status is 0 even on errors, so its own SARIF output is read).
sarif_validate() {
	local f n
	command -v sarif-multitool >/dev/null 2>&1 ||
		skip "sarif-multitool is not installed (npm install -g @microsoft/sarif-multitool, or scripts/setup --test)"
	need_jq
	for f in "$@"; do
		jq -e '.version == "2.1.0"' "$f" >/dev/null || fail "'$f' is not a SARIF 2.1.0 log"
	done
	rm -f validation.sarif
	echo "+ sarif-multitool validate -o validation.sarif $*" >&3
	timeout 180 sarif-multitool validate -o validation.sarif "$@" >validation.out 2>&1 ||
		fail "sarif-multitool failed: $(tail -n 3 validation.out)"
	sed 's/^/  | /' validation.out >&3
	[ -s validation.sarif ] || fail "sarif-multitool wrote no output: $(tail -n 3 validation.out)"
	n=$(jq '[.runs[].results[]?] | length' validation.sarif) || fail "cannot read the validator's output"
	[ "$n" -eq 0 ] || fail "the validator found $n problems: $(grep -E ': (error|warning) ' validation.out | head -n 3)"
}
