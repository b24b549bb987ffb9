# shellcheck shell=bash
# The picture of a bug: `avtrace report --html` and the page `avtrace test`
# writes beside each report (cli/html.c, docs/html-report.md), loaded in a
# real headless browser (Debian's chromium, installed by `scripts/setup
# --test`): the DOM the browser builds has the lanes, the switches, the
# predicted and the failing events, and a screenshot is drawn.  Without
# chromium the browser tests are skipped with a message.
# Run with tests/e2e/run.sh html.

need_chromium() {
	command -v chromium >/dev/null 2>&1 ||
		skip "chromium is not installed (apt-get install chromium, or scripts/setup --test)"
}

# chrome ARGS... PAGE: headless chromium as root in a sandboxless container:
# its own HOME and profile, no GPU, and a time limit (it must never hang a
# test).  Its noise (dbus) goes to chrome.err.
chrome() {
	mkdir -p chrome-home
	echo "+ chromium --headless $*" >&3
	HOME=$PWD/chrome-home timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--no-first-run --disable-extensions --user-data-dir="$PWD/chrome-home/profile" \
		"$@" 2>>chrome.err
	local st=$?
	[ $st -ne 124 ] || fail "chromium hung (killed after 60 s): $(tail -n 2 chrome.err)"
	return $st
}

# self_contained PAGE: nothing in it is fetched: no http(s) URL in a src
# or href, no external script, style sheet or font.
self_contained() {
	expect_file "$1"
	expect_no_match "$(cat "$1")" '(src|href)[[:space:]]*=[[:space:]]*["'\'']?[[:space:]]*(https?:)?//' "$1 (a remote src/href)"
	expect_no_match "$(cat "$1")" '<script[^>]*src' "$1 (an external script)"
	expect_no_match "$(cat "$1")" '<link|@import|url\([^#]' "$1 (an external style sheet or font)"
	expect_no_match "$(cat "$1")" 'https?://' "$1 (a network URL)"
}

# unescape: HTML text (as cli/html.c escapes it) back to plain text.
unescape() {
	sed "s/&lt;/</g; s/&gt;/>/g; s/&quot;/\"/g; s/&#39;/'/g; s/&amp;/\\&/g"
}

# count REGEX TEXT: how many matches of grep -oE REGEX in TEXT.
count() {
	printf '%s\n' "$2" | grep -oE -- "$1" | wc -l
}

# bank_test OUT: avtrace test on the bank demo, from the repository (1
# distinct bug, prediction 1: RWW on balance).
bank_test() {
	local st out=$1
	shift
	(cd "$REPO" && avt_timed 120 test -q -o "$out" --no-explore "$@" -- examples/bin/bank 1000) >test.out 2>&1
	st=$?
	sed 's/^/  | /' test.out >&3
	expect_eq "$st" 1 "exit status of avtrace test on bank"
}

# The page avtrace test writes beside the report, and report --html:
# self-contained, and the same page.
# limit: 150
t_html_beside_report() {
	local out=$PWD/out
	bank_test "$out"
	expect_file out/reports/0001.txt
	expect_file out/reports/0001.html
	self_contained out/reports/0001.html
	# one page per report, nothing else
	expect_eq "$(find out/reports -name '*.html' | wc -l)" "$(find out/reports -name '*.txt' | wc -l)" "pages"
	avt report -d "$out" --html page.html >report.out 2>report.err || fail "report --html failed: $(cat report.err)"
	expect_eq "$(cat report.out)" "page.html" "report's output"
	cmp -s page.html out/reports/0001.html || fail "report --html and test wrote different pages"
	expect_match "$(cat page.html)" "<pre id=\"cmd-dump\">avtrace dump -d $out/reports/0001.min.avt</pre>" "the dump of the minimal replay"
	# by schedule and by report, to stdout
	avt report -d "$out" --schedule 1 --html - >s1.html || fail "report --schedule 1 failed"
	cmp -s s1.html page.html || fail "--schedule 1 gives another page"
	avt report -d "$out" --report "$out/reports/0001.txt" --html - >r1.html || fail "report --report 0001 failed"
	cmp -s r1.html page.html || fail "--report 0001 gives another page"
	# a directory: one page per bug, named after its report
	avt report -d out --html pages/ >dir.out || fail "report --html DIR/ failed"
	expect_file pages/0001.html
	# errors
	avt report -d out --schedule 99 --html x.html 2>err99
	expect_eq "$?" 2 "exit status for a schedule that reproduced nothing"
	expect_one_line_error err99
	avt report -d out 2>errno
	expect_eq "$?" 2 "exit status without --html"
	expect_one_line_error errno
}

# With the minimal schedule (reports/X.min.sched and X.min.json, written by
# avtrace minimize / test): the page draws its replay and its switches
# (the "switches" array), the passing neighbour, and the --file command;
# without them, the reproduced schedule's.
# limit: 150
t_html_minimal_schedule() {
	need_jq
	local out=$PWD/out page
	bank_test "$out" --no-minimize
	page=$(cat out/reports/0001.html)
	expect_match "$page" "The schedule&#39;s 2 context switches" "the page without a minimal schedule"
	expect_no_match "$page" 'cmd-replay-min' "the page without a minimal schedule"
	expect_match "$page" "<pre id=\"cmd-dump\">avtrace dump -d $out/replays/0001.avt</pre>" "the dump of the run drawn"
	# one switch: the first change of thread of the reproduced run
	cp out/schedules/0001.sched out/reports/0001.min.sched
	jq '.interleaving as $il
	    | [range(1; $il | length) | select($il[.].thread != $il[. - 1].thread)][0] as $i
	    | . + {switches: [{step: 2, from: "T\($il[$i - 1].thread)", to: "T\($il[$i].thread)",
			      before: $il[$i - 1], after: $il[$i],
			      neighbour: {outcome: "PASS", passes: true, shift: 1,
					  moved: "T1 <start>", past: "T0 & read"}}]}' \
		out/replays/0001.json >out/reports/0001.min.json || fail "jq failed"
	avt report -d "$out" --html min.html >/dev/null || fail "report --html failed"
	self_contained min.html
	page=$(cat min.html)
	expect_match "$page" 'Fails with these 1 context switch</h2>' "the minimal schedule's heading"
	expect_eq "$(count 'class="switch" id="switch-[0-9]+"' "$page")" 1 "switch markers"
	expect_match "$page" 'switch 1: T0 &#8594; T1' "the switch's label"
	expect_match "$page" '<td class="neighbour">moving T1 &lt;start&gt; after T0 &amp; read makes it pass</td>' "the passing neighbour"
	expect_match "$page" "<pre id=\"cmd-replay-min\">avtrace replay -d $out --file $out/reports/0001.min.sched</pre>" "the minimal schedule's replay command"
	expect_no_match "$page" 'cmd-dump' "a minimal schedule with no trace of its replay (another run's is not it)"
	expect_match "$page" "<pre id=\"cmd-replay\">avtrace replay -d $out --schedule 1</pre>" "the replay command"
	expect_eq "$(count 'class="ev kind-[a-z_]+ predicted' "$page")" 3 "predicted events"
	expect_eq "$(count 'class="ev kind-[a-z_]+ failure' "$page")" 1 "failing events"
}

# The page in a real browser: the lanes, the schedule's switches, the
# predicted events (the RWW's three, numbered), the failing read at the
# assert's line, the backtrace, the commands; and a screenshot.
# limit: 150
t_html_in_browser() {
	need_chromium
	local out=$PWD/out dom l_assert l_read l_write
	l_assert=$(marker_line "$REPO/examples/bank.c" "/* ASSERT LINE */") || exit
	l_read=$(marker_line "$REPO/examples/bank.c" "/* READ LINE */") || exit
	l_write=$(marker_line "$REPO/examples/bank.c" "/* WRITE LINE */") || exit
	bank_test "$out"
	avt report -d "$out" --html "$PWD/bank.html" >/dev/null || fail "report --html failed"
	self_contained bank.html
	chrome --dump-dom "file://$PWD/bank.html" >dom.html || fail "chromium --dump-dom failed: $(tail -n 3 chrome.err)"
	dom=$(cat dom.html)
	# the browser built the document (its serialization, not our file)
	expect_match "$dom" '<html lang="en"><head>' "the DOM"
	expect_match "$dom" '</body></html>' "the DOM"
	# one lane per thread, in the order the run began them
	expect_eq "$(count 'class="lane" id="lane-T[0-9]+"' "$dom")" 3 "lanes"
	expect_eq "$(printf '%s\n' "$dom" | grep -oE 'id="lane-T[0-9]+"' | tr '\n' ' ')" \
		'id="lane-T0" id="lane-T1" id="lane-T2" ' "lane order"
	# every event of the run (31) is drawn, each with its kind
	expect_eq "$(count '<div id="ev-[0-9]+" class="ev kind-' "$dom")" \
		"$(jq '.interleaving | length' out/replays/0001.json)" "events drawn"
	# the schedule's switches (run T0 / run T1 / run T2: two)
	expect_eq "$(count 'class="switch" id="switch-[0-9]+"' "$dom")" 2 "switch markers"
	expect_match "$dom" 'switch 1: T0 → T1' "switch 1's label"
	expect_eq "$(count '<tr id="switch-row-' "$dom")" 2 "switch rows"
	expect_eq "$(count '<line class="handover forced"' "$dom")" 2 "forced hand-over arrows"
	# the predicted events: T1 read, T2 write, T1 write of balance, numbered
	expect_eq "$(count 'class="ev kind-[a-z_]+ predicted' "$dom")" 3 "predicted events"
	expect_match "$dom" "kind-read predicted[^>]*data-thread=\"T1\".*P1</span><span class=\"k\">read</span> <span class=\"o\">balance</span> <a class=\"loc\" href=\"file://$REPO/examples/bank.c\">bank.c:$l_read</a>" "P1"
	expect_match "$dom" "kind-write predicted[^>]*data-thread=\"T2\".*P2</span><span class=\"k\">write</span> <span class=\"o\">balance</span> <a class=\"loc\" [^>]*>bank.c:$l_write</a>" "P2"
	expect_match "$dom" "kind-write predicted[^>]*data-thread=\"T1\".*P3</span>" "P3"
	# the failing access: T0's read of balance at the assert, once
	expect_eq "$(count 'class="ev kind-[a-z_]+ failure' "$dom")" 1 "failing events"
	expect_match "$dom" "kind-read failure[^\"]*\" data-thread=\"T0\".*<span class=\"o\">balance</span> <a class=\"loc\" [^>]*>bank.c:$l_assert</a>" "the failing event"
	expect_eq "$(count 'kind-fatal_signal fatal' "$dom")" 1 "the fatal signal"
	# backtrace: main at the assert's line is the program's own frame
	expect_match "$dom" "<li class=\"frame own\">main — <a class=\"loc\" [^>]*>bank.c:$l_assert</a>" "backtrace"
	expect_match "$dom" '<ol class="frames" id="backtrace">' "backtrace"
	expect_match "$dom" "<pre id=\"cmd-replay\">avtrace replay -d $out --schedule 1</pre>" "replay command"
	expect_match "$dom" "<pre id=\"cmd-verify\">avtrace verify -d $out</pre>" "verify command"
	# a screenshot: a PNG of the window's size
	chrome --hide-scrollbars --window-size=1100,1400 --screenshot="$PWD/bank.png" \
		"file://$PWD/bank.html" >/dev/null || fail "chromium --screenshot failed: $(tail -n 3 chrome.err)"
	expect_file bank.png
	[ -s bank.png ] || fail "empty screenshot"
	expect_eq "$(head -c 8 bank.png | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "PNG signature"
	expect_eq "$(od -An -tu1 -j16 -N8 bank.png | awk '{print $3*256+$4 "x" $7*256+$8}')" 1100x1400 "screenshot size"
	# and more than a blank page: the PNG of a page with lanes and events
	# compresses far worse than a white one
	[ "$(stat -c %s bank.png)" -gt 20000 ] || fail "screenshot is nearly blank ($(stat -c %s bank.png) bytes)"
}

# Names and paths with < & " ' reach the page as text: the browser builds
# no element from them and shows them as written.  A hand-made directory
# (no ptrace needed): one replay that failed, its prediction, schedule.
# escapes_dir: the hand-made directory, in $d.
escapes_dir() {
	d=$PWD/we\"i\<r\&d\'dir
	mkdir -p "$d/replays" "$d/schedules" "$d/reports"
	printf 'avtrace-schedule 1\n# 1: test <b>bold</b> & "quoted"\nrun T0 2\nrun T1 2\nrun T0 1\nfree\n' >"$d/schedules/0001.sched"
	jq -n --arg f "/src/<x>&\"y\"/a.c" '{
		schedule: 1, outcome: "BUG", reason: "SIGSEGV in T0", step: 3, events: 6,
		exit_status: -1, signal: 11,
		headline: "BUG reproduced: SIGSEGV in T0 at a.c:9 (<main>)",
		predicted: ["1: test <b>bold</b> & \"quoted\""],
		failure: {file: $f, line: 9, function: "<main>", module: "a&b", offset: 40, thread: 0, signal: "SIGSEGV"},
		frames: [{file: $f, line: 9, function: "<main>", module: "a&b", offset: 40}],
		interleaving: [
			{index: 0, thread: 0, kind: "start"},
			{index: 1, thread: 0, kind: "write", object: "<script>alert(1)</script>", file: $f, line: 3, module: "a&b", offset: 10},
			{index: 2, thread: 1, kind: "start"},
			{index: 3, thread: 1, kind: "read", object: "x\"y&z", file: $f, line: 5, module: "a&b", offset: 20},
			{index: 4, thread: 0, kind: "read", object: "<img src=x>", file: $f, line: 9, module: "a&b", offset: 40},
			{index: 5, thread: 0, kind: "fatal_signal", object: "SIGSEGV"}],
		interleaving_omitted: 0}' >"$d/replays/0001.json" || fail "jq failed"
	echo '{"version":1,"predictions":[{"id":1,"detector":"pecan","pattern":"race-WR","events":[{"thread":0,"tindex":1,"kind":"write","site_off":10},{"thread":1,"tindex":1,"kind":"read","site_off":20}]}]}' >"$d/predictions.json"
}

t_html_escapes() {
	need_jq
	local d
	escapes_dir
	avt report -d "$d" --html page.html >/dev/null 2>report.err || fail "report --html failed: $(cat report.err)"
	self_contained page.html
	local page
	page=$(cat page.html)
	expect_no_match "$page" '<script|<img|<b>' "the page (an unescaped name)"
	expect_match "$page" '&lt;script&gt;alert\(1\)&lt;/script&gt;' "the escaped object name"
	expect_match "$page" 'href="file:///src/%3Cx%3E%26%22y%22/a.c"' "the escaped link"
	# the replay command, unescaped, is one the shell reads back
	local cmd
	cmd=$(sed -n 's/.*<pre id="cmd-replay">\(.*\)<\/pre>.*/\1/p' page.html | unescape)
	eval "set -- $cmd"
	expect_eq "$*" "avtrace replay -d $d --schedule 1" "the replay command"
	expect_eq "$4" "$d" "the replay command's directory"
	expect_eq "$(count 'class="ev kind-[a-z_]+ predicted' "$page")" 2 "predicted events"
	expect_eq "$(count 'class="switch" id=' "$page")" 2 "switches"
	expect_match "$page" 'kind-read failure[^"]*" data-thread="T0"' "the failing event"
}

# The same page in the browser.
t_html_escapes_in_browser() {
	need_jq
	need_chromium
	local d
	escapes_dir
	avt report -d "$d" --html page.html >/dev/null || fail "report --html failed"
	chrome --dump-dom "file://$PWD/page.html" >dom.html || fail "chromium --dump-dom failed"
	# the browser made no element of a name: one script-free document
	# whose only images and scripts are none, with the 6 events
	expect_no_match "$(cat dom.html)" '<script|<img|<b>' "the DOM"
	expect_eq "$(count '<div id="ev-[0-9]+" class="ev kind-' "$(cat dom.html)")" 6 "events in the DOM"
	expect_match "$(cat dom.html)" '&lt;script&gt;alert\(1\)&lt;/script&gt;' "the name as text"
}

# A bug found by exploration: its page beside reports/explore-NNNN.txt,
# drawn from the run's own recording and schedule: one row per switch of
# the schedule (a change of thread between consecutive run/yield lines),
# a line on the time axis for each that lands on a run line.
# limit: 180
t_html_explore() {
	local out=$PWD/out page sched rows lines run
	avt_timed 150 test -q -o "$out" --no-order --no-minimize -- "$(target explore_checker)" 0 >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test explore_checker"
	expect_eq "$(find out/reports -name 'explore-*.html' | wc -l)" 1 "pages of exploration bugs"
	page=$(find out/reports -name 'explore-*.html')
	expect_file "${page%.html}.txt"
	self_contained "$page"
	run=$(basename "$page" .html)
	run=${run#explore-}
	sched=out/explore/runs/$run/schedules/0000.sched
	expect_file "$sched"
	rows=$(awk '$1 == "run" || $1 == "yield" { if (prev != "" && $2 != prev) n++; prev = $2 } END { print n + 0 }' "$sched")
	lines=$(awk '$1 == "run" || $1 == "yield" { if (prev != "" && $2 != prev && $1 == "run") n++; prev = $2 } END { print n + 0 }' "$sched")
	[ "$rows" -gt 0 ] || fail "the exploration's schedule has no switch"
	expect_eq "$(count '<tr id="switch-row-' "$(cat "$page")")" "$rows" "switch rows"
	expect_eq "$(count 'class="switch" id="switch-' "$(cat "$page")")" "$lines" "switch lines"
	expect_eq "$(count 'class="ev kind-[a-z_]+ failure' "$(cat "$page")")" 1 "failing events"
	expect_match "$(cat "$page")" "<pre id=\"cmd-replay\">avtrace replay -d $out/explore/runs/$run --schedule 0</pre>" "replay command"
	avt report -d "$out" --report "explore-$run" --html - >by_report.html || fail "report --report explore-$run failed"
	cmp -s by_report.html "$page" || fail "--report explore-$run gives another page"
}

# Several distinct bugs: --html must name a directory (one page per bug,
# named after the schedule), or a bug must be chosen.  Hand-made results.
t_html_several_bugs() {
	need_jq
	local d=$PWD/d n
	mkdir -p d/replays d/schedules
	for n in 1 2; do
		printf 'avtrace-schedule 1\nrun T0 2\nrun T1 1\nfree\n' >"d/schedules/000$n.sched"
		jq -n --argjson n "$n" '{schedule: $n, outcome: "BUG", reason: "SIGSEGV in T1", signal: 11,
			headline: "BUG reproduced: SIGSEGV in T1 at a.c:\($n)",
			failure: {file: "/src/a.c", line: $n, module: "a", offset: 30, thread: 1},
			interleaving: [{index: 0, thread: 0, kind: "start"}, {index: 1, thread: 0, kind: "create", object: "T1"},
				       {index: 2, thread: 1, kind: "start"},
				       {index: 3, thread: 1, kind: "fatal_signal", object: "SIGSEGV", module: "a", offset: 30}],
			interleaving_omitted: 0}' >"d/replays/000$n.json"
	done
	avt report -d "$d" --html page.html 2>err
	expect_eq "$?" 2 "exit status with two bugs and one file"
	expect_one_line_error err
	expect_match "$(cat err)" "has 2 distinct bugs: choose one with --schedule N or --report X" "the error"
	expect_no_file page.html
	avt report -d "$d" --html pages/ >out || fail "report --html pages/ failed"
	expect_eq "$(tr '\n' ' ' <out)" "pages/0001.html pages/0002.html " "pages written"
	expect_match "$(cat pages/0002.html)" '<h1 id="headline">BUG reproduced: SIGSEGV in T1 at a.c:2</h1>' "page 2"
	expect_eq "$(count 'class="switch" id="switch-' "$(cat pages/0001.html)")" 1 "switch lines"
	avt report -d "$d" --schedule 2 --html two.html >/dev/null || fail "report --schedule 2 failed"
	cmp -s two.html pages/0002.html || fail "--schedule 2 gives another page"
}

# A long run (1000 events, the last 1000 of 1500): the events that matter
# stay (the predicted ones, the failure, around each switch, the end), the
# rest fold into gap rows that say how many events they hold.
t_html_long_run() {
	need_jq
	local d=$PWD/d page
	mkdir -p d/replays d/schedules
	# T0 runs 1200 events, T1 100, T0 200: the switches land on indices
	# 1200 and 1300 of the run (700 and 800 of the JSON's window)
	printf 'avtrace-schedule 1\nrun T0 1200\nrun T1 100\nrun T0 200\n' >d/schedules/0001.sched
	jq -n '[range(500; 1500) | {index: ., thread: (if . >= 1200 and . < 1300 then 1 else 0 end),
		kind: "read", object: "v", file: "/src/a.c", line: 10, module: "a", offset: 16}]
		| map(if .thread == 1 and .index == 1200 then .kind = "start" else . end)
		| {schedule: 1, outcome: "BUG", reason: "SIGSEGV in T0", signal: 11,
		   headline: "BUG reproduced: SIGSEGV in T0 at a.c:99",
		   failure: {file: "/src/a.c", line: 99, module: "a", offset: 99, thread: 0},
		   predicted: ["1: test"], interleaving: ., interleaving_omitted: 500}
		| .interleaving[100].offset = 99 | .interleaving[100].line = 99' >d/replays/0001.json || fail "jq failed"
	# predicted: T0's 550th event (JSON index 50: run index 550), T1's 10th
	echo '{"version":1,"predictions":[{"id":1,"detector":"pecan","pattern":"race-WR","events":[{"thread":0,"tindex":550,"kind":"read","site_off":16},{"thread":1,"tindex":10,"kind":"read","site_off":16}]}]}' >d/predictions.json
	avt report -d "$d" --html page.html >/dev/null || fail "report --html failed"
	page=$(cat page.html)
	expect_match "$page" '&#8942; 500 earlier events not in the replay&#39;s JSON' "the omitted events"
	expect_eq "$(count '<div id="ev-[0-9]+" class="ev ' "$page")" \
		"$(( $(count '<div class="tick"' "$page") ))" "a tick per event drawn"
	[ "$(count '<div id="ev-[0-9]+" class="ev ' "$page")" -lt 100 ] || fail "a long run is drawn whole"
	expect_eq "$(count 'class="switch" id="switch-' "$page")" 2 "switch lines"
	expect_match "$page" '<div id="ev-1200" class="ev kind-start switch-to"' "the first event after switch 1"
	expect_match "$page" '<div id="ev-1300" class="ev kind-read switch-to"' "the first event after switch 2"
	expect_match "$page" '<div id="ev-1199" class="ev ' "the last event before switch 1"
	expect_match "$page" '<div id="ev-600" class="ev kind-read failure"' "the failing event"
	expect_match "$page" '<div id="ev-1499" class="ev ' "the last event"
	expect_no_match "$page" '<div id="ev-1000" ' "a folded event"
	# the folded events add up: 1000 in the JSON
	local folded
	folded=$(printf '%s\n' "$page" | sed -n 's/.*&#8942; \([0-9]*\) events &#8942;.*/\1/p' | paste -sd+ | bc)
	expect_eq "$((folded + $(count '<div id="ev-[0-9]+" class="ev ' "$page")))" 1000 "events drawn and folded"
	expect_eq "$(count 'class="ev kind-[a-z_]+ predicted' "$page")" 2 "predicted events"
	# found by their place in their thread, which the schedule tells
	expect_match "$page" '<div id="ev-550" class="ev kind-read predicted"' "predicted event 1"
	expect_match "$page" '<div id="ev-1210" class="ev kind-read predicted"' "predicted event 2"
}

# A deadlock: its failure is the wait-for cycle, drawn as a last row with
# what each blocked thread waits for, in its lane.
# limit: 150
t_html_deadlock() {
	local out=$PWD/out page la lb
	la=$(marker_line "$SRC/lockorder.c" "/* T1 LOCKS B */") || exit
	lb=$(marker_line "$SRC/lockorder.c" "/* T2 LOCKS A */") || exit
	avt_timed 120 test -q -o "$out" --no-explore -- "$(target lockorder)" >test.out 2>&1
	expect_eq "$?" 1 "exit status of avtrace test lockorder"
	expect_eq "$(find out/reports -name '*.html' | wc -l)" 1 "pages"
	page=$(cat out/reports/*.html)
	expect_match "$page" '<h1 id="headline">DEADLOCK reproduced' "the headline"
	expect_eq "$(count 'class="ev wait failure"' "$page")" 3 "waits drawn"
	expect_match "$page" "<div id=\"wait-T1\" class=\"ev wait failure\" data-thread=\"T1\".*waits for lock</span> <span class=\"o\">lock_b</span> \\(held by T2\\) <a class=\"loc\" [^>]*>lockorder.c:$la</a>" "T1's wait"
	expect_match "$page" "<div id=\"wait-T2\" class=\"ev wait failure\" data-thread=\"T2\".*waits for lock</span> <span class=\"o\">lock_a</span> \\(held by T1\\) <a class=\"loc\" [^>]*>lockorder.c:$lb</a>" "T2's wait"
	expect_eq "$(count 'class="ev kind-[a-z_]+ failure' "$page")" 0 "failing events other than the waits"
	expect_match "$page" '<ul id="deadlock">' "the cycle in words"
}
