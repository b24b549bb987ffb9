#!/bin/sh
# The README demo: record the bank example once (it passes), then replay
# the interleaving that loses a deposit (it aborts), with source lines.
set -u
cd "$(dirname "$0")/.." || exit 2
out=${AVTRACE_DEMO_OUT:-/tmp/avtrace-demo}
echo "\$ avtrace record -o $out --force -- examples/bin/bank"
./avtrace record -o "$out" --force -- examples/bin/bank || exit 2
echo
echo "\$ avtrace dump -d $out"
./avtrace dump -d "$out"
cp examples/bank-lost-update.sched "$out/schedules/0001.sched"
echo
echo "\$ avtrace replay -d $out --schedule 1      # examples/bank-lost-update.sched"
./avtrace replay -d "$out" --schedule 1
status=$?
echo
echo "replay exit status: $status (1 = bug reproduced)"
[ $status -eq 1 ]
