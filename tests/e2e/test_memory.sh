# shellcheck shell=bash
# Acceptance tests of memory accesses: the annotation header
# (include/avtrace.h: AVT_READ, AVT_WRITE, AVT_ATOMIC_BEGIN/END) and
# `avtrace record --watch`.  Run with tests/e2e/run.sh [memory | t_NAME].
#
# Targets: tests/targets/mem_*.c, each built annotated (bin/mem_NAME) and
# without annotations (bin/mem_NAME_plain, recorded with --watch); see the
# header comment of each for its bug and its events.  Each annotation shares
# its line with the access it announces, so one marker names the line of
# both the annotated and the watched event.  The hand-written schedules
# that expose the bugs are tests/e2e/schedules/mem_*.sched.

SCHEDS="$REPO/tests/e2e/schedules"

# record_watch OUT VARS PROG [ARGS...]: `record` (lib.sh) with --watch VARS.
record_watch() {
	local out=$1 vars=$2
	shift 2
	REC_OPTS="--watch $vars" record "$out" "$@"
}

# thread_events (lib.sh): "kind name size site" (name: obj_name, else obj;
# "-" for a missing field).
THREAD_FIELDS='[.kind, (.obj_name // .obj // "-"), ((.size // "-") | tostring), (.site // "-")]'

# expect_flagged DIR FLAG: every memory and atomic-block event carries FLAG
# ("annotated" or "watched"), and there is at least one.
expect_flagged() {
	local n bad
	n=$(select_events "$1" '.kind == "read" or .kind == "write"' | grep -c .) || true
	[ "$n" -gt 0 ] || fail "no read or write events in $1"
	bad=$(select_events "$1" '(.kind == "read" or .kind == "write" or .kind == "begin" or .kind == "end")
		and ((.flags // []) | index("'"$2"'") | not)') || exit
	expect_eq "$bad" "" "events of $1 without the flag $2"
}

# expect_probes PROG N: PROG has N avtrace USDT notes (0 for a plain build).
expect_probes() {
	local n
	n=$(readelf -n "$1" 2>/dev/null | grep -cE 'Provider: avtrace$') || true
	expect_eq "$n" "$2" "avtrace probes in $(basename "$1")"
}

# expect_bug OUT SCHED THREAD SIGNAL FILE LINE FUNC: the hand-written
# schedule SCHED, installed as schedule 1, reproduces the failure three
# times out of three.
expect_bug() {
	cp "$SCHEDS/$2.sched" "$1/schedules/0001.sched" || fail "cannot install $2"
	expect_bug_replays "$@" --schedule 1
}

# expect_observed_passes OUT: the recorded order replays PASS.
expect_observed_passes() {
	replay "$1" --schedule 0
	expect_eq "$RP_STATUS" 0 "exit status of the replay of $1's recorded order"
	expect_match "$(cat "$1.replay")" '^PASS' "replay of $1's recorded order"
}

# ---- the header: any compiler, any level, no library

# A program using every macro: a global, a struct member through a
# pointer, inside an atomic block; as C++ (.cpp) also a read through a
# template's pointer.  $1: the file name (.c or .cpp).
write_header_user() {
	cat >"$1" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include "avtrace.h"

struct pair { long a; int b; };
long counter;
struct pair pairs[4];

static void *work(void *arg)
{
	struct pair *p = &pairs[(long)arg & 3];
	long c;
	AVT_ATOMIC_BEGIN(); /* BEGIN */
	AVT_READ(&counter); /* READ COUNTER */
	c = counter;
	AVT_WRITE(&counter); /* WRITE COUNTER */
	counter = c + 1;
	AVT_WRITE(&p->b); /* WRITE MEMBER */
	p->b++;
	AVT_ATOMIC_END(); /* END */
	return NULL;
}

#ifdef __cplusplus
template <typename T> static T load(const T *p)
{
	AVT_READ(p); /* TEMPLATE READ */
	return *p;
}
#endif

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, work, (void *)1L) != 0)
		return 2;
	pthread_join(t, NULL);
#ifdef __cplusplus
	if (load(&counter) != 1)
		return 3;
#endif
	printf("counter=%ld b=%d\n", counter, pairs[1].b);
	return counter == 1 && pairs[1].b == 1 ? 0 : 1;
}
EOF
}

# check_header_user COMPILER SRC FLAGS...: builds SRC with nothing but
# -pthread, -I include and FLAGS, warnings as errors; the program runs,
# has the four kinds of probe, and a recording names every access.
check_header_user() {
	local cc=$1 src=$2 bin out lb lr lw lm le
	shift 2
	bin=$(basename "$src")$(printf '%s' "$*" | tr -d ' =')
	out=rec_$bin
	echo "+ $cc $* -pthread -I include $src" >&3
	"$cc" "$@" -g -Wall -Wextra -pedantic -Werror -pthread -I "$REPO/include" \
		-o "$bin" "$src" >"$bin.cc" 2>&1 ||
		fail "$cc $* does not compile avtrace.h: $(head -n 3 "$bin.cc")"
	"./$bin" >/dev/null || fail "$bin (built by $cc $*) exited $?"
	case $src in
	*.cpp) expect_probes "$bin" 6 ;; # begin, read, write, write, end, load's read
	*) expect_probes "$bin" 5 ;;
	esac
	for p in read write atomic_begin atomic_end; do
		readelf -n "$bin" | grep -qE "Name: $p\$" || fail "$bin has no '$p' probe"
	done
	lb=$(marker_line "$src" "/* BEGIN */") || exit
	lr=$(marker_line "$src" "/* READ COUNTER */") || exit
	lw=$(marker_line "$src" "/* WRITE COUNTER */") || exit
	lm=$(marker_line "$src" "/* WRITE MEMBER */") || exit
	le=$(marker_line "$src" "/* END */") || exit
	src=$(basename "$src")
	record "$out" "./$bin"
	expect_recorded "$out" 0
	expect_thread_events "$out" T1 "start - - -
begin - - $src:$lb
read counter 8 $src:$lr
write counter 8 $src:$lw
write pairs[1].b 4 $src:$lm
end - - $src:$le
exit - - -"
	case $src in
	*.cpp)
		lt=$(marker_line "$src" "/* TEMPLATE READ */") || exit
		expect_eq "$(thread_events "$out" T0 | grep '^read ')" "read counter 8 $src:$lt" "main's read through load<long>"
		;;
	esac
}

t_mem_header_c() {
	command -v cc >/dev/null 2>&1 || skip "no cc"
	write_header_user user.c
	for std in c11 c99; do
		for o in -O0 -O2; do
			check_header_user cc user.c "-std=$std" "$o"
		done
	done
}

t_mem_header_cxx() {
	command -v g++ >/dev/null 2>&1 || skip "g++ is not installed"
	write_header_user user.cpp
	for std in c++11 c++17; do
		for o in -O0 -O2; do
			check_header_user g++ user.cpp "-std=$std" "$o"
		done
	done
}

t_mem_gdb_info_probes() {
	command -v gdb >/dev/null 2>&1 || skip "gdb is not installed"
	prog=$(target mem_log) || exit
	gdb -batch -ex 'info probes' "$prog" >probes.txt 2>&1 || fail "gdb -batch failed: $(head -n 1 probes.txt)"
	sed 's/^/  | /' probes.txt >&3
	for p in read write atomic_begin atomic_end; do
		expect_match "$(cat probes.txt)" "^stap +avtrace +$p +0x" "gdb's probe list ($p)"
	done
	n=$(grep -cE '^stap +avtrace ' probes.txt) || true
	expect_eq "$n" 5 "avtrace probes of mem_log in gdb's list"
	prog=$(target mem_log_plain) || exit
	gdb -batch -ex 'info probes' "$prog" >plain.txt 2>&1
	expect_no_match "$(cat plain.txt)" 'avtrace' "gdb's probe list of mem_log_plain"
}

# ---- mem_log: lost log entry (atomicity violation)

t_mem_log_annotated() {
	f=$SRC/mem_log.c
	lb=$(marker_line "$f" "/* ATOMIC BEGIN */") || exit
	lr=$(marker_line "$f" "/* READ INDEX */") || exit
	ls=$(marker_line "$f" "/* WRITE SLOT */") || exit
	lw=$(marker_line "$f" "/* WRITE INDEX */") || exit
	le=$(marker_line "$f" "/* ATOMIC END */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	natively mem_log
	expect_probes "$(target mem_log)" 5
	record out mem_log
	expect_recorded out 0
	expect_match "$(cat out.stdout)" '^log_index=2$' "target's stdout"
	for k in 1 2; do
		expect_thread_events out "T$k" "start - - -
begin - - mem_log.c:$lb
read log_index 8 mem_log.c:$lr
write log_buf[$((k - 1))] 8 mem_log.c:$ls
write log_index 8 mem_log.c:$lw
end - - mem_log.c:$le
exit - - -"
	done
	expect_eq "$(select_events out '.func == "append"' | grep -c .)" 10 "events in append()"
	expect_count out read "" 2
	expect_count out write "" 4
	expect_flagged out annotated
	expect_observed_passes out
	expect_bug out mem_log_annotated T0 SIGABRT mem_log "$lc" main
	expect_match "$(cat out.replay)" "read log_index +mem_log[.]c:$lr" "interleaving in the report"
}

t_mem_log_watch() {
	f=$SRC/mem_log.c
	lr=$(marker_line "$f" "/* READ INDEX */") || exit
	ls=$(marker_line "$f" "/* WRITE SLOT */") || exit
	lw=$(marker_line "$f" "/* WRITE INDEX */") || exit
	lp=$(marker_line "$f" "/* PRINT LINE */") || exit
	lc=$(marker_line "$f" "/* CHECK LINE */") || exit
	natively mem_log_plain
	expect_probes "$(target mem_log_plain)" 0
	record_watch out 'log_index,log_buf[0],log_buf[1]' mem_log_plain
	expect_recorded out 0
	for k in 1 2; do
		expect_thread_events out "T$k" "start - - -
read log_index 8 mem_log.c:$lr
write log_buf[$((k - 1))] 8 mem_log.c:$ls
write log_index 8 mem_log.c:$lw
exit - - -"
	done
	# main's reads after the joins (the assert reads the slots only
	# because log_index == 2)
	expect_eq "$(thread_events out T0 | grep -E '^(read|write) ')" "read log_index 8 mem_log.c:$lp
read log_index 8 mem_log.c:$lc
read log_buf[0] 8 mem_log.c:$lc
read log_buf[1] 8 mem_log.c:$lc" "main's watched accesses"
	expect_flagged out watched
	expect_observed_passes out
	expect_bug out mem_log_watch T0 SIGABRT mem_log "$lc" main
}

# ---- mem_order: use before publish (order violation)

t_mem_order_annotated() {
	f=$SRC/mem_order.c
	lb=$(marker_line "$f" "/* ATOMIC BEGIN */") || exit
	lr=$(marker_line "$f" "/* READ CONFIG */") || exit
	le=$(marker_line "$f" "/* ATOMIC END */") || exit
	lp=$(marker_line "$f" "/* PUBLISH LINE */") || exit
	ld=$(marker_line "$f" "/* DEREF LINE */") || exit
	natively mem_order
	expect_probes "$(target mem_order)" 4
	record out mem_order
	expect_recorded out 0
	expect_eq "$(thread_events out T0 | grep -E '^(read|write) ')" \
		"write config 8 mem_order.c:$lp" "main's annotated accesses"
	expect_thread_events out T1 "start - - -
begin - - mem_order.c:$lb
read config 8 mem_order.c:$lr
end - - mem_order.c:$le
exit - - -"
	expect_flagged out annotated
	expect_observed_passes out
	expect_bug out mem_order_annotated T1 SIGSEGV mem_order "$ld" worker
}

t_mem_order_watch() {
	f=$SRC/mem_order.c
	lr=$(marker_line "$f" "/* READ CONFIG */") || exit
	lp=$(marker_line "$f" "/* PUBLISH LINE */") || exit
	ld=$(marker_line "$f" "/* DEREF LINE */") || exit
	natively mem_order_plain
	record_watch out config mem_order_plain
	expect_recorded out 0
	expect_eq "$(thread_events out T0 | grep -E '^(read|write) ')" \
		"write config 8 mem_order.c:$lp" "main's watched accesses"
	expect_thread_events out T1 "start - - -
read config 8 mem_order.c:$lr
exit - - -"
	expect_flagged out watched
	expect_observed_passes out
	# main's store comes right after pthread_create: the schedule needs
	# main stopped between the two
	expect_bug out mem_order_watch T1 SIGSEGV mem_order "$ld" worker
}

# ---- mem_dcl: broken double-checked initialization

t_mem_dcl_annotated() {
	f=$SRC/mem_dcl.c
	lk=$(marker_line "$f" "/* CHECK LINE */") || exit
	lr=$(marker_line "$f" "/* RECHECK LINE */") || exit
	lb=$(marker_line "$f" "/* ATOMIC BEGIN */") || exit
	lp=$(marker_line "$f" "/* PUBLISH LINE */") || exit
	li=$(marker_line "$f" "/* INIT READY */") || exit
	le=$(marker_line "$f" "/* ATOMIC END */") || exit
	lt=$(marker_line "$f" "/* RETURN LINE */") || exit
	lu=$(marker_line "$f" "/* USE LINE */") || exit
	lv=$(marker_line "$f" "/* VALUE LINE */") || exit
	ll=$(marker_line "$f" "/* LOCK LINE */") || exit
	la=$(marker_line "$f" "/* ALLOC LINE */") || exit
	ln=$(marker_line "$f" "/* UNLOCK LINE */") || exit
	natively mem_dcl
	record out mem_dcl
	expect_recorded out 0
	# the heap object is named by its allocation site
	heap="heap#1 (8 bytes, calloc at mem_dcl.c:$la in get_instance)"
	expect_thread_events out T1 "start - - -
read instance 8 mem_dcl.c:$lk
acquire init_lock - mem_dcl.c:$ll
read instance 8 mem_dcl.c:$lr
begin - - mem_dcl.c:$lb
write instance 8 mem_dcl.c:$lp
write $heap +4 4 mem_dcl.c:$li
end - - mem_dcl.c:$le
release init_lock - mem_dcl.c:$ln
read instance 8 mem_dcl.c:$lt
read $heap +4 4 mem_dcl.c:$lu
read $heap 4 mem_dcl.c:$lv
exit - - -"
	expect_thread_events out T2 "start - - -
read instance 8 mem_dcl.c:$lk
read instance 8 mem_dcl.c:$lt
read $heap +4 4 mem_dcl.c:$lu
read $heap 4 mem_dcl.c:$lv
exit - - -"
	expect_flagged out annotated
	expect_observed_passes out
	expect_bug out mem_dcl_annotated T2 SIGABRT mem_dcl "$lu" reader
}

t_mem_dcl_watch() {
	f=$SRC/mem_dcl.c
	lk=$(marker_line "$f" "/* CHECK LINE */") || exit
	ll=$(marker_line "$f" "/* LOCK LINE */") || exit
	lr=$(marker_line "$f" "/* RECHECK LINE */") || exit
	la=$(marker_line "$f" "/* ALLOC LINE */") || exit
	lp=$(marker_line "$f" "/* PUBLISH LINE */") || exit
	li=$(marker_line "$f" "/* INIT READY */") || exit
	ln=$(marker_line "$f" "/* UNLOCK LINE */") || exit
	lt=$(marker_line "$f" "/* RETURN LINE */") || exit
	lu=$(marker_line "$f" "/* USE LINE */") || exit
	natively mem_dcl_plain
	# the field lives on the heap: find its address (the same in every
	# run under avtrace, ASLR off), then watch it by address
	record_watch first instance mem_dcl_plain
	expect_recorded first 0
	addr=$(sed -n 's/.*ready-at=\(0x[0-9a-f]*\).*/\1/p' first.stdout)
	expect_match "$addr" '^0x[0-9a-f]+$' "address of instance->ready in the target's stdout"
	record_watch out "instance,$addr:4" mem_dcl_plain
	expect_recorded out 0
	expect_match "$(cat out.stdout)" "ready-at=$addr " "address of instance->ready in the second run"
	heap="heap#1 (8 bytes, calloc at mem_dcl.c:$la in get_instance)"
	# calloc clears the new object: a write of the watched address inside
	# glibc (a store of the value already there: a write all the same, the
	# trapping instruction is decoded), named by address since the
	# allocation has not returned yet
	expect_match "$(thread_events out T1 | sed -n 5p)" "^write $addr 4 malloc[.]c:[0-9]+$" "T1's 4th access"
	got=$(thread_events out T1 | sed 5d) || exit
	expect_eq "$got" "start - - -
read instance 8 mem_dcl.c:$lk
acquire init_lock - mem_dcl.c:$ll
read instance 8 mem_dcl.c:$lr
write instance 8 mem_dcl.c:$lp
write $heap +4 4 mem_dcl.c:$li
release init_lock - mem_dcl.c:$ln
read instance 8 mem_dcl.c:$lt
read $heap +4 4 mem_dcl.c:$lu
exit - - -" "T1's events"
	expect_thread_events out T2 "start - - -
read instance 8 mem_dcl.c:$lk
read instance 8 mem_dcl.c:$lt
read $heap +4 4 mem_dcl.c:$lu
exit - - -"
	expect_flagged out watched
	expect_observed_passes out
	expect_bug out mem_dcl_watch T2 SIGABRT mem_dcl "$lu" reader
}

# ---- mem_spinflag: a correct hand-off (no bug to find)

t_mem_spinflag_annotated() {
	f=$SRC/mem_spinflag.c
	lb=$(marker_line "$f" "/* ATOMIC BEGIN */") || exit
	lw=$(marker_line "$f" "/* WRITE DATA */") || exit
	lf=$(marker_line "$f" "/* SET FLAG */") || exit
	le=$(marker_line "$f" "/* ATOMIC END */") || exit
	ls=$(marker_line "$f" "/* SPIN LINE */") || exit
	lr=$(marker_line "$f" "/* READ DATA */") || exit
	natively mem_spinflag
	record out mem_spinflag
	expect_recorded out 0
	expect_thread_events out T2 "start - - -
begin - - mem_spinflag.c:$lb
write data 8 mem_spinflag.c:$lw
write flag 4 mem_spinflag.c:$lf
end - - mem_spinflag.c:$le
exit - - -"
	expect_thread_events out T1 "start - - -
read flag 4 mem_spinflag.c:$ls
read data 8 mem_spinflag.c:$lr
exit - - -"
	expect_flagged out annotated
	for i in 1 2 3; do
		expect_observed_passes out
	done
}

t_mem_spinflag_watch() {
	f=$SRC/mem_spinflag.c
	lw=$(marker_line "$f" "/* WRITE DATA */") || exit
	lf=$(marker_line "$f" "/* SET FLAG */") || exit
	ls=$(marker_line "$f" "/* SPIN LINE */") || exit
	lr=$(marker_line "$f" "/* READ DATA */") || exit
	natively mem_spinflag_plain
	record_watch out data,flag mem_spinflag_plain
	expect_recorded out 0
	expect_thread_events out T2 "start - - -
write data 8 mem_spinflag.c:$lw
write flag 4 mem_spinflag.c:$lf
exit - - -"
	expect_thread_events out T1 "start - - -
read flag 4 mem_spinflag.c:$ls
read data 8 mem_spinflag.c:$lr
exit - - -"
	expect_flagged out watched
	for i in 1 2 3; do
		expect_observed_passes out
	done
}

# The consumer with no busy work spins on the flag before the producer ran.
# Every iteration is an event (annotated or watched read); the recorder must
# still take the CPU away from it after its 10 ms slice, as from any spinning
# thread, so the producer runs and the spin ends.  At a few microseconds per
# event, one slice is a few thousand reads: allow 10,000.
t_mem_spinflag_spin_first() {
	record_spin() { # OUT PROG [WATCH]
		local prog st
		prog=$(target "$2") || exit
		echo "+ avtrace record -o $1 ${3:+--watch $3 }-- $prog 0 (timeout 20 s)" >&3
		timeout 20 "$AVTRACE" record -q -o "$1" ${3:+--watch "$3"} -- "$prog" 0 >"$1.stdout" 2>"$1.stderr"
		st=$?
		[ $st -ne 124 ] || fail "record of $2 with a spinning consumer did not finish in 20 s (the spinning thread is never preempted)"
		expect_eq "$st" 0 "exit status of the record of $2"
	}
	record_spin out mem_spinflag
	n=$(count_kind out read flag) || exit
	[ "$n" -le 10000 ] || fail "the consumer read the flag $n times before the producer ran (annotated): not preempted after its slice"
	record_spin outw mem_spinflag_plain data,flag
	n=$(count_kind outw read flag) || exit
	[ "$n" -le 10000 ] || fail "the consumer read the flag $n times before the producer ran (watched): not preempted after its slice"
}

# ---- bad input

t_mem_watch_bad_input() {
	prog=$(target mem_log_plain) || exit
	avt record -o out --watch a,b,c,d,e -- "$prog" >out.stdout 2>err
	expect_eq "$?" 2 "exit status with 5 variables"
	expect_one_line_error err
	expect_match "$(cat err)" 'at most 4' "message"
	expect_no_file out/trace.avt
	avt record -o out --watch nosuch -- "$prog" >out.stdout 2>err
	expect_eq "$?" 2 "exit status for an unknown variable"
	expect_one_line_error err
	expect_match "$(cat err)" "nosuch" "message names the variable"
	expect_no_file out/trace.avt
	# an address that x86 cannot watch at that size
	avt record -o out --watch 0x1001:4 -- "$prog" >out.stdout 2>err
	expect_eq "$?" 2 "exit status for a misaligned address"
	expect_one_line_error err
	expect_match "$(cat err)" "aligned" "message"
}

# A library loaded by dlopen() after start: its probes are found when the
# dynamic linker reports the new link map, and replay plants them again.
t_mem_dlopen_probes() {
	need_jq
	rl=$(marker_line "$REPO/tests/targets/dl/annot_lib.c" "/* LIB READ LINE */") || exit
	wl=$(marker_line "$REPO/tests/targets/dl/annot_lib.c" "/* LIB WRITE LINE */") || exit
	record out dlopener
	expect_recorded out 0
	# the library's annotated accesses; main (not annotated) reads the
	# counter twice more through dlsym's pointer, seen by the access
	# breakpoints of the executable (the library, annotated, has none)
	expect_eq "$(select_events out '.obj_name == "lib_counter" and .func == "annot_bump" and .kind == "read"' | wc -l)" 4 "annotated reads of lib_counter"
	expect_eq "$(select_events out '.obj_name == "lib_counter" and .func == "annot_bump" and .kind == "write"' | wc -l)" 4 "annotated writes of lib_counter"
	expect_eq "$(select_events out '.obj_name == "lib_counter" and .func == "main"' | wc -l)" 2 "main's reads of lib_counter"
	sites=$(avt dump -d out --json | jq -r 'select(.obj_name == "lib_counter" and .func != "main") | "\(.kind) \(.site) \(.func)"' | sort -u | tr '\n' ';')
	expect_eq "$sites" "read annot_lib.c:$rl annot_bump;write annot_lib.c:$wl annot_bump;" "sites in the library"
	avt_timed 30 replay -d out --schedule 0 >rp.txt 2>&1
	expect_eq "$?" 0 "replay of the recorded order"
}
