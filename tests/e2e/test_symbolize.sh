# shellcheck shell=bash
# shellcheck disable=SC2153  # SRC comes from lib.sh
# Acceptance tests of the symbolizer through `avtrace dump --json`: sites,
# functions and variable names in a program of several files with a shared
# library of its own (tests/targets/multi/), built -O0 and -O2, PIE and
# non-PIE, stripped; heap objects; crash backtraces; mismatched debug info.

MSRC="$REPO/tests/targets/multi"

# one_value DIR JQ-FILTER: the distinct values the filter yields, one line.
values() {
	avt dump -d "$1" --json | jq -r "$2" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

check_variant() {
	local v=$1 work lib job
	work=$(marker_line "$MSRC/work.c" "/* WORK LOCK LINE */") || exit
	lib=$(marker_line "$MSRC/lib.c" "/* LIB LOCK LINE */") || exit
	job=$(marker_line "$MSRC/work.c" "/* JOB MALLOC LINE */") || exit
	record out "multi_$v"
	expect_recorded out 0
	expect_count out acquire pool.m 4
	expect_count out acquire lib_state.lock 4
	expect_eq "$(values out 'select(.obj_name == "pool.m" and .kind == "acquire") | "\(.site) \(.func)"')" \
		"work.c:$work work_locked" "site of pool.m's acquires ($v)"
	expect_eq "$(values out 'select(.obj_name == "lib_state.lock" and .kind == "acquire") | "\(.site) \(.func)"')" \
		"lib.c:$lib lib_bump" "site of lib_state.lock's acquires, inside the shared library ($v)"
	expect_match "$(values out 'select(.func == "job_run" and .kind == "acquire") | .obj_name')" \
		"^heap#[0-9]+ \\(56 bytes, malloc at work[.]c:$job in job_run\\) [+]8\$" "heap lock name ($v)"
}

t_sym_pie_O0() { need_jq; check_variant O0; }
t_sym_pie_O2() { need_jq; check_variant O2; }
t_sym_nopie() { need_jq; check_variant nopie; }

t_sym_stripped_falls_back() {
	need_jq
	lib=$(marker_line "$MSRC/lib.c" "/* LIB LOCK LINE */") || exit
	record out multi_stripped
	expect_recorded out 0
	avt dump -d out >dump.txt 2>err.txt || fail "dump of a stripped program failed"
	expect_eq "$(values out 'select(.kind == "acquire" and (.site | test("^multi_stripped[+]0x[0-9a-f]+$"))) | .kind')" \
		acquire "executable sites as module+0xoff"
	expect_eq "$(values out 'select(.obj_name == "lib_state.lock" and .kind == "acquire") | .site')" \
		"lib.c:$lib" "the library keeps its debug info"
}

# Every lock that is a global or a member of one is named, and every event
# whose caller has debug information has a file.c:LINE site.
t_sym_every_global_lock_named() {
	need_jq
	for prog in mutex_counter multi_O0 condvar rwlock; do
		record "$prog" "$prog"
		expect_recorded "$prog" 0
		unnamed=$(avt dump -d "$prog" --json |
			jq -r 'select(.kind | test("acquire|release|wait|signal|broadcast")) | select(.obj_name == null) | .seq' | head -3)
		expect_eq "$unnamed" "" "events of $prog without obj_name"
		nosite=$(avt dump -d "$prog" --json |
			jq -r 'select(.kind != "start" and .kind != "exit") | select(.site | test("[.]c:[0-9]+$") | not) | .seq' | head -3)
		expect_eq "$nosite" "" "events of $prog without a file.c:LINE site"
	done
}

t_sym_crash_backtrace() {
	need_jq
	crash=$(marker_line "$SRC/crash.c" "/* CRASH LINE */") || exit
	record out crash
	expect_recorded out 139
	last=$(avt dump -d out --json | tail -n 1)
	expect_eq "$(printf '%s' "$last" | jq -r '.backtrace[0] | "\(.func) \(.site)"')" \
		"crash_here crash.c:$crash" "innermost frame"
	expect_match "$(printf '%s' "$last" | jq -r '.backtrace[1] | "\(.func) \(.site)"')" \
		'^main crash[.]c:[0-9]+$' "caller frame"
	expect_match "$(avt dump -d out | tail -n 1)" "backtrace: crash_here crash[.]c:$crash <- main crash[.]c:" "text dump"
}

t_sym_mismatched_build_id() {
	need_jq
	cp "$(target multi_O0)" ./prog && cp "$TARGETS/libmulti.so" . || exit
	record out ./prog
	expect_recorded out 0
	cp "$(target multi_nopie)" ./prog # same path, other build-id
	avt dump -d out --json >dump.json 2>err.txt || fail "dump failed"
	expect_eq "$(grep -c 'build-id' err.txt)" 1 "one warning about the build-id"
	expect_match "$(cat err.txt)" "prog" "the warning names the file"
	expect_eq "$(jq -r 'select(.kind == "acquire" and .thread != "T0") | .site' dump.json | grep -c 'work[.]c')" 0 \
		"no line from the wrong binary"
	expect_match "$(jq -r 'select(.kind == "acquire") | .site' dump.json)" '^prog[+]0x[0-9a-f]+$' "module+0xoff fallback"
}

t_sym_no_heap_flag() {
	need_jq
	avt record -q --no-heap -o out -- "$(target multi_O0)" >/dev/null 2>&1 || fail "record --no-heap failed"
	expect_match "$(values out 'select(.func == "job_run" and .kind == "acquire") | .obj_name')" '^null$' \
		"heap lock unnamed without heap hooks"
}
