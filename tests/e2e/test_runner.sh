# shellcheck shell=bash
# The runner itself (run.sh): each test runs under its own declared limit
# (`# limit: N` above it, or for the whole file), never under a shorter one,
# and a bound inside a test that the runner would never let fire fails it.
# Runs run.sh on a small test file of its own, with margins of seconds
# against sleeps of a fraction of them.  The demo files' lines start with
# '|' here, so that this file's own test scan does not take their t_
# functions for its tests.

# inner FILE TEST: run.sh on FILE's TEST with a 1 s default limit; its
# output in inner.out, its status returned.
inner() {
	E2E_TIMEOUT=1 E2E_OUT=$PWD/inner-out bash "$E2E_DIR/run.sh" "$1" "$2" >inner.out 2>&1
}

t_runner_honours_declared_limits() {
	sed 's/^|//' >limits_demo.sh <<'DEMO'
|# limit: 8
|
|helper() {
|	:
|}
|
|# needs more than the 1 s default, and gets it from its own line
|# limit: 6
|t_declared() {
|	sleep 2
|}
|
|# gets the file's 8 s
|t_file_wide() {
|	sleep 2
|}
|
|# limit: 2
|t_overruns() {
|	sleep 30
|}
DEMO
	inner limits_demo.sh t_declared
	expect_eq "$?" 0 "a test within its declared limit ($(tail -n 1 inner.out))"
	inner limits_demo.sh t_file_wide
	expect_eq "$?" 0 "a test within its file's limit ($(tail -n 1 inner.out))"
	inner limits_demo.sh t_overruns
	expect_eq "$?" 1 "a test past its limit"
	expect_match "$(cat inner.out)" '^FAIL overruns: timed out after 2 s' "the runner's reason"
}

t_runner_refuses_bound_past_limit() {
	sed 's/^|//' >bound_demo.sh <<'DEMO'
|t_bound_past_limit() {
|	avt_timed 300 --version
|}
DEMO
	inner bound_demo.sh t_bound_past_limit
	expect_eq "$?" 1 "a bound the runner would never let fire"
	expect_match "$(cat inner.out)" "avt_timed 300 in a test whose limit is 1 s" "the reason"
}

t_runner_fails_unknown_test() {
	sed 's/^|//' >unknown_demo.sh <<'DEMO'
|# the scan finds a name that is not a function of the file
|t_missing_body() { :; }
DEMO
	# a function the scan lists but that the sourced file does not define
	sed -i 's/^t_missing_body() { :; }$/t_missing_body() { :; }\nunset -f t_missing_body/' unknown_demo.sh
	inner unknown_demo.sh t_missing_body
	expect_eq "$?" 1 "a listed test that is not defined"
	expect_match "$(cat inner.out)" "no test function 't_missing_body'" "the reason"
}
