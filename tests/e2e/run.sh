#!/usr/bin/env bash
# End-to-end test runner: runs the real avtrace command on tests/targets.
#
# usage: tests/e2e/run.sh [-k] [WHAT]...
#   WHAT  a test file (tests/e2e/test_record.sh, test_record.sh or record)
#         or one test (t_crash or crash); default: every tests/e2e/test_*.sh
#   -k    keep the directories of passing tests too
#
# Each test file defines functions `t_NAME() {` (at the start of a line).
# Every test runs in its own bash, in a fresh directory tests/e2e/out/NAME
# (E2E_OUT overrides the parent), under `timeout`: the test's own limit (a
# `# limit: N` line above it or at the top of its file, see limit_of), at
# least E2E_TIMEOUT (default 60 s), with the helpers of lib.sh.  A test
# passes when it returns; `fail` and `skip` end it.  The runner prints one line per test
#   PASS name (N s) | FAIL name: reason (N s) | SKIP name: reason
# (N: the test's wall time; a failure is followed by the tail of the
# test's log, indented, and its directory is kept), then the slowest
# files' times when more than one file ran, then exactly one line
#   N passed, N failed[, N skipped]
# and exits 1 if any test failed, 2 on a usage error.
#
# Environment: AVTRACE (the binary, default ./avtrace at the repo root),
# E2E_TIMEOUT, E2E_OUT.  When ptrace is not permitted (yama ptrace_scope 3,
# or `avtrace record -- /bin/true` fails with a ptrace permission error)
# every test is skipped with that reason.

set -u

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$E2E_DIR/../.." && pwd)
AVTRACE=${AVTRACE:-$REPO/avtrace}
# Tests run in their own directories: make the binary's path absolute.
case $AVTRACE in
/*) ;;
*/*) AVTRACE=$PWD/$AVTRACE ;;
*) AVTRACE=$(command -v "$AVTRACE" || echo "$AVTRACE") ;;
esac
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
E2E_OUT=${E2E_OUT:-$E2E_DIR/out}
export E2E_DIR REPO AVTRACE E2E_TIMEOUT E2E_OUT

# ---- child mode: run one test function (called by the runner below)
if [ "${1:-}" = "--run-one" ]; then
	[ $# -eq 4 ] || exit 2
	cd "$4" || exit 2
	export E2E_REASON_FILE="$4.reason"
	# shellcheck source-path=SCRIPTDIR source=lib.sh
	. "$E2E_DIR/lib.sh"
	# shellcheck disable=SC1090
	. "$2"
	if [ -n "${E2E_SKIP_REASON:-}" ]; then
		skip "$E2E_SKIP_REASON"
	fi
	declare -F "$3" >/dev/null || fail "no test function '$3' in $2"
	"$3"
	exit 0
fi

usage() {
	echo "usage: tests/e2e/run.sh [-k] [TEST_FILE | TEST_NAME]..." >&2
	exit 2
}

# limit_of FILE FUNC: the test's time limit in seconds.  A test declares
# one with a line `# limit: N` in the comment block right above its
# `t_NAME() {`; a file declares one for all its tests with that line, then
# a blank line, before its first function.  Undeclared: E2E_TIMEOUT.  A declared limit below
# E2E_TIMEOUT is raised to it (E2E_TIMEOUT only ever adds time).
limit_of() {
	local n
	n=$(awk -v fn="$2" '
		/^# limit: [0-9]+[[:space:]]*$/ { pending = $3; next }
		/^#/ { next }
		/^[[:space:]]*$/ { if (!seen_func && pending != "") file = pending; pending = ""; next }
		/^[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(\)/ {
			seen_func = 1
			name = $0; sub(/[[:space:]]*\(.*/, "", name)
			if (name == fn) { print (pending != "" ? pending : file); exit }
		}
		{ pending = "" }
	' "$1")
	if [ -z "$n" ] || [ "$n" -lt "$E2E_TIMEOUT" ]; then
		n=$E2E_TIMEOUT
	fi
	printf '%s\n' "$n"
}

# Test functions of a file, in file order.
tests_in() {
	sed -n 's/^\(t_[A-Za-z0-9_]*\)[[:space:]]*()[[:space:]]*{*.*$/\1/p' "$1"
}

# Why ptrace tests cannot run here, or nothing.
ptrace_skip_reason() {
	local scope tmp
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)
	if [ "$scope" = 3 ]; then
		echo "ptrace is disabled (kernel.yama.ptrace_scope = 3)"
		return
	fi
	[ -x "$AVTRACE" ] || return 0
	tmp=$(mktemp -d) || return 0
	if ! timeout 30 "$AVTRACE" record -o "$tmp/out" -- /bin/true \
		>/dev/null 2>"$tmp/err" </dev/null &&
		grep -qiE 'ptrace.*(permi|denied|EPERM)|(permi|denied|EPERM).*ptrace' \
			"$tmp/err"; then
		echo "ptrace not permitted: $(head -n 1 "$tmp/err")"
	fi
	rm -rf "$tmp"
}

keep=0
files=()
only=()
for arg in "$@"; do
	case $arg in
	-k) keep=1 ;;
	-h | --help) usage ;;
	-*) usage ;;
	*)
		if [ -f "$arg" ]; then
			files+=("$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")")
		elif [ -f "$E2E_DIR/$arg" ]; then
			files+=("$E2E_DIR/$arg")
		elif [ -f "$E2E_DIR/test_$arg.sh" ]; then
			files+=("$E2E_DIR/test_$arg.sh")
		else
			only+=("t_${arg#t_}")
		fi
		;;
	esac
done
if [ ${#files[@]} -eq 0 ]; then
	for f in "$E2E_DIR"/test_*.sh; do
		[ -f "$f" ] && files+=("$f")
	done
fi

# (file, function) pairs to run.
run_files=()
run_funcs=()
for f in "${files[@]}"; do
	for t in $(tests_in "$f"); do
		if [ ${#only[@]} -gt 0 ]; then
			match=0
			for o in "${only[@]}"; do
				[ "$o" = "$t" ] && match=1
			done
			[ $match = 1 ] || continue
		fi
		run_files+=("$f")
		run_funcs+=("$t")
	done
done
if [ ${#run_funcs[@]} -eq 0 ]; then
	echo "run.sh: no test matches '$*'" >&2
	exit 2
fi

E2E_SKIP_REASON=
missing_binary=
if [ ! -x "$AVTRACE" ]; then
	missing_binary="no avtrace binary at '$AVTRACE' (run make, or set AVTRACE)"
else
	E2E_SKIP_REASON=$(ptrace_skip_reason)
fi
export E2E_SKIP_REASON

mkdir -p "$E2E_OUT"
passed=0 failed=0 skipped=0
declare -A file_secs=()
for i in "${!run_funcs[@]}"; do
	f=${run_files[$i]}
	t=${run_funcs[$i]}
	name=${t#t_}
	dir=$E2E_OUT/$name
	if [ -n "$missing_binary" ]; then
		echo "FAIL $name: $missing_binary"
		failed=$((failed + 1))
		continue
	fi
	rm -rf "$dir" "$dir.reason" "$dir.log"
	mkdir -p "$dir"
	limit=$(limit_of "$f" "$t")
	start=$SECONDS
	# timeout runs the test in its own process group and signals all of it.
	E2E_LIMIT=$limit timeout -k 5 "$limit" bash "$E2E_DIR/run.sh" --run-one "$f" "$t" "$dir" \
		>"$dir.log" 2>&1 </dev/null
	rc=$?
	secs=$((SECONDS - start))
	file_secs[$f]=$((${file_secs[$f]:-0} + secs))
	reason=
	[ -s "$dir.reason" ] && reason=$(head -n 1 "$dir.reason")
	case $rc in
	0)
		echo "PASS $name ($secs s)"
		passed=$((passed + 1))
		[ $keep = 1 ] || rm -rf "$dir" "$dir.reason" "$dir.log"
		;;
	77)
		echo "SKIP $name: ${reason:-skipped}"
		skipped=$((skipped + 1))
		rm -rf "$dir" "$dir.reason" "$dir.log"
		;;
	*)
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			reason="timed out after ${limit} s${reason:+ ($reason)}"
		elif [ -z "$reason" ]; then
			reason="exited with status $rc"
		fi
		echo "FAIL $name: $reason ($secs s)"
		tail -n 15 "$dir.log" | sed 's/^/    | /'
		echo "    (kept in $dir, log $dir.log)"
		failed=$((failed + 1))
		;;
	esac
done

if [ ${#file_secs[@]} -gt 1 ]; then
	echo "slowest files:"
	for f in "${!file_secs[@]}"; do
		echo "${file_secs[$f]} $(basename "$f")"
	done | sort -rn | head -n 10 | while read -r n f; do printf '  %5d s  %s\n' "$n" "$f"; done
fi

summary="$passed passed, $failed failed"
[ $skipped -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ $failed -eq 0 ]
