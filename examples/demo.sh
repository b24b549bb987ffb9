#!/bin/sh
# The README demo: record the bank example once (it passes), let avtrace
# predict the interleavings that would break it, and replay the first one:
# the lost deposit is reproduced, with source lines.  It records through
# avtrace's in-process agent (libavtrace-agent.so, built by `make demo`):
# --agent makes a missing agent an error instead of a silent fall-back to
# ptrace alone.  (No --stacks: with call stacks the agent stays passive.)
set -u
cd "$(dirname "$0")/.." || exit 2
out=${AVTRACE_DEMO_OUT:-/tmp/avtrace-demo}
run() {
	echo "\$ $*"
	"$@"
}
echo "recording through the in-process agent (libavtrace-agent.so)"
run ./avtrace record -o "$out" --force --agent -- examples/bin/bank || exit 2
echo
run ./avtrace predict -d "$out" || exit 2
echo
run ./avtrace replay -d "$out" --schedule 1
status=$?
echo
echo "replay exit status: $status (1 = bug reproduced)"
[ $status -eq 1 ]
