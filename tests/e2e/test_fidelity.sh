# shellcheck shell=bash
# Issue 29, "Fidelity": no blocking call returns differently under avtrace
# than the kernel returns it natively.  wait_fidelity makes futex waits with
# and without a timeout, nanosleep, poll with a timeout, a read on a pipe
# and pthread_cond_timedwait beside a computing thread, and exits 1 with
# what returned early or interrupted (EINTR, a timeout before its time, a
# wake by nobody).  wait_signalled makes a timed futex wait that a signal
# sent five timeouts later must not interrupt (GLib's cond test
# "contended-and-interrupted"; explore ran it stopped past its time and let
# the signal in first: EINTR, a false BUG).  Natively both always print "ok".

# fidelity_ok FILE WHAT: the program's output in FILE is "ok".
fidelity_ok() {
	grep -qx ok "$1" || fail "$2: the program saw $(head -n 3 "$1" | tr '\n' ';')"
}

t_fidelity_record_and_replay() {
	local prog name i
	for name in wait_fidelity wait_signalled; do
		prog=$(target $name) || exit
		"$prog" >native.out || fail "$name fails natively: $(cat native.out)"
		for i in 1 2 3; do
			avt_timed 120 record -o "r$name$i" -- "$prog" >"r$i.out" 2>"r$i.err"
			expect_eq "$?" 0 "record $i of $name: status ($(head -n 2 "r$i.out" | tr '\n' ';'))"
			fidelity_ok "r$i.out" "record $i of $name"
			avt_timed 120 replay -d "r$name$i" --schedule 0 --stdout >"p$i.out" 2>"p$i.err"
			expect_eq "$?" 0 "replay $i of $name: status ($(head -n 2 "p$i.out" | tr '\n' ';'))"
		done
	done
}

t_fidelity_explore() {
	local prog name st
	for name in wait_fidelity wait_signalled; do
		prog=$(target $name) || exit
		avt_timed 240 explore -o "x$name" -n 16 -j 2 --seed 7 -- "$prog" >x.out 2>&1
		st=$?
		sed 's/^/  | /' x.out >&3
		expect_eq "$st" 0 "explore status on $name"
		expect_match "$(cat x.out)" ' 0 bug, 0 deadlock' "explored runs of $name"
	done
}

t_fidelity_test_no_report() {
	local prog name st
	for name in wait_fidelity wait_signalled; do
		prog=$(target $name) || exit
		avt_timed 240 test -o "t$name" --explore 10 -- "$prog" >t.out 2>&1
		st=$?
		sed 's/^/  | /' t.out >&3
		expect_eq "$st" 0 "avtrace test status on $name"
		expect_no_match "$(cat t.out)" 'BUG|DEADLOCK|[1-9][0-9]* bugs? reproduced' "avtrace test output on $name"
	done
}
