# shellcheck shell=bash
# The layout of explore/ (docs/INTERNALS.md): no circle of files (a file
# uses another when its object leaves undefined a symbol the other's
# defines), no function over 80 lines; and the two checkers find what
# they look for.  Run with tests/e2e/run.sh explore_layout.

# fixture DIR: two files that use each other (a circle) and a third that
# only uses them
cycle_fixture() {
	mkdir -p "$1"
	printf 'int fa(int);\nint fb(int);\nint fa(int x)\n{\n\treturn x ? fb(x - 1) : 0;\n}\n' >"$1/a.c"
	printf 'int fa(int);\nint fb(int);\nint fb(int x)\n{\n\treturn fa(x);\n}\n' >"$1/b.c"
	printf 'int fa(int);\nint fc(int);\nint fc(int x)\n{\n\treturn fa(x);\n}\n' >"$1/c.c"
}

t_explore_no_file_cycles() {
	local out
	out=$("$REPO/scripts/file-cycles" "$REPO/explore" 2>&1) || fail "circles of files in explore/: $out"
	expect_match "$out" "no circle of files in .*explore/" "file-cycles explore"
	# the checker sees a circle, and only the files in it (it reads the
	# objects: build them)
	cycle_fixture "$PWD/fx"
	(cd fx && cc -c a.c b.c c.c) || fail "cannot build the fixture"
	out=$("$REPO/scripts/file-cycles" "$PWD/fx" 2>&1) && fail "no circle found in a.c <-> b.c: $out"
	expect_match "$out" "circle: a\.c b\.c$" "the circle of the fixture"
	expect_no_match "$out" "c\.c" "a file outside the circle"
	rm "$PWD/fx/b.c" "$PWD/fx/b.o"
	printf 'int fb(int);\nint fb(int x)\n{\n\treturn x;\n}\n' >"$PWD/fx/b.c"
	(cd fx && cc -c b.c) || fail "cannot build the fixture"
	out=$("$REPO/scripts/file-cycles" "$PWD/fx" 2>&1) || fail "a circle found where there is none: $out"
}

t_explore_short_functions() {
	local out
	out=$("$REPO/scripts/long-functions" "$REPO/explore" 2>&1) || fail "functions over 80 lines in explore/: $out"
	# the checker sees a function of 81 lines, not one of 80
	mkdir -p fx
	{ printf 'int f(void);\nint f(void)\n{\n\tint x = 0;\n'
	  for _ in $(seq 78); do printf '\tx++;\n'; done
	  printf '\treturn x;\n}\n'; } >fx/short.c
	out=$("$REPO/scripts/long-functions" fx 2>&1) || fail "an 80-line function counted as longer: $out"
	sed -i 's/^\treturn x;/\tx++;\n\treturn x;/' fx/short.c
	out=$("$REPO/scripts/long-functions" fx 2>&1) && fail "an 81-line function not found"
	expect_match "$out" "fx/short.c:3 f 81" "the long function"
}
