# shellcheck shell=bash
# Acceptance tests of the PECAN detector (docs/predict.md, "PECAN"):
# `avtrace test` on the memory-access targets whose bugs need a pattern
# PENELOPE does not have: mem_order (an order violation: a race whose
# recorded order must be reversed), mem_dcl (a two-variable atomic-set
# violation) and mem_atomicset (one that no single-variable or lock-based
# detector sees).  Each annotated, with --watch, and (mem_order,
# mem_atomicset) with the recorder's access breakpoints.  Correct
# targets keep giving no report (test_predict_access.sh, test_predict.sh).
# Run with tests/e2e/run.sh predict_pecan.

# expect_pecan_bug SIGNAL THREAD FILE LINE FUNC VAR PATTERN ARGS...: one
# report, the bug at FILE:LINE in FUNC, predicted by pecan (pattern
# PATTERN, a regex) with VAR named in the prediction.
expect_pecan_bug() {
	local sig=$1 thr=$2 file=$3 line=$4 func=$5 var=$6 pat=$7 report
	shift 7
	run_test out "$@"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test $*"
	expect_eq "$(reports out)" 1 "reports of avtrace test $*"
	report=$(cat out/reports/*.txt)
	expect_match "$report" "^BUG reproduced: $sig in $thr at $file:$line \\($func\\)" "report of $*"
	expect_match "$report" "predicted: [0-9]+: [a-z+]*pecan[a-z+]* $pat — .*$var" "prediction in the report of $*"
	expect_match "$(cat out.test)" "pecan +$pat .* BUG \\($sig\\)" "table of $*"
}

# The worker reads config before main publishes it: pecan's race-RW, the
# recorded order (write, read) reversed; the dereference faults.
# limit: 150
t_pecan_order_violation() {
	local ld
	ld=$(marker_line "$SRC/mem_order.c" "/* DEREF LINE */") || exit
	for args in "-- $(target mem_order)" "--watch config -- $(target mem_order_plain)" \
		"-- $(target mem_order_plain)"; do
		# shellcheck disable=SC2086 # options and program
		expect_pecan_bug SIGSEGV T1 'mem_order[.]c' "$ld" worker config race-RW $args
	done
}

# The address of instance->ready, from a native run of mem_dcl_plain
# (ASLR is off under avtrace and here alike: setarch -R).
dcl_ready_addr() {
	setarch "$(uname -m)" -R "$(target mem_dcl_plain)" 1000 |
		sed -n 's/.*ready-at=\(0x[0-9a-f]*\).*/\1/p'
}

# T2 sees the instance between T1's store to instance and its store to
# ready: atomic-set-8, W_T1(instance) R_T2(instance) R_T2(ready) W_T1(ready).
# limit: 150
t_pecan_double_checked_init() {
	local lu addr
	lu=$(marker_line "$SRC/mem_dcl.c" "/* USE LINE */") || exit
	addr=$(dcl_ready_addr)
	expect_match "$addr" '^0x[0-9a-f]+$' "address of instance->ready in the target's stdout"
	expect_pecan_bug SIGABRT T2 'mem_dcl[.]c' "$lu" reader instance atomic-set-8 -- "$(target mem_dcl)"
	# Watched, calloc's clearing of ready is a write (the trapping
	# instruction is decoded), so penelope also predicts the bug: T2 reads
	# ready between calloc's write and the initializing one (WRW).  The one
	# report is the first reproduced prediction, penelope's or pecan's;
	# pecan's atomic-set-8 reproduces it all the same (its table row).
	run_test out --watch "instance,$addr:4" -- "$(target mem_dcl_plain)"
	expect_eq "$TEST_STATUS" 1 "exit status of avtrace test --watch"
	expect_eq "$(reports out)" 1 "reports of avtrace test --watch"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: SIGABRT in T2 at mem_dcl[.]c:$lu \\(reader\\)" "report with --watch"
	expect_match "$(cat out/reports/*.txt)" "predicted: [0-9]+: ([a-z+]*pecan[a-z+]* atomic-set-8 — .*instance|penelope WRW — T1 write 0x[0-9a-f]+ at malloc[.]c:[0-9]+, T2 read heap#1 )" \
		"prediction in the report with --watch"
	expect_match "$(cat out.test)" "pecan +atomic-set-8 .* BUG \\(SIGABRT\\)" "table with --watch"
}

# Two fields under two locks: only a two-variable pattern shows the bug.
# limit: 150
t_pecan_atomic_set() {
	local lc
	lc=$(marker_line "$SRC/mem_atomicset.c" "/* CHECK LINE */") || exit
	for i in 1 2 3; do
		timeout 20 "$(target mem_atomicset)" 1000000 >/dev/null 2>&1 ||
			fail "native run $i of mem_atomicset failed"
	done
	for args in "-- $(target mem_atomicset)" "--watch rec.lo,rec.hi -- $(target mem_atomicset_plain)" \
		"-- $(target mem_atomicset_plain)"; do
		# shellcheck disable=SC2086 # options and program
		expect_pecan_bug SIGABRT T3 'mem_atomicset[.]c' "$lc" checker 'rec[.]lo' 'atomic-set-[0-9]+' $args
	done
	# the single-variable and lock-based detectors see nothing
	run_test out --no-pecan --no-explore -- "$(target mem_atomicset)"
	expect_eq "$TEST_STATUS" 0 "exit status of avtrace test --no-pecan"
	expect_match "$(head -n 1 out.test)" '; 0 predictions;' "predictions without pecan"
}

# A user pattern file: the atomic-set pattern under another name finds
# the bug with the built-in patterns off; errors name file:line.
# limit: 150
t_pecan_pattern_file() {
	local lc
	lc=$(marker_line "$SRC/mem_atomicset.c" "/* CHECK LINE */") || exit
	cat >pats.txt <<'EOF'
# a torn pair: t2 reads both fields between t1's two writes
torn-pair: w t1 x u1, r t2 x u2, r t2 y u2, w t1 y u1
EOF
	run_test out --no-pecan --pattern pats.txt -- "$(target mem_atomicset)"
	expect_eq "$TEST_STATUS" 1 "exit status with --pattern"
	expect_match "$(cat out/reports/*.txt)" "^BUG reproduced: SIGABRT in T3 at mem_atomicset[.]c:$lc \\(checker\\)" "report with --pattern"
	expect_match "$(cat out.test)" "pecan +torn-pair .* BUG \\(SIGABRT\\)" "table with --pattern"
	printf 'ok: r t1 x u1, w t2 x u2\nbad: r t1 x u1, q t2 x u2\n' >bad.txt
	avt predict -d out --pattern bad.txt >bad.out 2>bad.err
	expect_eq "$?" 2 "exit status of predict with a bad pattern file"
	expect_match "$(cat bad.err)" "^avtrace: bad[.]txt:2: the access type must be r or w" "error of a bad pattern file"
}
