#!/bin/sh
# The README demo: record the bank example once (it passes), let avtrace
# predict the interleavings that would break it, and replay the first one:
# the lost deposit is reproduced, with source lines.
set -u
cd "$(dirname "$0")/.." || exit 2
out=${AVTRACE_DEMO_OUT:-/tmp/avtrace-demo}
run() {
	echo "\$ $*"
	"$@"
}
run ./avtrace record -o "$out" --force --stacks -- examples/bin/bank || exit 2
echo
run ./avtrace predict -d "$out" || exit 2
echo
run ./avtrace replay -d "$out" --schedule 1
status=$?
echo
echo "replay exit status: $status (1 = bug reproduced)"
[ $status -eq 1 ]
