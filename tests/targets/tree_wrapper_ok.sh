#!/bin/sh
# tree_wrapper_ok.sh: tree_wrapper.sh for the correct program
# (tree_bank_ok in the same directory): avtrace test must exit 0 with no
# report (tests/e2e/test_tree28.sh).
#
# Usage: tree_wrapper_ok.sh [INITIAL]
here=$(dirname "$0")
TREE_WRAPPED=1
export TREE_WRAPPED
exec "$here/tree_bank_ok" "$@"
