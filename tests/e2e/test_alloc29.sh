# shellcheck shell=bash
# A program linked with an allocator of its own (as redis-server with
# jemalloc: it died of SIGSEGV in jemalloc's malloc_usable_size at its
# first allocation under `avtrace record`, exit 139, native exit 0).  The
# preloaded agent's malloc came before the allocator's in the lookup and
# took every call to glibc's.  The allocator's library is now preloaded
# before the agent (tracer/sanitizer.c): tests/targets/own_malloc with
# tests/targets/alloc/bumpalloc.c, whose malloc_usable_size aborts on a
# block it did not make.

# Recorded and replayed, the program runs on its own allocator: exit 0 and
# its line, as natively.
# limit: 60
t_alloc_own_malloc_recorded() {
	natively own_malloc
	record rec own_malloc
	expect_recorded rec 0
	expect_match "$(cat rec.stdout)" "^32 blocks, all the allocator's$" "the program's output"
	avt replay -d rec --schedule 0 >replay.out 2>&1
	st=$?
	sed 's/^/  | /' replay.out >&3
	expect_eq "$st" 0 "exit status of the replay of the recorded order"
	expect_no_match "$(cat replay.out)" "SIGABRT|DIVERGED|INFEASIBLE" "the replay"
}
