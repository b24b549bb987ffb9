# shellcheck shell=bash
# The man page docs/avtrace.1: it lints clean, it documents every option
# that `avtrace --help` and `avtrace CMD --help` list (and no other), and
# `make install` installs it.  Run with tests/e2e/run.sh man.

MAN=$REPO/docs/avtrace.1

t_man_lints_clean() {
	local out
	if command -v mandoc >/dev/null 2>&1; then
		out=$(mandoc -T lint -W style "$MAN" 2>&1)
		[ $? -eq 0 ] && [ -z "$out" ] || fail "mandoc -T lint: $(printf '%s' "$out" | head -n 3 | tr '\n' ' ')"
	elif command -v groff >/dev/null 2>&1; then
		out=$(groff -man -ww -z "$MAN" 2>&1)
		[ $? -eq 0 ] && [ -z "$out" ] || fail "groff -ww -z: $(printf '%s' "$out" | head -n 3 | tr '\n' ' ')"
	else
		skip "neither mandoc nor groff is installed (scripts/setup --test installs mandoc)"
	fi
	# it renders, and names every command
	if command -v mandoc >/dev/null 2>&1; then
		out=$(mandoc -T ascii "$MAN" | col -b) || fail "mandoc cannot render the page"
		for c in record test explore predict dump schedule replay summary; do
			expect_match "$out" "^ +avtrace $c " "the section of avtrace $c"
		done
	fi
}

t_man_lists_every_option() {
	local out
	out=$("$REPO/scripts/check-man-options" "$AVTRACE" "$MAN" 2>&1)
	case $? in
	0) ;;
	1) fail "the man page and --help differ: $(printf '%s' "$out" | tr '\n' ';' | sed 's/;/; /g')" ;;
	*) fail "scripts/check-man-options failed: $out" ;;
	esac
	echo "$out" >&3
}

t_man_installed() {
	echo "+ make install PREFIX=/usr/local DESTDIR=$PWD/dest" >&3
	make -s -C "$REPO" install PREFIX=/usr/local DESTDIR="$PWD/dest" >make.out 2>&1 ||
		fail "make install failed: $(tail -n 3 make.out)"
	expect_file dest/usr/local/share/man/man1/avtrace.1
	cmp -s "$MAN" dest/usr/local/share/man/man1/avtrace.1 || fail "the installed man page differs from docs/avtrace.1"
	expect_file dest/usr/local/bin/avtrace
}
