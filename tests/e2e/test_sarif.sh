# shellcheck shell=bash
# SARIF 2.1.0 (`avtrace test --sarif`, `avtrace summary --sarif`) and
# `avtrace test --json` (docs/json-output.md).  The SARIF logs are checked
# by the SARIF project's reference validator (`sarif-multitool validate`,
# npm package @microsoft/sarif-multitool, installed by `scripts/setup
# --test`): zero errors and zero warnings.  Run with tests/e2e/run.sh sarif.

# in_repo ARGS...: avtrace ARGS run from the repository root (the recorded
# cwd, so the source root of the SARIF is the repository).
in_repo() {
	(cd "$REPO" && avt_timed 120 "$@")
}

# limit: 150
t_sarif_bug_validates() {
	need_jq
	local out=$PWD/out l_assert l_read l_write st n
	l_assert=$(marker_line "$REPO/examples/bank.c" "/* ASSERT LINE */") || exit
	l_read=$(marker_line "$REPO/examples/bank.c" "/* READ LINE */") || exit
	l_write=$(marker_line "$REPO/examples/bank.c" "/* WRITE LINE */") || exit
	in_repo test -q -o "$out" --no-explore --sarif "$PWD/bank.sarif" -- examples/bin/bank 1000 >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 1 "exit status of avtrace test on bank"
	expect_file bank.sarif
	# one result per distinct reproduced bug: as many as reports
	n=$(find out/reports -name '*.txt' | wc -l)
	expect_eq "$(jq '.runs | length' bank.sarif)" 1 "runs"
	expect_eq "$(jq '.runs[0].results | length' bank.sarif)" "$n" "results (one per report)"
	expect_eq "$(jq -r '.runs[0].results[0].ruleId' bank.sarif)" "avtrace/penelope/RWW" "rule id"
	expect_eq "$(jq -r '.runs[0].results[0].level' bank.sarif)" "error" "level"
	expect_eq "$(jq -r '.runs[0].tool.driver.rules[0].id' bank.sarif)" "avtrace/penelope/RWW" "the rule"
	expect_eq "$(jq -r '.runs[0].originalUriBaseIds.SRCROOT.uri' bank.sarif)" "file://$REPO/" "SRCROOT"
	expect_eq "$(jq -r '.runs[0].results[0].locations[0].physicalLocation | "\(.artifactLocation.uriBaseId) \(.artifactLocation.uri):\(.region.startLine)"' bank.sarif)" \
		"SRCROOT examples/bank.c:$l_assert" "the failure location"
	expect_eq "$(jq -r '[.runs[0].results[0].relatedLocations[] | "\(.physicalLocation.artifactLocation.uri):\(.physicalLocation.region.startLine)"] | join(" ")' bank.sarif)" \
		"examples/bank.c:$l_read examples/bank.c:$l_write examples/bank.c:$l_write" "the predicted events"
	expect_match "$(jq -r '.runs[0].results[0].message.text' bank.sarif)" \
		"Reproduce: avtrace replay -d $out --schedule 1\\.\$" "the message"
	# one thread flow per thread, in the order the replay ran them, and
	# every event of the replay in it, in execution order
	expect_eq "$(jq -r '[.runs[0].results[0].codeFlows[0].threadFlows[].id] | join(",")' bank.sarif)" \
		"T0,T1,T2" "thread flows"
	expect_eq "$(jq '[.runs[0].results[0].codeFlows[0].threadFlows[].locations[]] | length' bank.sarif)" \
		"$(jq '.events' out/replays/0001.json)" "events in the code flow"
	expect_eq "$(jq -r '[.runs[0].results[0].codeFlows[0].threadFlows[] | select(.id == "T1") | .locations[].location.message.text] | join(",")' bank.sarif)" \
		"T1 start,T1 acquire balance_lock,T1 read balance,T1 release balance_lock,T1 acquire balance_lock,T1 write balance,T1 release balance_lock,T1 exit" \
		"T1's flow"
	# the summary of the same directory gives the same log
	in_repo summary -d "$out" --sarif "$PWD/summary.sarif" >summary.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace summary"
	cmp -s bank.sarif summary.sarif || fail "summary --sarif differs from test --sarif: $(diff bank.sarif summary.sarif | head -n 5)"
	sarif_validate bank.sarif
}

# limit: 150
t_sarif_deadlock_and_correct_program() {
	need_jq
	local st
	avt_timed 120 test -q -o dl --no-explore --sarif dl.sarif -- "$(target lockorder)" >dl.out 2>&1
	st=$?
	expect_eq "$st" 1 "exit status of avtrace test on lockorder"
	expect_eq "$(jq -r '[.runs[0].results[].ruleId] | join(" ")' dl.sarif)" "avtrace/deadlock/cycle" "rule ids"
	expect_eq "$(jq -r '[.runs[0].results[0].relatedLocations[].message.text] | map(select(test("waits for lock"))) | length' dl.sarif)" 2 \
		"the wait-for cycle's threads"
	avt_timed 120 test -q -o ok --explore 3 --sarif ok.sarif --json -- "$(target mutex_counter)" >ok.json 2>ok.err
	st=$?
	expect_eq "$st" 0 "exit status of avtrace test on mutex_counter"
	expect_eq "$(jq -c '[.exit_status, (.bugs | length), .explore.runs, ([.explore.outcomes[]] | add)]' ok.json)" \
		"[0,0,3,3]" "test --json: exit status, bugs, exploration runs"
	expect_eq "$(jq -c '[(.runs | length), (.runs[0].results | length), (.runs[0].tool.driver.rules | length)]' ok.sarif)" \
		"[1,0,0]" "an empty run"
	sarif_validate dl.sarif ok.sarif
}

# limit: 150
t_test_json() {
	need_jq
	local st
	avt_timed 120 test -q -o out --no-explore -- "$REPO/examples/bin/bank" 1000 >table.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test"
	avt_timed 120 test -q -f -o out --no-explore --json -- "$REPO/examples/bin/bank" 1000 >doc.json 2>err.out
	st=$?
	expect_eq "$st" 1 "exit status of avtrace test --json"
	# stdout is one JSON document and nothing else
	expect_eq "$(jq -s 'length' doc.json)" 1 "documents on stdout"
	expect_eq "$(jq '.exit_status' doc.json)" "$st" "exit_status"
	expect_eq "$(jq '.recorded.threads' doc.json)" 3 "recorded threads"
	expect_eq "$(jq -c '.explore' doc.json)" null "explore (--no-explore)"
	# the table's rows: number, detectors, pattern, where, outcome
	grep -E '^  [0-9]+ ' table.out | awk '{print $1, $2, $3, $4, $6, $8, $9}' >table.rows
	jq -r '.predictions[] | "\(.schedule) \(.detectors | join("+")) \(.pattern) \(.where | split(" / ") | join(" ")) \(.outcome)"' \
		doc.json >json.rows
	[ -s table.rows ] || fail "no table rows in the output of avtrace test"
	diff table.rows json.rows >&3 || fail "the --json rows differ from the table (see log)"
	expect_eq "$(jq '.bugs | length' doc.json)" "$(find out/reports -name '*.txt' | wc -l)" "bugs (one per report)"
	expect_eq "$(jq -r '.bugs[0].rule' doc.json)" "avtrace/penelope/RWW" "rule"
	expect_eq "$(jq -r '.bugs[0].reproduce' doc.json)" "avtrace replay -d out --schedule 1" "reproduce command"
	expect_eq "$(jq -r '.bugs[0].headline' doc.json)" "$(head -n 1 out/reports/0001.txt)" "headline"
	expect_eq "$(jq -r '[.predictions[] | .bug] | map(tostring) | join(",")' doc.json)" "0,0,0" \
		"every schedule reproduced the one bug"
}
