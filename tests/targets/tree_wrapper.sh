#!/bin/sh
# tree_wrapper.sh: a wrapper script in the shape of the libtool wrappers
# of every autotools build tree: it sets up the environment and execs the
# real program (tree_bank, the lost update, in the same directory) with
# the same arguments.  avtrace must follow the exec (issue 28,
# tests/e2e/test_tree28.sh).
#
# Usage: tree_wrapper.sh [INITIAL]
here=$(dirname "$0")
TREE_WRAPPED=1
export TREE_WRAPPED
exec "$here/tree_bank" "$@"
