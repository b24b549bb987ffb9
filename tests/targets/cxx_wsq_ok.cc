#define WSQ_OK 1
#include "cxx_wsq.cc"
