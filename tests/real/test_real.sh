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
