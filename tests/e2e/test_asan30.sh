# shellcheck shell=bash
# AddressSanitizer builds (issue 30, shape 6a): avtrace leaves an ASan
# build's behaviour as native and finds what it finds in the plain build.
# Each program is built -fsanitize=address by gcc (libasan.so, which must
# come first among the libraries: the agent is preloaded after it) and by
# clang (the runtime linked into the program, with interceptors of the
# pthread functions): tests/targets/bin/asan/NAME_{gcc,clang}.  For each,
# `avtrace test` gives the plain build's verdict - exit 1 with reports at
# the same file:line, or exit 0 with none - and no report names the
# sanitizer's own code or memory, in three ways: the default (replays
# through the agent), --no-stacks (the recording through the agent too)
# and --no-agent.
# limit: 600

TEST_LIMIT=150

# verdict OUT: the exit status, then each report's headline and the waits
# of a deadlock (file:line, no thread or program names), sorted.
verdict() {
	echo "exit $TEST_STATUS"
	cat "$1"/reports/*.txt 2>/dev/null |
		grep -E '^(BUG|DEADLOCK) reproduced|^  T[0-9]+ waits for ' |
		sed -E 's/T[0-9]+/T/g; s/\(held by T\)//; s/ +$//' | sort -u
}

# asan_same NAME PLAIN CC: NAME_CC under ASan against the plain build
asan_same() {
	local name=$1 plain=$2 cc=$3 prog mode want got
	prog=$TARGETS/asan/${name}_$cc
	[ -x "$prog" ] || skip "$prog is not built (no $cc with -fsanitize=address)"
	for mode in "" --no-stacks --no-agent; do
		# shellcheck disable=SC2086 # mode: no option, or one
		run_test "plain$mode" --no-minimize --explore 5 $mode -- "$plain"
		want=$(verdict "plain$mode")
		# shellcheck disable=SC2086
		run_test "asan$mode" --no-minimize --explore 5 $mode -- "$prog"
		got=$(verdict "asan$mode")
		expect_eq "$got" "$want" "the verdict on ${name}_$cc ${mode:-(default)}"
		expect_no_match "$(cat "asan$mode.test" "asan$mode"/reports/*.txt 2>/dev/null)" \
			'__sanitizer|__asan|__interceptor|__lsan|(asan|sanitizer)_[a-z_]+[.](cpp|inc|h)|LeakSanitizer' \
			"avtrace test's output and reports on ${name}_$cc ${mode:-(default)}"
		# (a program that fails natively, as crash does, says so either way)
		grep -qE 'exited with status|a native run' "plain$mode.test" ||
			expect_no_match "$(cat "asan$mode.test")" 'exited with status|a native run' \
				"the recording of ${name}_$cc ${mode:-(default)}"
	done
	# the verdicts compared are not empty ones (but for the correct
	# program's, and the one that fails in every run, the recording too)
	case $name in
	mutex_counter) expect_eq "$want" "exit 0" "the plain build's verdict" ;;
	acc_value_fault) expect_eq "$want" "exit 1" "the plain build's verdict" ;;
	*) expect_match "$want" '^(BUG|DEADLOCK) reproduced' "the plain build's verdict" ;;
	esac
}

# a lost update (an assertion at bank.c's ASSERT LINE)
t_asan_bank_gcc() { asan_same bank "$EXAMPLES/bank" gcc; }
t_asan_bank_clang() { asan_same bank "$EXAMPLES/bank" clang; }
# a lock-order deadlock
t_asan_lockorder_gcc() { asan_same lockorder "$TARGETS/lockorder" gcc; }
t_asan_lockorder_clang() { asan_same lockorder "$TARGETS/lockorder" clang; }
# a fault ASan's handler catches: the plain build's SIGSEGV, the same line
t_asan_crash_gcc() { asan_same crash "$TARGETS/crash" gcc; }
t_asan_crash_clang() { asan_same crash "$TARGETS/crash" clang; }
# a correct program: no report
t_asan_mutex_counter_gcc() { asan_same mutex_counter "$TARGETS/mutex_counter" gcc; }
t_asan_mutex_counter_clang() { asan_same mutex_counter "$TARGETS/mutex_counter" clang; }
# main's stack object shared with the thread it starts (&e): the program's
# pthread_create is the sanitizer's interceptor, whose call of libc's
# passes the runtime's own record, not &e; main's accesses to e must
# still be events (tracer/hooks.c, create_arg), else nothing is predicted
# and exploration finds nothing (the ASan build's verdict was exit 0).
# gcc only: clang knows no noipa, inlines do_io at -O1 and folds its read
# of the flag into main's check (no synchronisation between them), so its
# build has no bug to find (objdump: no access at the USE LINE).
t_asan_stackobj_gcc() { asan_same acc_stackobj "$TARGETS/acc_stackobj" gcc; }
# a NULL dereference in every run: the recorded run's own failure, no
# finding (exit 1, no report), as in the plain build; ASan's handler turns
# the fault into exit status 1, and the recording's failure is its fault
# (cli/test.c, recorded_fault): every explored run's SIGSEGV was reported
# as a bug the recording did not have
t_asan_value_fault_gcc() { asan_same acc_value_fault "$TARGETS/acc_value_fault" gcc; }
t_asan_value_fault_clang() { asan_same acc_value_fault "$TARGETS/acc_value_fault" clang; }

# An ASan build that execs another with an empty environment (exec_noenv
# runs acc_events from its own directory): the new image has no
# ASAN_OPTIONS=detect_leaks=0, so its LeakSanitizer ran at exit under
# ptrace ("LeakSanitizer has encountered a fatal error", exit 1; natively
# 0), a false BUG.  avtrace puts the setting into the environment of an
# execve of an ASan build (tracer/sanexec.c): exit 0, no report, and the
# program's own part of its environment is what it passed (empty).
asan_exec_noenv() {
	local cc=$1 mode
	[ -x "$TARGETS/asan/exec_noenv_$cc" ] && [ -x "$TARGETS/asan/acc_events_$cc" ] ||
		skip "the $cc ASan builds of exec_noenv and acc_events are not built"
	mkdir -p d
	cp "$TARGETS/asan/exec_noenv_$cc" d/exec_noenv
	cp "$TARGETS/asan/acc_events_$cc" d/acc_events
	d/exec_noenv >native.out 2>&1
	expect_eq "$?" 0 "exit status of exec_noenv_$cc natively"
	# an empty envp, and a NULL one (Linux's empty environment too)
	for arg in "" null; do
		for mode in "" --no-agent; do
			# shellcheck disable=SC2086 # mode, arg: nothing, or one word
			run_test "out$mode$arg" --no-minimize --explore 3 $mode -- d/exec_noenv $arg
			expect_eq "$TEST_STATUS" 0 \
				"exit status of avtrace test on exec_noenv_$cc $arg ${mode:-(default)}"
			expect_no_match "$(cat "out$mode$arg.test" "out$mode$arg"/reports/*.txt 2>/dev/null)" \
				'LeakSanitizer|BUG reproduced' "avtrace test's output ($arg ${mode:-default})"
		done
	done
}
t_asan_exec_noenv_gcc() { asan_exec_noenv gcc; }
t_asan_exec_noenv_clang() { asan_exec_noenv clang; }

# Natively, with the agent preloaded by hand and no avtrace: the clang
# build's threads run (the agent's fallback to libc is not the runtime's
# interceptor of __pthread_mutex_lock, whose own pointer is NULL).
t_asan_agent_preloaded_natively() {
	local prog st
	prog=$TARGETS/asan/bank_clang
	[ -x "$prog" ] || skip "$prog is not built"
	LD_PRELOAD=$REPO/libavtrace-agent.so timeout 20 "$prog" >out 2>err
	st=$?
	sed 's/^/  | /' err >&3
	expect_eq "$st" 0 "exit status of bank_clang with the agent preloaded"
	expect_eq "$(cat out)" "balance=175" "its output"
}

# A fault that ASan's handler catches, in an instruction avtrace runs out
# of line (an access site's slot, tracer/loop.c's fault_in_place): the
# handler is given the instruction's own address, so ASan's report names
# the function and line as it does natively, not "(<unknown module>)".
# ASan turns the SIGSEGV into its report and exit status 1, natively too;
# avtrace records the fault as the fatal signal where it stood before the
# handler runs (tracer/loop.c, sanitizer_fault), so the bug is the plain
# build's, SIGSEGV at CRASH LINE (was "exit status 1"), and ASan's report
# is still in it.
asan_fault() {
	local cc=$1 prog mode rep line
	prog=$TARGETS/asan/crash_$cc
	[ -x "$prog" ] || skip "$prog is not built (no $cc with -fsanitize=address)"
	line=$(marker_line "$REPO/tests/targets/crash.c" '/* CRASH LINE */') || exit
	for mode in "" --no-stacks --no-agent; do
		# shellcheck disable=SC2086 # mode: no option, or one
		run_test "asan$mode" --no-minimize --explore 5 $mode -- "$prog"
		expect_eq "$TEST_STATUS" 1 "exit status of avtrace test on crash_$cc ${mode:-(default)}"
		rep=$(cat "asan$mode"/reports/*.txt 2>/dev/null)
		expect_match "$rep" "^BUG reproduced: SIGSEGV in T0 at crash[.]c:$line \\(crash_here\\)" \
			"the report on crash_$cc ${mode:-(default)}"
		expect_match "$rep" "ERROR: AddressSanitizer: SEGV" "the program's stderr in it"
		expect_match "$rep" "#0 0x[0-9a-f]+ in crash_here [^ ]*crash[.]c:$line" \
			"ASan's frame of the fault ${mode:-(default)}"
		expect_no_match "$rep" 'unknown module' "ASan's report ${mode:-(default)}"
	done
}
t_asan_fault_gcc() { asan_fault gcc; }
t_asan_fault_clang() { asan_fault clang; }
