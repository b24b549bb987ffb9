# shellcheck shell=bash
# Issue 30: the text report's "events that matter" show the predicted
# pattern's own events, not every hit of their lines.  A star means one
# event of the prediction's comment ("T1 read a[3093] at acc_qsort.c:61"):
# the same thread, kind, object and site, each element once (the
# occurrence nearest a switch); the "not atomic: sort (acc_qsort.c:84)"
# context gets none.  The rest of the run is counted and one `avtrace
# dump` away.  Before, a loop's line starred every hit: hundreds of
# `T1 read a[N] acc_qsort.c:61` on the quicksort, and T2's read of
# balance on the bank demo (the prediction names T1's).
# Run with tests/e2e/run.sh test_report30.sh.

# limit: 120

# The report's lead (what avtrace minimize wrote before the mark).
lead() { sed '/^---- the reproduced schedule/q' "$1"; }

# The prediction's events, one a line: the comment's list between the
# dash and "; not atomic:", split at ", T<n> ".
elements() {
	jq -r '.predicted[0]' "$1" | sed -e 's/^[^—]*— //' -e 's/; not atomic: .*//' \
		-e 's/, \(T[0-9][0-9]* \)/\n\1/g'
}

# The starred events of a report, each as the comment would say it:
# "   *   10   T1 read balance  bank.c:34 (read_balance)" -> "T1 read balance at bank.c:34".
starred() {
	lead "$1" | sed -n 's/^  .\*[ 0-9]*[0-9] *\(T[0-9][0-9]* [^ ].*[^ ]\)  \([^ ]*:[0-9][0-9]*\).*/\1 at \2/p'
}

# check_stars REPORT JSON ALL: every star is one element of the
# prediction, at most once; every element is starred, or (ALL empty)
# starred or named as not among the events kept; the left-out count and
# the dump line.
check_stars() {
	local rep=$1 js=$2 all=$3 n e s
	elements "$js" >elements.txt
	starred "$rep" >starred.txt
	sed 's/^/  element: /' elements.txt >&3
	sed 's/^/  starred: /' starred.txt >&3
	n=$(grep -c . starred.txt)
	[ "$n" -le "$(grep -c . elements.txt)" ] ||
		fail "$n starred events, more than the prediction's $(grep -c . elements.txt)"
	while IFS= read -r s; do
		grep -qxF -- "$s" elements.txt || fail "starred but not in the prediction: $s"
	done <starred.txt
	[ "$(sort starred.txt | uniq -d | grep -c .)" -eq 0 ] || fail "an element starred twice"
	# a deadlock's requests never ran: the failure's waits show them
	jq -r '(.deadlock // [])[] | "T\(.thread) acquire \(.object) at "' "$js" >waits.txt
	while IFS= read -r e; do
		if grep -qF -- "${e% at *} at " waits.txt; then
			grep -qxF -- "$e" starred.txt && fail "a request the deadlock left waiting is starred: $e"
			expect_no_match "$(lead "$rep" | grep '^  not among these events: ')" "$(printf '%s' "$e" | sed 's/[][\.*^$]/\\&/g')" \
				"a deadlock's request said missing"
			continue
		fi
		grep -qxF -- "$e" starred.txt && continue
		[ -z "$all" ] && lead "$rep" | grep -q "^  not among these events: .*$(printf '%s' "$e" | sed 's/[][\.*^$]/\\&/g')" &&
			continue
		fail "the prediction's event is neither starred nor said missing: $e"
	done <elements.txt
	expect_match "$(lead "$rep")" "^[0-9]+ of the run's [0-9]+ events not shown; every event: avtrace dump -d [^ ]+[.]min[.]avt$" \
		"the count of what was left out and the dump line"
	e=$(lead "$rep" | sed -n "s/.* events not shown; every event: avtrace dump -d //p")
	avt dump -d "$e" >dump.txt 2>&1 || fail "the dump line does not work: $(head -n 1 dump.txt)"
}

# The bank demo: the three events of "T1 read balance at bank.c:34, T2
# write balance at bank.c:42, T1 write balance at bank.c:42" are starred,
# T2's read at bank.c:34 is not (the old rule starred it: same line).
t_report30_bank_stars() {
	need_jq
	avt_timed 100 test -q -f -o out --no-explore -- "$EXAMPLES/bank" >out.test 2>&1
	sed 's/^/  | /' out.test >&3
	local rep
	rep=$(find out/reports -name '*.min.json' | sort | head -n 1)
	[ -n "$rep" ] || fail "no minimal schedule written: $(tail -n 3 out.test)"
	lead "${rep%.min.json}.txt" | sed 's/^/  > /' >&3
	check_stars "${rep%.min.json}.txt" "$rep" all
}

# The quicksort: 48,000 events, a loop over acc_qsort.c:56 and :61; the
# old report starred 154 of its lines.  Now at most the prediction's two
# events, and no switch line is left blank when its events are before
# those the replay's JSON keeps (the old line read "T0 " and nothing).
t_report30_qsort_stars() {
	need_jq
	avt_timed 100 test -q -f -o out --no-explore -- "$(target acc_qsort)" 2048 >out.test 2>&1
	sed 's/^/  | /' out.test >&3
	local rep
	rep=$(find out/reports -name '*.min.json' | sort | head -n 1)
	[ -n "$rep" ] || fail "no minimal schedule written: $(tail -n 3 out.test)"
	lead "${rep%.min.json}.txt" | sed 's/^/  > /' >&3
	check_stars "${rep%.min.json}.txt" "$rep" ""
	expect_no_match "$(lead "${rep%.min.json}.txt")" '^( +[0-9]+[.] step [0-9]+, T[0-9]+ -> T[0-9]+: +T[0-9]+ | +then T[0-9]+ )$' \
		"a switch line without its event"
	[ "$(lead "${rep%.min.json}.txt" | wc -l)" -le 40 ] || fail "the lead has $(lead "${rep%.min.json}.txt" | wc -l) lines"
}

# A deadlock (lockorder: T1 takes lock_a then lock_b, T2 lock_b then
# lock_a): the locks taken are starred; the requests that never ran are
# the failure's waits, neither starred nor said missing.
t_report30_deadlock_stars() {
	need_jq
	avt_timed 100 test -q -f -o out --no-explore -- "$(target lockorder)" >out.test 2>&1
	sed 's/^/  | /' out.test >&3
	local rep
	rep=$(grep -l '"outcome": "DEADLOCK"' out/reports/*.min.json | sort | head -n 1)
	[ -n "$rep" ] || fail "no deadlock's minimal schedule written: $(tail -n 3 out.test)"
	lead "${rep%.min.json}.txt" | sed 's/^/  > /' >&3
	[ "$(jq '.deadlock | length' "$rep")" -gt 0 ] || fail "no wait-for cycle in $rep"
	check_stars "${rep%.min.json}.txt" "$rep" all
	expect_eq "$(grep -c . starred.txt)" 2 "starred: the two locks taken"
}
