/*
 * predict on a synthetic trace (issue: predict from lock events): 1M lock
 * events, 16 threads, 64 locks by default; prints the time of predict_run
 * alone, the predictions made and the process's peak memory.
 * Usage: predict_bench [NEVENTS] [NTHREADS] [NLOCKS] [SEED]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "predict/predict.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t nev = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	unsigned nthr = argc > 2 ? (unsigned)atoi(argv[2]) : 16;
	unsigned nlocks = argc > 3 ? (unsigned)atoi(argv[3]) : 64;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	struct trace *t = predict_synthetic_trace(nev, nthr, nlocks, seed);
	if (!t)
		return 2;
	struct predict_opts o = { .deadlocks = true, .sidetrack = true };
	struct prediction_set set;
	double t0 = now();
	if (predict_run(t, &o, &set) < 0)
		return 2;
	double t1 = now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("predict: %zu events, %u threads, %u locks: %.3f s, %zu predictions, peak RSS %ld MB (trace included)\n",
	       t->nev, nthr, nlocks, t1 - t0, set.n, ru.ru_maxrss / 1024);
	prediction_set_release(&set);
	trace_free(t);
	return 0;
}
