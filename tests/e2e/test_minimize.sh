# shellcheck shell=bash
# The minimal failing schedule (avtrace minimize, and the step of avtrace
# test): on the bank demo and small bug targets the minimal schedule has
# the fewest switches any schedule of the bug needs (an exhaustive search
# below replays every schedule with fewer), it replays the bug 10 times of
# 10, and the report's first 25 lines show the switches and the failure.
# Run with tests/e2e/run.sh test_minimize.sh.

# limit: 330

# switches SCHED: thread changes between consecutive run/yield lines.
switches() {
	awk '$1 == "run" || $1 == "yield" { if (n++ && $2 != last) k++; last = $2 } END { print k + 0 }' "$1"
}

# failure_of JSON: what must stay the same: outcome, signal, exit status,
# failure site, deadlock cycle.
failure_of() {
	jq -c '[.outcome, .failure.signal, .exit_status, .failure.file, .failure.line,
		[(.deadlock // [])[] | [.waits_for, .object]]]' "$1"
}

# Exhaustive search: does some schedule of DIR's recorded events with at
# most MAX switches fail as REF (failure_of) does?  Depth first over
# prefixes of blocks (thread, count), each replayed as "prefix, free" (one
# that fails so is replayed twice more: it counts if it fails every time); a
# prefix the program cannot follow cuts its extensions (and the longer
# counts of its last block).  Prints the failing schedule and returns 0,
# or returns 1.  EXH_REPLAYS counts the replays.
EXH_REPLAYS=0
declare -a EXH_STEPS EXH_LEFT
exh_try() { # DIR REF: replays EXH_STEPS; 0 same failure, 1 not, 2 infeasible within the prefix
	local f=exh.sched s st
	{
		echo "avtrace-schedule 1"
		for s in "${EXH_STEPS[@]}"; do echo "run $s"; done
		echo free
	} >$f
	EXH_REPLAYS=$((EXH_REPLAYS + 1))
	"$AVTRACE" replay -d "$1" --file $f --json >exh.json 2>/dev/null
	if [ "$(failure_of exh.json)" = "$2" ]; then
		# after "free" a run may hang on time slices: a schedule of the
		# bug fails so every time (here: twice more)
		EXH_REPLAYS=$((EXH_REPLAYS + 2))
		"$AVTRACE" replay -d "$1" --file $f --json >exh2.json 2>/dev/null
		"$AVTRACE" replay -d "$1" --file $f --json >exh3.json 2>/dev/null
		[ "$(failure_of exh2.json)" = "$2" ] && [ "$(failure_of exh3.json)" = "$2" ] && return 0
		echo "exhaustive: $(grep '^run' $f | tr '\n' ' ')fails only sometimes" >&3
		return 1
	fi
	st=$(jq -r 'if .outcome == "INFEASIBLE" then .step else 0 end' exh.json)
	[ "$st" -gt 0 ] && [ "$st" -le "${#EXH_STEPS[@]}" ] && return 2
	return 1
}
exh_search() { # DIR REF MAX LAST: 0 found, 1 not, 2 this prefix is infeasible
	local dir=$1 ref=$2 max=$3 last=$4 t c r
	exh_try "$dir" "$ref"
	r=$?
	if [ $r -eq 0 ]; then
		printf '%s\n' "${EXH_STEPS[@]}" >exh.found
		return 0
	fi
	[ $r -eq 2 ] && return 2
	[ "${#EXH_STEPS[@]}" -gt "$max" ] && return 1
	for t in "${!EXH_LEFT[@]}"; do
		[ "$t" = "$last" ] && continue
		for ((c = 1; c <= EXH_LEFT[t]; c++)); do
			EXH_STEPS+=("T$t $c")
			EXH_LEFT[t]=$((EXH_LEFT[t] - c))
			exh_search "$dir" "$ref" "$max" "$t"
			r=$?
			EXH_LEFT[t]=$((EXH_LEFT[t] + c))
			unset 'EXH_STEPS[-1]'
			[ $r -eq 0 ] && return 0
			[ $r -eq 2 ] && break # a longer block cannot be followed either
		done
	done
	return 1
}
# fails_within DIR REF MAX: the search from the recorded events' counts
fails_within() {
	local t n
	EXH_STEPS=()
	EXH_LEFT=()
	while read -r t n; do
		EXH_LEFT[${t#T}]=$n
	done < <(awk '$1 == "run" { c[$2] += $3 } END { for (t in c) print t, c[t] }' "$1/schedules/0000.sched")
	exh_search "$1" "$2" "$3" -1
}

# check_minimal OUT X: the minimal schedule of report X: its switches as
# min.json says, 10 of 10 replays (REPEATS) fail the same way, no schedule with fewer
# switches fails so (exhaustive, when EXHAUSTIVE=1), the report's first
# 25 lines show the switches and the failure.
check_minimal() {
	local out=$1 x=$2 k ref i
	expect_file "$out/reports/$x.min.sched"
	expect_file "$out/reports/$x.min.json"
	k=$(switches "$out/reports/$x.min.sched")
	expect_eq "$(jq '.switches | length' "$out/reports/$x.min.json")" "$k" "switches in $x.min.json"
	expect_eq "$(jq -r '[.switches[] | .from != .to and (.step | type) == "number"] | all' \
		"$out/reports/$x.min.json")" true "switch objects"
	ref=$(failure_of "$out/reports/$x.min.json")
	expect_eq "$(failure_of "$out/replays/${x#explore-}.json")" "$ref" "the minimal schedule fails as the reproduced one"
	head -25 "$out/reports/$x.txt" >first.txt
	sed 's/^/  | /' first.txt >&3
	expect_match "$(sed -n 1p first.txt)" "^(BUG|DEADLOCK) reproduced" "headline"
	expect_match "$(cat first.txt)" "^fails with these $k switch(es)? " "switch count"
	expect_eq "$(grep -cE '^  [0-9]+\. step [0-9]+, T[0-9]+ -> T[0-9]+:' first.txt)" "$k" "switch lines"
	expect_match "$(cat first.txt)" "^the failure: " "failure line"
	expect_match "$(cat first.txt)" "^replay it: avtrace replay -d .* --file .*/$x[.]min[.]sched" "command"
	for ((i = 1; i <= ${REPEATS:-10}; i++)); do
		avt_timed 60 replay -d "$out" --file "$out/reports/$x.min.sched" --json >r.json 2>/dev/null
		expect_eq "$?" 1 "exit status of replay $i of the minimal schedule"
		expect_eq "$(failure_of r.json)" "$ref" "failure of replay $i"
	done
	if [ "${EXHAUSTIVE:-0}" = 1 ] && [ "$k" -gt 0 ]; then
		if fails_within "$out" "$ref" $((k - 1)); then
			fail "a schedule with fewer than $k switches fails the same way: $(tr '\n' ' ' <exh.found)"
		fi
		echo "exhaustive: no schedule with at most $((k - 1)) switches fails so ($EXH_REPLAYS replays)" >&3
		[ "$EXH_REPLAYS" -gt 1 ] || fail "the exhaustive search replayed nothing"
	fi
	MIN_SWITCHES=$k
}

# limit: 330
t_minimize_bank() {
	need_jq
	avt_timed 300 test -q -f -o out --no-explore -- "$EXAMPLES/bank" 1000 >out.test 2>&1
	expect_eq "$?" 1 "exit status of avtrace test"
	sed 's/^/  | /' out.test >&3
	x=$(basename "$(ls out/reports/*.txt)" .txt)
	expect_match "$(cat out.test)" "#[0-9]+ fails with 2 switches" "test's summary line"
	EXHAUSTIVE=1 check_minimal out "$x"
	expect_eq "$MIN_SWITCHES" 2 "switches of the lost deposit"
	line=$(grep -n 'balance = b; /\* WRITE LINE' "$REPO/examples/bank.c" | cut -d: -f1)
	expect_match "$(head -25 out/reports/$x.txt)" "^the failure: SIGABRT in T0 at bank[.]c:[0-9]+ \\(main\\)" "failure"
	# the passing neighbour: one switch moved later makes the run pass
	expect_match "$(head -25 out/reports/$x.txt)" "^moving T[12]'s .* after T[12]'s .* makes it pass" "neighbour"
	expect_eq "$(jq '[.switches[] | select(.neighbour.passes)] | length > 0' out/reports/$x.min.json)" true \
		"a neighbour that passes"
	# the original report is kept below
	expect_match "$(cat out/reports/$x.txt)" "^---- the reproduced schedule's report ----" "kept report"
	expect_match "$(cat out/reports/$x.txt)" "write balance +bank[.]c:$line" "interleaving kept"
}

# limit: 330
t_minimize_json_sarif() {
	need_jq
	avt_timed 300 test -q -f -o out --no-explore --json --sarif out.sarif -- "$EXAMPLES/bank" 1000 >doc.json 2>err.out
	expect_eq "$?" 1 "exit status"
	expect_eq "$(jq '.bugs[0].switches | length' doc.json)" 2 "switches in --json"
	expect_match "$(jq -r '.bugs[0].minimal_schedule' doc.json)" "/reports/0*[0-9]+[.]min[.]sched$" "minimal schedule"
	expect_match "$(jq -r '.bugs[0].minimal_reproduce' doc.json)" "^avtrace replay -d .* --file " "command"
	expect_eq "$(jq '.runs[0].results[0].properties.switches | length' out.sarif)" 2 "switches in SARIF"
	expect_match "$(jq -r '.runs[0].results[0].properties.minimalSchedule' out.sarif)" "[.]min[.]sched$" "SARIF path"
}

# A schedule with many needless switches (the recorded order interleaved
# with the prediction's) comes down to the prediction's two.
# limit: 330
t_minimize_command_file() {
	need_jq
	avt_timed 300 test -q -f -o out --no-explore --no-minimize -- "$EXAMPLES/bank" 1000 >out.test 2>&1
	expect_eq "$?" 1 "exit status of avtrace test"
	x=$(basename "$(ls out/reports/*.txt)" .txt)
	expect_no_file "out/reports/$x.min.sched"
	# the failing run in full as a schedule, each thread's start moved right
	# after its creation: switches that change nothing
	jq -r '.interleaving[] | select(.kind != "fatal_signal") | "\(.thread) \(.kind) \(.object // "-")"' \
		"out/replays/$x.json" | awk '
		{ th[NR] = $1; k[NR] = $2; o[NR] = $3 }
		END {
			for (i = 1; i <= NR; i++) if (k[i] == "start") first[th[i]] = i
			for (i = 1; i <= NR; i++) {
				if (k[i] == "start" && moved[th[i]]) continue
				seq[++n] = th[i]
				if (k[i] == "create" && (t = substr(o[i], 2)) in first) { seq[++n] = t; moved[t] = 1 }
			}
			print "avtrace-schedule 1"
			for (i = 1; i <= n; i++) {
				if (i > 1 && seq[i] != seq[i - 1]) { print "run T" seq[i - 1], c; c = 0 }
				c++
			}
			print "run T" seq[n], c
			print "free"
		}' >many.sched
	sed 's/^/  | /' many.sched >&3
	k=$(switches many.sched)
	[ "$k" -ge 6 ] || fail "the long schedule has only $k switches"
	avt_timed 60 replay -d out --file many.sched >/dev/null 2>&1
	expect_eq "$?" 1 "the long schedule fails"
	cp many.sched many2.sched
	avt_timed 300 minimize -d out --file many.sched --max-replays 40 >min.out 2>min.err
	expect_eq "$?" 0 "exit status of avtrace minimize"
	expect_match "$(head -3 min.out)" "^fails with these 2 switches" "minimised"
	expect_eq "$(switches out/reports/many.min.sched)" 2 "switches of many.min.sched"
	n=$(jq '.minimize.candidates' out/reports/many.min.json)
	[ "$n" -le 40 ] || fail "$n replays, more than the cap"
	avt_timed 60 replay -d out --file out/reports/many.min.sched >/dev/null 2>&1
	expect_eq "$?" 1 "the minimal schedule fails"
	# the cap is kept
	avt_timed 300 minimize -d out --file many2.sched --max-replays 2 -q >/dev/null 2>&1
	expect_eq "$(jq '.minimize.candidates' out/reports/many2.min.json)" 2 "candidates under --max-replays 2"
	expect_eq "$(jq '.minimize.capped' out/reports/many2.min.json)" true "capped"
	# by number: the prediction's own schedule, its replay the reference
	avt_timed 300 minimize -d out --schedule "$((10#$x))" -q >/dev/null 2>&1
	expect_eq "$?" 0 "avtrace minimize --schedule"
	expect_eq "$(switches "out/reports/$x.min.sched")" 2 "switches by --schedule"
	# a schedule that passes: nothing to minimise
	printf 'avtrace-schedule 1\nfree\n' >pass.sched
	avt_timed 60 minimize -d out --file pass.sched >/dev/null 2>err.txt
	expect_eq "$?" 1 "exit status for a passing schedule"
	expect_match "$(cat err.txt)" "^avtrace: 'pass.sched' does not reproduce a bug \\(PASS\\)" "message"
	avt minimize -d out >/dev/null 2>err.txt
	expect_eq "$?" 2 "no schedule given"
	expect_match "$(avt minimize --help)" "^usage: avtrace minimize" "help"
}

# Bug targets of tests/targets that avtrace test reproduces quickly: each
# minimal schedule is checked (exhaustively on the two smallest).
minimize_target() { # EXHAUSTIVE PROG [ARGS...]
	need_jq
	local ex=$1 p=$2 r x
	shift 2
	avt_timed 300 test -q -f -o "t_$p" --no-explore -- "$(target "$p")" "$@" >"$p.out" 2>&1
	expect_eq "$?" 1 "exit status of avtrace test on $p"
	sed 's/^/  | /' "$p.out" >&3
	for r in "t_$p"/reports/*.txt; do
		x=$(basename "$r" .txt)
		EXHAUSTIVE=$ex check_minimal "t_$p" "$x"
		echo "$p: report $x: $MIN_SWITCHES switches" >&3
	done
}
t_minimize_checkthenact() { minimize_target 1 checkthenact 1000; }
t_minimize_lockorder() { minimize_target 1 lockorder 1000; }
t_minimize_invariant() { minimize_target 0 invariant 1000; }
t_minimize_vec_copy() { minimize_target 0 vec_copy 1000; }

# A bug found by exploration: its run (a schedule with a switch at every
# turn the exploration took) is minimised too, and the copies beside the
# report say so.
# limit: 330
t_minimize_explore() {
	need_jq
	avt_timed 300 test -q -f -o out --no-order -- "$(target explore_checker)" 0 >out.test 2>&1
	expect_eq "$?" 1 "exit status of avtrace test"
	sed 's/^/  | /' out.test >&3
	rundir=$(sed -n 's/^  confirmed: avtrace replay -d \(.*\) --schedule 0$/\1/p' out.test)
	[ -n "$rundir" ] || fail "no confirmed run named in the output"
	x=$(basename "$(ls out/reports/explore-*.txt)" .txt)
	expect_file "out/reports/$x.min.sched"
	expect_file "out/reports/$x.min.json"
	expect_match "$(cat out.test)" "^  fails with [0-9]+ switch(es)? \\([0-9]+ in the run; " "summary line"
	before=$(switches "$rundir/schedules/0000.sched")
	k=$(switches "out/reports/$x.min.sched")
	echo "explored run: $before switches, minimal: $k" >&3
	[ "$k" -lt "$before" ] || fail "no switch removed from the explored run's $before"
	# the report copied beside the others, and the run's own, lead with it
	expect_match "$(head -25 "out/reports/$x.txt")" "^fails with these $k switch(es)? " "report"
	check_minimal "$rundir" 0000
	expect_eq "$MIN_SWITCHES" "$k" "switches of the run's minimal schedule"
}

# More bug targets (memory accesses, an exit status): no exhaustive search
# but on mem_order (one switch: every schedule with none is tried), and 5
# replays of the minimal schedule, to keep within the time limit on
# ptrace alone.
t_minimize_mem_order() { REPEATS=5 minimize_target 1 mem_order; }
t_minimize_acc_setters() { REPEATS=5 minimize_target 0 acc_setters; }

# C++ (std::mutex, std::thread, std::vector): the bank bug of
# cxx_account.cc, found by a prediction (since issue 30's heap and stack
# precision; before, by exploration from a prediction's start); its
# minimal schedule has the two switches of the lost deposit, and no
# schedule with one switch fails so.
# limit: 330
t_minimize_cxx() {
	need_jq
	avt_timed 300 test -q -f -o out -- "$(target cxx_account)" 1000 >out.test 2>&1
	expect_eq "$?" 1 "exit status of avtrace test"
	sed 's/^/  | /' out.test >&3
	local rundir x
	rundir=$(sed -n 's/^  confirmed: avtrace replay -d \(.*\) --schedule 0$/\1/p' out.test)
	x=0000
	if [ -z "$rundir" ]; then # a prediction's report
		rundir=out
		x=$(find out/reports -name '[0-9]*.txt' | sort | head -n 1)
		[ -n "$x" ] || fail "no report and no confirmed run named in the output"
		x=$(basename "$x" .txt)
	fi
	EXHAUSTIVE=1 check_minimal "$rundir" "$x"
	expect_eq "$MIN_SWITCHES" 2 "switches of the lost deposit"
	local l
	l=$(marker_line "$SRC/cxx_account.cc" "/* ASSERT LINE */") || exit
	expect_match "$(head -25 "$rundir/reports/$x.txt")" "^the failure: SIGABRT in T0 at cxx_account[.]cc:$l \\(main\\)" "failure"
}
