# shellcheck shell=bash
# Issue 31, the smaller defects a new user met: a clang-built program's
# reports without source lines, reports without their replay command, the
# program's own stderr hidden, cut interleaving columns, a changed library
# replayed as INFEASIBLE, SARIF URIs with '..', and a demo that did not
# build the agent.  Run with tests/e2e/run.sh test_defects31.sh.

# `make demo` builds the agent (Makefile: demo depends on $(AGENT)): with
# AGENT pointing at a file that does not exist, `make -n demo` would build
# it; and the demo says it records through the agent, and does.
t_demo_records_through_agent() {
	local probe=$PWD/agent-probe.so st
	make -C "$REPO" -n demo AGENT="$probe" >make.out 2>&1
	sed 's/^/  | /' make.out >&3
	expect_match "$(cat make.out)" "-o $probe" "make -n demo (does demo build the agent?)"
	[ -e "$REPO/libavtrace-agent.so" ] || skip "libavtrace-agent.so is not built"
	AVTRACE_DEMO_OUT=$PWD/demo timeout 120 "$REPO/examples/demo.sh" >demo.out 2>&1
	st=$?
	sed 's/^/  | /' demo.out >&3
	expect_eq "$st" 0 "exit status of examples/demo.sh"
	expect_match "$(cat demo.out)" '^recording through the in-process agent' "the demo's output"
	expect_match "$(cat demo.out)" '^avtrace: [1-9][0-9,]* events through the in-process agent$' \
		"events recorded through the agent"
}

# every_report_replays OUT: each OUT/reports/*.txt ends with the command
# that re-enacts it, and that command reproduces its first line.
every_report_replays() {
	local out=$1 r cmd n=0
	for r in "$out"/reports/*.txt; do
		[ -e "$r" ] || fail "no report in $out/reports"
		cmd=$(sed -n 's/^  replay: \(avtrace replay -d .* --schedule [0-9][0-9]*\)$/\1/p' "$r")
		[ -n "$cmd" ] || fail "report '$r' has no replay command: $(tail -n 2 "$r")"
		# shellcheck disable=SC2086
		avt_timed 60 ${cmd#avtrace } >again.out 2>/dev/null
		expect_eq "$?" 1 "exit status of '$cmd'"
		expect_eq "$(head -n 1 again.out)" "$(head -n 1 "$r")" "first line of '$cmd'"
		n=$((n + 1))
	done
	echo "$n reports replayed by their own command" >&3
}

# limit: 150
t_reports_carry_replay_command() {
	avt_timed 120 test -q -o "$PWD/out" --no-explore -- "$EXAMPLES/bank" 1000 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on bank"
	every_report_replays out
}

# A bug found by exploration: its report (a copy of the confirmed run's)
# names that run's directory.
# limit: 330
t_explore_report_carries_replay_command() {
	avt_timed 300 test -q -o "$PWD/out" --no-order -- "$(target explore_checker)" 0 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on explore_checker"
	expect_eq "$(find out/reports -name 'explore-*.txt' | wc -l)" 1 "exploration reports"
	expect_match "$(cat out/reports/explore-*.txt)" '^  replay: avtrace replay -d .*/explore/runs/[0-9]+ --schedule 0$' \
		"the exploration report's replay command"
	every_report_replays out
}

# An out-of-tree build (`cd build && cc ../src/bank.c`): the debug
# information names build/../src/bank.c.  Tested from the top directory
# (the file is under SRCROOT: src/bank.c) and from a directory beside it
# (an absolute file URI, where the validator rejected the '..': SARIF1002);
# both logs validate.
# limit: 150
t_sarif_out_of_tree_build() {
	need_jq
	local l_assert top=$PWD
	l_assert=$(marker_line "$REPO/examples/bank.c" "/* ASSERT LINE */") || exit
	mkdir -p src build elsewhere && cp "$REPO/examples/bank.c" src/ || fail "cannot copy bank.c"
	(cd build && cc -std=gnu11 -O0 -g -pthread -o bank ../src/bank.c) || fail "cannot build bank out of tree"
	avt_timed 120 test -q -o out --no-explore --sarif top.sarif -- build/bank 1000 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on bank"
	(cd elsewhere && avt_timed 120 test -q -o out --no-explore --sarif "$top/beside.sarif" -- ../build/bank 1000) >test2.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on bank from elsewhere/"
	expect_eq "$(jq -r '.runs[0].results[0].locations[0].physicalLocation | "\(.artifactLocation.uriBaseId) \(.artifactLocation.uri):\(.region.startLine)"' top.sarif)" \
		"SRCROOT src/bank.c:$l_assert" "the failure location"
	expect_eq "$(jq -r '.runs[0].results[0].locations[0].physicalLocation | "\(.artifactLocation.uri):\(.region.startLine)"' beside.sarif)" \
		"file://$top/src/bank.c:$l_assert" "the failure location (from elsewhere/)"
	expect_no_match "$(jq -r '.. | .uri? // empty' top.sarif beside.sarif)" '(^|/)\.\.?(/|$)' "the SARIF's URIs"
	sarif_validate top.sarif beside.sarif
}

# A clang-built program (clang -g -O0: no .debug_aranges): every line of
# its report names clang_bank.c:LINE, never clang_bank+0xOFF (but for the
# C runtime's _start, past main in the backtrace, which has no DWARF).
# limit: 150
t_clang_report_has_source_lines() {
	local prog src=$SRC/clang/clang_bank.c l_assert l_read l_write l_amount r
	[ -x "$TARGETS/clang_bank" ] || skip "clang_bank is not built (no clang)"
	prog=$TARGETS/clang_bank
	readelf -S "$prog" | grep -q debug_aranges && fail "clang_bank has .debug_aranges: the test tests nothing"
	l_assert=$(marker_line "$src" "/* ASSERT LINE */") || exit
	l_read=$(marker_line "$src" "/* READ LINE */") || exit
	l_write=$(marker_line "$src" "/* WRITE LINE */") || exit
	l_amount=$(marker_line "$src" "/* AMOUNT LINE */") || exit
	avt_timed 120 test -o out --no-explore -- "$prog" >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on clang_bank"
	sed 's/^/  | /' test.out >&3
	expect_no_match "$(grep -E '^  [0-9]+ ' test.out)" 'clang_bank\+0x' "the table's where column"
	for r in out/reports/*.txt; do
		[ -e "$r" ] || fail "no report"
		sed 's/^/  | /' "$r" >&3
		expect_match "$(head -n 1 "$r")" "^BUG reproduced: SIGABRT in T0 at clang_bank[.]c:$l_assert \\(main\\)\$" "the headline"
		expect_match "$(cat "$r")" "read balance  clang_bank[.]c:$l_read\$" "the read's line"
		expect_match "$(cat "$r")" "write balance  clang_bank[.]c:$l_write\$" "the write's line"
		expect_match "$(grep '^  backtrace:' "$r")" "<- main clang_bank[.]c:$l_assert <-" "the backtrace"
		# clang's frame base is rbp itself (DW_OP_reg6): locals still named
		# (a local of main alice's thread reads: main's own accesses to its
		# frame are no events, issue 30)
		expect_match "$(cat "$r")" "read main's stack: alice_amount  clang_bank[.]c:$l_amount\$" "a local of main"
		expect_no_match "$(grep -v '^  backtrace:' "$r")" 'clang_bank\+0x' "report '$r'"
		expect_no_match "$(sed -n 's/^  backtrace:\(.*\) <- main .*/\1/p' "$r")" 'clang_bank\+0x' "the backtrace to main"
		# every event line with a site names its source line
		expect_no_match "$(grep -E '^ +(acquire|release|read|write|create|join) ' "$r" |
			grep -vE '  clang_bank[.]c:[0-9]+$')" . "event lines without clang_bank.c:LINE"
	done
}

# The failing replay's stderr is in the report and in the JSON: the
# assert's message for bank; for a variant that writes 100 lines and then
# exits 1, its last 40 lines (bounded), the last one included.
# limit: 150
t_report_shows_program_stderr() {
	need_jq
	local r
	avt_timed 120 test -q -o out --no-explore --json -- "$EXAMPLES/bank" 1000 >test.json 2>test.err
	expect_eq "$?" 1 "exit status of avtrace test on bank"
	r=$(jq -r '.bugs[0].report' test.json)
	expect_file "$r"
	sed 's/^/  | /' "$r" >&3
	expect_match "$(cat "$r")" "^  the program's stderr:\$" "the report"
	expect_match "$(cat "$r")" "^    \\| bank: .*bank[.]c:[0-9]+: main: Assertion \`balance == 175' failed[.]\$" "the report's stderr"
	expect_match "$(jq -r '.bugs[0].stderr' test.json)" "Assertion \`balance == 175' failed" "--json's bugs[0].stderr"
	expect_match "$(jq -r '.stderr' out/replays/0001.json)" "Assertion \`balance == 175' failed" "replays/0001.json's stderr"
	# a long stderr, and a plain exit status 1
	sed 's|^\tassert(balance == 175); /\* ASSERT LINE \*/$|\tif (balance != 175) { for (int i = 0; i < 100; i++) fprintf(stderr, "noise %d\\n", i); fprintf(stderr, "lost update: balance=%ld\\n", balance); exit(1); }|' \
		"$REPO/examples/bank.c" >noisy.c
	grep -q 'lost update' noisy.c || fail "cannot make noisy.c"
	cc -std=gnu11 -O0 -g -pthread -o noisy noisy.c || fail "cannot build noisy.c"
	avt_timed 120 test -q -o out2 --no-explore -- ./noisy 1000 >test2.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on noisy"
	for r in out2/reports/*.txt; do
		[ -e "$r" ] || fail "no report for noisy"
		sed 's/^/  | /' "$r" >&3
		expect_match "$(head -n 1 "$r")" 'exit status 1' "the headline"
		expect_match "$(cat "$r")" "^  the program's stderr \\(its last lines\\):\$" "the report"
		expect_match "$(cat "$r")" '^    \| lost update: balance=1[25][05]$' "the last line of stderr"
		expect_eq "$(grep -c '^    | ' "$r")" 40 "stderr lines in the report"
		expect_no_match "$(cat "$r")" 'noise 0$' "the report"
	done
	expect_eq "$(jq -r '.stderr_truncated' out2/replays/0001.json)" true "stderr_truncated"
	# what no report shows (--json: no report) goes to stderr, all of it
	avt_timed 60 replay -d out2 --schedule 1 --json >r.json 2>r.err
	expect_eq "$?" 1 "exit status of replay --json"
	expect_eq "$(grep -c '^noise [0-9]*$' r.err)" 100 "noise lines passed on to stderr"
	expect_match "$(tail -n 1 r.err)" '^lost update: balance=1[25][05]$' "the last line passed on"
}

# The interleaving's columns are never cut: with a 70-character source
# file name every event line still ends with NAME.c:LINE whole.
# limit: 150
t_interleaving_not_cut() {
	local name=a_rather_long_source_file_name_so_that_the_interleaving_columns_overflow r n
	cp "$REPO/examples/bank.c" "$name.c" || fail "cannot copy bank.c"
	cc -std=gnu11 -O0 -g -pthread -o bank "$name.c" || fail "cannot build $name.c"
	avt_timed 120 test -q -o out --no-explore -- ./bank 1000 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test"
	for r in out/reports/*.txt; do
		[ -e "$r" ] || fail "no report"
		sed 's/^/  | /' "$r" >&3
		n=$(grep -cE "^ +(acquire|release|read|write) .*  $name[.]c:[0-9]+\$" "$r")
		[ "$n" -ge 12 ] || fail "only $n whole event lines in '$r'"
		expect_no_match "$(grep -E '^ +(acquire|release|read|write|create|join) ' "$r" |
			grep -vE "  $name[.]c:[0-9]+\$")" . "event lines without a whole $name.c:LINE"
	done
}

# build_acct DIR BONUS: DIR/libacct.so, whose deposit() adds BONUS more
# than asked (a changed library: other code, another build-id).
build_acct() {
	mkdir -p "$1"
	cat >acct.c <<EOC
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long balance;
long deposit(long n)
{
	pthread_mutex_lock(&m);
	balance += n + $2;
	long b = balance;
	pthread_mutex_unlock(&m);
	return b;
}
EOC
	cc -O0 -g -fPIC -shared -Wl,--build-id -o "$1/libacct.so" acct.c || fail "cannot build $1/libacct.so"
}

# acct_program: ./acct, two threads depositing through libacct.so, found
# in new/ if it is there, else in old/ (its run path).
acct_program() {
	cat >acct_main.c <<'EOC'
#include <pthread.h>
#include <stdio.h>
long deposit(long n);
static void *client(void *arg) { deposit(1); return arg; }
int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, client, NULL);
	pthread_create(&b, NULL, client, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld\n", deposit(0));
	return 0;
}
EOC
	cc -O0 -g -pthread -o acct acct_main.c -Lold -lacct -Wl,-rpath,"$PWD/new:$PWD/old" ||
		fail "cannot build acct"
}

# A library rebuilt with other code since the recording: replay refuses
# (exit 2) naming it, instead of INFEASIBLE at step 1.
# limit: 90
t_replay_names_changed_library() {
	build_acct old 0
	acct_program
	avt_timed 60 record -o out -- ./acct >rec.out 2>&1 || fail "cannot record acct: $(tail -n 2 rec.out)"
	avt_timed 60 replay -d out --schedule 0 >same.out 2>&1
	expect_eq "$?" 0 "replay with the same library"
	build_acct old 1000
	avt_timed 60 replay -d out --schedule 0 >r.out 2>r.err
	expect_eq "$?" 2 "exit status of the replay after the library changed"
	sed 's/^/  | /' r.out r.err >&3
	expect_match "$(cat r.err)" "^avtrace: cannot replay: library '$PWD/old/libacct[.]so' changed since it was recorded \\(build-id [0-9a-f]+, recorded [0-9a-f]+\\); record again\$" \
		"the error"
	expect_no_match "$(cat r.out r.err)" INFEASIBLE "the replay's output"
}

# The same library name found elsewhere at replay (as after an updated
# ld.so.cache): the replay stops naming both paths, exit 2.
# limit: 90
t_replay_names_relocated_library() {
	build_acct old 0
	acct_program
	avt_timed 60 record -o out -- ./acct >rec.out 2>&1 || fail "cannot record acct: $(tail -n 2 rec.out)"
	build_acct new 1000
	avt_timed 60 replay -d out --schedule 0 >r.out 2>r.err
	expect_eq "$?" 2 "exit status of the replay with the library found elsewhere"
	sed 's/^/  | /' r.out r.err >&3
	expect_match "$(cat r.out)" "^ERROR: library 'libacct[.]so' is loaded from '$PWD/new/libacct[.]so' now, from '$PWD/old/libacct[.]so' when recorded; record again\$" \
		"the error"
}

# A recorded library path that is a FIFO now (a trace may come from
# anywhere): the check refuses it at once, it does not block opening it.
# limit: 90
t_replay_library_fifo_refused() {
	build_acct old 0
	acct_program
	avt_timed 60 record -o out -- ./acct >rec.out 2>&1 || fail "cannot record acct: $(tail -n 2 rec.out)"
	rm -f old/libacct.so && mkfifo old/libacct.so || fail "cannot make a FIFO"
	avt_timed 20 replay -d out --schedule 0 >r.out 2>r.err
	expect_eq "$?" 2 "exit status of the replay"
	expect_match "$(cat r.err)" "^avtrace: cannot replay: library '$PWD/old/libacct[.]so' of the recording is not a regular file\$" "the error"
}
