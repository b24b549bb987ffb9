/*
 * cxx_wsq_ok: cxx_wsq with the thief's size check under the mutex (the
 * correct counterpart: exit 0 in every order, no report).
 */
#define WSQ_CORRECT 1
#include "cxx_wsq.cc"
