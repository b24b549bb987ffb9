# shellcheck shell=bash
# Issue 30, "disk full": a result that cannot be written is an error, never a
# PASS, and no message says "Success".  Each test mounts a tiny tmpfs of its
# own (skipped where mounting is not permitted) and fills it.

# tiny_fs SIZE: mount a tmpfs of SIZE on ./fs, unmounted when the test ends.
tiny_fs() {
	mkdir -p fs
	mount -t tmpfs -o "size=$1" tmpfs fs 2>/dev/null || skip "cannot mount a tmpfs here (not root?)"
	trap 'umount -l "$PWD/fs" 2>/dev/null' EXIT
}

# fill_fs: take every free block of ./fs.
fill_fs() {
	dd if=/dev/zero of=fs/fill bs=4k >/dev/null 2>&1
	[ "$(df --output=avail fs | tail -n 1 | tr -d ' ')" -eq 0 ] || fail "could not fill the test file system"
}

t_replay_on_full_disk_is_an_error() {
	tiny_fs 2m
	record fs/r mutex_counter
	expect_eq "$REC_STATUS" 0 "record status"
	fill_fs
	avt_timed 60 replay -d fs/r --schedule 0 >rp.out 2>rp.err
	local st=$?
	sed 's/^/  | /' rp.out rp.err >&3
	expect_eq "$st" 2 "replay status when its results cannot be written"
	expect_match "$(cat rp.err)" "No space left on device" "the reason"
	expect_match "$(cat rp.err)" "not saved" "what was lost"
	expect_no_match "$(cat rp.err)" "Success" "messages"
	# no empty or half-written result is left for a reader to take for a pass
	expect_no_file fs/r/replays/0000.avt
	expect_no_file fs/r/replays/0000.json
	expect_no_file fs/r/replays/0000.json.tmp
}

t_record_on_full_disk_says_why() {
	tiny_fs 256k
	dd if=/dev/zero of=fs/fill bs=1k count=200 >/dev/null 2>&1
	local prog
	prog=$(target lockheavy) || exit
	avt_timed 120 record -o fs/r -- "$prog" 20000 2 >rec.out 2>rec.err
	local st=$?
	sed 's/^/  | /' rec.err >&3
	expect_eq "$st" 2 "record status when the trace cannot be written"
	expect_match "$(cat rec.err)" "cannot write trace '.*fs/r/trace.avt': No space left on device" "the reason"
	expect_no_match "$(cat rec.err)" "Success" "messages"
}
