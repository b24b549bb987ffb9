# shellcheck shell=bash
# Issue 30, shape 7: a program installed in a system directory (a Debian
# package's own binary in /usr/bin, an installed test in /usr/libexec) is
# the user's code when the user names it on the command line: it gets
# access breakpoints, and its bug is predicted as in the build tree.  The
# system's libraries stay opt-in (--access-scope), and a script's
# interpreter (/bin/sh) is not the user's code because a script is named,
# nor a named runner that cannot start threads (sh -c, env, make).
#
# The targets are copied to /usr/libexec/avtrace-e2e-PID/ (root only; the
# test is skipped otherwise) and removed when the test ends.

INSTALLED=

# install NAME: copy target NAME into a system directory; its path in
# INSTALLED.
install_target() {
	local dir=/usr/libexec/avtrace-e2e-$$
	if ! mkdir -p "$dir" 2>/dev/null || [ ! -w "$dir" ]; then
		skip "cannot write $dir (installing a program in a system directory needs root)"
	fi
	trap 'rm -rf "/usr/libexec/avtrace-e2e-$$"' EXIT
	cp "$(target "$1")" "$dir/$1" || fail "cannot copy $1 to $dir"
	INSTALLED=$dir/$1
}

# installed_bug NAME: acc_account (shape 1) installed in /usr/libexec,
# with no flags: the access events are there, the order prediction
# reproduces the checker's failure at its line, and meta.json names the
# program whose code is the user's.
installed_bug() {
	need_jq
	local lc
	lc=$(marker_line "$SRC/acc_account.c" "/* CHECK LINE */") || exit
	install_target "$1"
	run_test out --no-explore -- "$INSTALLED"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test $INSTALLED"
	expect_eq "$(jq -r .program out/meta.json)" "$INSTALLED" "program in meta.json"
	[ "$(jq -r .access_sites out/meta.json)" -gt 0 ] || fail "no access site in the installed program"
	expect_match "$(head -n 1 out/reports/*.txt)" "^BUG reproduced: SIGABRT in T1 at acc_account[.]c:$lc \\(checker\\)" "the report"
	# predict on its own reads the program from meta.json: the same
	# predictions as `test` made
	avt_timed 60 predict -d out >p.out 2>p.err
	expect_eq "$?" 0 "exit status of avtrace predict"
	[ "$(jq '.predictions | length' out/predictions.json)" -gt 0 ] ||
		fail "avtrace predict made no prediction on the installed program's recording"
}

# limit: 150
t_shape7_installed_program() { installed_bug acc_account; }
# limit: 150
t_shape7_installed_program_O2() { installed_bug acc_account_O2; }

# The correct counterpart, installed: no report.
# limit: 150
t_shape7_installed_correct() {
	install_target acc_account_ok
	run_test out --explore 20 -- "$INSTALLED"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test $INSTALLED"
	expect_match "$(cat out.test)" '^no bug reproduced$' "verdict"
	expect_eq "$(reports out)" 0 "reports"
}

# A script named on the command line: its interpreter stays system code
# (no access site in /bin/sh), the program it runs from the build tree is
# the user's as before, and meta.json names no program.
# limit: 120
t_shape7_script_interpreter_stays_system() {
	need_jq
	install_target acc_account
	local wrap=${INSTALLED%/*}/wrap.sh
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$(target mutex_counter)" >"$wrap"
	chmod +x "$wrap"
	record rec "$wrap"
	expect_recorded rec 0
	expect_eq "$(jq -r '.program // "none"' rec/meta.json)" none "program in meta.json"
	local outside
	outside=$(avt dump -d rec --json |
		jq -s '[.[] | select(.kind == "read" or .kind == "write" or .kind == "rmw") | select((.site // "") | test("mutex_counter") | not)] | length')
	expect_eq "$outside" 0 "access events outside mutex_counter"
	expect_count rec write counter 200
}

# A named runner from /usr/bin that cannot start threads (env, as sh -c,
# make, timeout): system code, so meta.json names no program; the program
# it execs from the build tree is the user's as before.
# limit: 120
t_shape7_runner_stays_system() {
	need_jq
	record rec /usr/bin/env AVT_E2E=1 "$(target mutex_counter)"
	expect_recorded rec 0
	expect_eq "$(jq -r '.program // "none"' rec/meta.json)" none "program in meta.json"
	expect_count rec write counter 200
}
