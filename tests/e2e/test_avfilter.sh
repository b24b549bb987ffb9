# shellcheck shell=bash
# AVFilter with the symbolizer telling where a changed read's value goes
# (docs/avfilter.md, "Where a read's value goes"): a prediction whose
# schedule only changes reads that feed stores is kept, and one whose
# changed read steers its thread is flagged, ranked last and dropped by
# --filter.  Run with tests/e2e/run.sh avfilter.

# predict_json OUT ARGS...: avtrace predict -d OUT ARGS; the table in
# OUT.predict.
predict_json() {
	local out=$1
	shift
	avt_timed 60 predict -d "$out" "$@" >"$out.predict" 2>&1 ||
		fail "avtrace predict -d $out $*: $(tail -n 1 "$out.predict")"
	sed 's/^/  | /' "$out.predict" >&3
}

# explore_rare's lost update on `checkpoints` (PENELOPE's RWW): its
# schedule runs T2 ahead of T1's later sections on hot_lock, so T2's reads
# of `hot` see other writes; their values only go back into `hot`, whose
# reads all do the same, so AVFilter keeps it, also with --filter, and the
# replay reproduces the bug.  (The paper's filter, without this, flags it.)
# limit: 90
t_avfilter_keeps_a_real_bug() {
	need_jq
	local id l
	l=$(marker_line "$SRC/explore_rare.c" "/* CHECK LINE */") || exit
	record out explore_rare 0
	expect_recorded out 0
	local obj
	obj=$(avt dump -d out --json | jq -rs '[.[] | select(.obj_name == "checkpoints")][0].obj')
	case $obj in 0x*) obj=$((obj)) ;; *) fail "no event on checkpoints in the recording" ;; esac
	for opt in "" --filter; do
		# shellcheck disable=SC2086 # no option, or one
		predict_json out $opt
		id=$(jq -r --argjson o "$obj" '[.predictions[] | select(.pattern == "RWW" and
			.objs == [$o])][0].id // empty' out/predictions.json)
		[ -n "$id" ] || fail "no RWW on checkpoints predicted (predict $opt)"
		expect_eq "$(jq -r ".predictions[] | select(.id == $id) | .filtered" out/predictions.json)" \
			false "the RWW on checkpoints flagged (predict $opt)"
	done
	replay out --schedule "$id"
	expect_eq "$RP_STATUS" 1 "exit status of replay --schedule $id"
	expect_match "$(cat out.replay)" "BUG reproduced: SIGABRT in T0 at explore_rare[.]c:$l" \
		"replay of the RWW on checkpoints"
}

# rwlock's reader (T3) reads `shared` and checks it: a prediction whose
# schedule changes that read is flagged with the case it meets, ranked
# after every kept one, and --filter drops exactly the flagged ones.
# limit: 90
t_avfilter_flags_a_read_that_steers() {
	need_jq
	local n nf last
	record out rwlock
	expect_recorded out 0
	predict_json out
	n=$(jq '.predictions | length' out/predictions.json)
	nf=$(jq '[.predictions[] | select(.filtered)] | length' out/predictions.json)
	[ "$nf" -ge 1 ] || fail "nothing flagged among $n predictions"
	expect_match "$(jq -r '[.predictions[] | select(.filtered)][0].filter_why' out/predictions.json)" \
		"^case [1-5] \\(Lemma [12] \\([123]\\)\\): T[0-9]+'s read of 0x[0-9a-f]+ at seq [0-9]+ \\(rwlock[+]0x[0-9a-f]+\\)" \
		"why the first flagged prediction is flagged"
	last=$(jq '[.predictions[] | .filtered] | (index(true)) as $i | .[$i:] | all' out/predictions.json)
	expect_eq "$last" true "flagged predictions ranked after every kept one"
	expect_match "$(cat out.predict)" "flagged by AVFilter" "the table marks flagged predictions"
	predict_json out --filter
	expect_eq "$(jq '.predictions | length' out/predictions.json)" "$((n - nf))" \
		"predictions left by --filter"
	expect_eq "$(jq '[.predictions[] | select(.filtered)] | length' out/predictions.json)" 0 \
		"flagged predictions left by --filter"
}
