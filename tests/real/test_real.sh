# shellcheck shell=bash
# Widely used multithreaded programs from Debian under avtrace (issue 18,
# item 1): each is recorded on a 20 MB input with output byte-identical to
# a native run, and `avtrace test --explore 20` (on a 2 MB input, to keep
# the suite short) reports nothing.  Run by `make check` through
# tests/e2e/run.sh; a program that is not installed is skipped (scripts/setup
# installs them).  Their speed is measured by bench/real, not here.

# input FILE MB: a deterministic text of about MB megabytes.
input() {
	seq 1 $(($2 * 130000)) | awk '{ printf "%d %x line %d of the test input\n", $1, $1 * 2654435761 % 4294967296, $1 % 977 }' |
		head -c $(($2 * 1000000)) >"$1"
}

need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed (scripts/setup installs it)"
}

# compressor NAME ARGS...: NAME ARGS -c FILE, natively and recorded (20 MB),
# then avtrace test --explore 20 on 2 MB.
compressor() {
	local name=$1 st
	shift
	need "$name"
	input big.txt 20
	input small.txt 2
	"$name" "$@" -c big.txt >native.out || fail "$name fails natively"
	avt_timed 300 record -q -o rec -- "$name" "$@" -c big.txt >recorded.out 2>rec.err
	st=$?
	sed 's/^/  | /' rec.err >&3
	expect_eq "$st" 0 "exit status of $name recorded"
	cmp -s native.out recorded.out || fail "$name $*: recorded output differs from the native one"
	avt_timed 600 test -o t --explore 20 -- "$name" "$@" -c small.txt >t.out 2>&1
	st=$?
	sed 's/^/  | /' t.out >&3
	expect_eq "$st" 0 "avtrace test --explore 20 status on $name"
	[ -z "$(ls t/reports 2>/dev/null)" ] || fail "avtrace test reported on $name: $(ls t/reports)"
}

# limit: 630
t_real_xz() { compressor xz -T2 --block-size=1MiB; }
# limit: 630
t_real_lbzip2() { compressor lbzip2 -n 2; }
# limit: 630
t_real_pbzip2() { compressor pbzip2 -p2; }
# limit: 630
t_real_pigz() { compressor pigz -p 4; }
# limit: 630
t_real_zstd() { compressor zstd -T2 -q; }

# memcached -t 4 answering a 2,000-request loopback client (1,000 set/get
# pairs, then shutdown): the replies recorded equal the native ones.
# limit: 330
t_real_memcached() {
	need memcached
	cc -O2 -o client "$REPO/tests/real/memc_client.c" || fail "cannot build the client"
	local port=$((20000 + RANDOM % 20000)) st
	memcached -t 4 -A -U 0 -l 127.0.0.1 -p "$port" -u root &
	timeout 60 ./client "$port" 1000 >native.out || fail "the client fails natively"
	wait
	port=$((port + 1))
	avt_timed 300 record -q -o rec -- memcached -t 4 -A -U 0 -l 127.0.0.1 -p "$port" -u root 2>rec.err &
	timeout 300 ./client "$port" 1000 >recorded.out
	st=$?
	wait
	sed 's/^/  | /' rec.err >&3
	expect_eq "$st" 0 "client status against the recorded memcached"
	cmp -s native.out recorded.out || fail "memcached replies differ under record"
}

# GLib's installed thread tests (Debian's libglib2.0-tests; issue 29):
# `avtrace test` with no flags on each, as a developer's CI runs them: exit
# 0, no report, every schedule (the predictions' and exploration's) run to
# its end, none infeasible.  GLib's locks are futex words inside libglib,
# known to avtrace by its built-in GLib spec (docs/sync-spec.md).  The
# cases whose stress loops take seconds natively are skipped with GLib's
# own -s/-x options (the times are measured above each case):
# each run of exploration repeats the whole program, so a 2 s case costs
# 100 runs x 2 s.  A test that is not installed is skipped.
GLIB_TESTS=/usr/libexec/installed-tests/glib

# glib_test NAME [GLIB TEST OPTIONS...]
glib_test() {
	local name=$1 prog=$GLIB_TESTS/$1 st
	shift
	[ -x "$prog" ] || skip "no $prog: GLib's installed tests are missing (scripts/setup --test installs libglib2.0-tests)"
	timeout 120 "$prog" "$@" >native.out 2>&1 || fail "$name $* fails natively"
	# shellcheck disable=SC2086 # GLIB_AVT_OPTS: avtrace options, split
	avt_timed 300 test ${GLIB_AVT_OPTS:-} -o t -- "$prog" "$@" >t.out 2>&1
	st=$?
	sed 's/^/  | /' t.out >&3
	expect_eq "$st" 0 "exit status of avtrace test on $name $*"
	[ -z "$(ls t/reports 2>/dev/null)" ] || fail "avtrace test reported on $name: $(ls t/reports)"
	expect_no_match "$(cat t.out)" "INFEASIBLE|DIVERGED|STUCK" "$name's predictions"
	expect_match "$(cat t.out)" "^([0-9]+) of \\1 schedules? ran to (their|its) end \\(0 diverged" "$name's summary"
	expect_match "$(cat t.out)" " 0 bug, 0 deadlock, 0 infeasible, 0 error$" "$name's explored runs"
}

# Times: avtrace test wall time on a 2-core machine at load 10-20 (other
# builds and tests running), measured on this branch; natively each runs
# in under 0.5 s.  Exploration's 30 s budget is most of it.
# cond without /thread/cond/wait-until (a 1 s timed wait natively, so every
# explored run lasts seconds: the whole of cond passes too, in 134 s).
# limit: 400
t_real_glib_cond() { glib_test cond -x /thread/cond/wait-until; }

# The same with the test's own code instrumented, by --access-scope as
# before issue 30's shape 7 (now the named program is the user's code in
# a system directory too, so t_real_glib_cond has these events as well;
# the flag must still give the same verdict): a barrier
# of a counter under a GMutex, an atomic counter around it, and a
# producer/consumer on a state word.  Races on the atomic counter would
# move a thread's barrier ahead of another's, where its read of the
# counter loads another value, and the producer/consumer's orders would
# make one side read the state before the other wrote it: 4 of 17
# predictions replayed INFEASIBLE until predict knew the values reads
# load; now those are not made (docs/predict.md, "Reads before the
# violation") and every schedule runs to its end.
# limit: 400
t_real_glib_cond_own_code() {
	GLIB_AVT_OPTS="--access-scope cond" glib_test cond -x /thread/cond/wait-until
	expect_match "$(cat t.out)" '^[1-9][0-9]* more not predicted: a read before the violation' "cond's predictions left out"
}

# private without private2 and staticprivate4 (1.1 s of sleeps each).
# limit: 400
t_real_glib_private() { glib_test private -s /thread/private2 -s /thread/staticprivate4; }

# asyncqueue without /asyncqueue/threads: its check that each of its 10
# consumers got an item (asyncqueue.c:201, sums[i] > 0) holds natively
# only because every consumer sleeps 1 ms after each item; exploration
# finds the legal order where one consumer gets none (a report on a
# timing assumption of the test, not on GLib).
# limit: 400
t_real_glib_asyncqueue() { glib_test asyncqueue -s /asyncqueue/threads; }

# bitlock: its one case (g_bit_lock uncontended), whole.
# limit: 400
t_real_glib_bitlock() { glib_test bitlock; }

# mutex and rec-mutex with -m quick (their perf cases count to
# n_threads + 1) and without mutex5/rec-mutex4 (stress loops of 13-30 s
# natively): every helper thread spins in `while (do_addition (&x))` (a
# lock, a test of x, an unlock) until main sets x with g_atomic_int_set.
# That spin is now seen as one (a lock's events count as reads of it,
# tests/e2e/test_glib29.sh's lockspin), so no policy keeps running a
# spinning helper above main.  Measured at load 9-12: mutex 100 of 100
# explored runs to their end, 33 s (before: 76 of 100, 24 at their time
# limit, 141 s); rec-mutex 1970 of 1970 in 30 s (before: contended2 alone
# 23 of 100 at their limit, 122 s).  mutex1-4, rec-mutex1-3 are
# single-threaded.
# limit: 400
t_real_glib_mutex() { glib_test mutex -m quick -s /thread/mutex5; }

# limit: 400
t_real_glib_rec_mutex() { glib_test rec-mutex -m quick -s /thread/rec-mutex4; }

# thread-pool, whole: its pool queue's critical sections are libglib's
# own code, and SideTrack's windows on them are no longer predicted (their
# events all lie outside the recording's scope: docs/predict.md); one or
# two of them ended INFEASIBLE before, the worker that popped after the
# swap meeting another lock.  The whole tree (the test and its
# g_test_trap_subprocess children) explored within the budget.
# Since shape 7 the test's own code is instrumented: its
# g_atomic_int_inc's (`lock addl $1,0x20(%rbx)` at thread-pool+0x18ea,
# +0x18a0, the flags dead) are events, and about half of the recordings
# got `race-WW` predictions between two of them whose replays ended
# INFEASIBLE (the reversal held a worker at its increment while main
# waited, through libglib code with no events, for what that worker does
# after it).  Two such updates commute: predict makes no race of them
# (predict.c, commuting_updates; target acc_atomic_inc_ok).
# limit: 400
t_real_glib_thread_pool() { glib_test thread-pool; }

# Left out (measured on this branch, same machine and load):
# - mutex5, rec-mutex4: stress loops of 13-30 s natively.  rwlock1-6 are
#   single-threaded.
# - rwlock7/rwlock8: rwlock8 is 12 threads x 100,000 lock/unlock pairs:
#   2,400,221 events recorded in 254 s, and each explored run of it ends
#   at its time limit (41 of 41 infeasible, killed at 600 s).
# - atomic: /atomic/threaded records 200,128 events (12.9 s) and explores
#   at 0.2 runs/s: 75 runs passed in 380 s, killed at 416 s.
# - once: exit 0, no report, but not every explored run ends: of two
#   measurements after issue 29's fixes, 100 of 100 runs ended (127 s),
#   then 99 of 100 (133 s; run 20, a PCT run, seed 1: 3,538 steps, no
#   yield step, ended at its 10 s time limit).  Before, 2 of 100 (156 s).
#   Its recording under `avtrace test` (--stacks) also had 21 events its
#   replays never make (fixed for issue 29).  With the lock-spin fix, at
#   load 9-13: 99 of 100 again (133 s; run 28, PCT member run 7: 4,300
#   steps, no yield step, at its time limit).  The stuck runs depend on
#   the clock, not on the seed: on one recording, `explore --policy pct
#   --seed 1 -n 40` ran 40 of 40 (-j 2) and 38 of 40 (-j 2; runs 30 and
#   39 at their limit, 697 and 2,031 steps where a run that ends has about
#   5,300), 35 of 40 (-j 2), and with -j 1 30 of 30 (run 30 ending).
#   Three runs caught at 9 s and killed at their limit 0.5 s later: every
#   thread of the program ptrace-stopped ('t'; the live ones in
#   FUTEX_WAIT_PRIVATE on the test's word at .bss+0x4068, main in clone3
#   or at a stop outside a syscall, one with sp 0), and the tracer blocked
#   in wait4(-1, __WALL) (twice) or in clock_nanosleep (its poll): it
#   waits for a stop it has already had, or that a thread it counts as
#   running will never report.  A tracer bug in tracer/loop.c's waiting
#   (wait_any, watch_running's interrupts), not a policy's; not fixed.
#   Issue 29, measured again (kernel 6.18, load 3-10 from other sessions):
#   `avtrace test` on once had 1, 1, 2 and 6 of 100 runs stuck; the same
#   run (explore -n 1 at that run's number) passes when run alone, so no
#   seed reproduces it.  Six stuck runs caught at 6-8 s, five with the
#   tracer's stack (gdb), three of them with an in-memory log of every
#   stop, resume, tick and interrupt (a debugging build, not committed):
#   none was in a hand-over script (agent_script_on false, no script_over
#   in the stack; the once-script branch's change does not reach them).
#   Each time the thread being run is a GCond waiter (g_cond_wait, wait
#   TW_COND, expect_block, no interrupt pending) resumed from a hook's
#   breakpoint it reaches inside g_cond_wait (NX_RESUME, PTRACE_CONT
#   returned 0), and the tracer then sits in wait_any's blocking
#   waitpid(-1, __WALL) with nothing more logged: no stop of any thread
#   and no tick (none logged after that resume; the handler's count the
#   same before and after a gdb attach; no SIGALRM pending; the 1 ms
#   ITIMER_REAL armed when the wait began).  In a run that ends, the first tick after
#   that resume finds the waiter 'S' and interrupts it.  In the stuck
#   ones the waiter is 't' inside its futex call with no stop reported,
#   though nothing of ours interrupted it.  So the wait loses both its
#   wake-ups (the child's stop and the timer); the loop's state is
#   consistent.  Not understood, not fixed: nothing in tracer/ stops the
#   timer on that path (timer_stop only in kill, free and detach).
# - 1bit-mutex: 6-9 s natively per case; not measured again here.
