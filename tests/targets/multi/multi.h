/* multi: a program in several files with a shared library of its own, for
 * symbolization tests (sites, functions and variable names in each). */
#ifndef MULTI_H
#define MULTI_H
#include <pthread.h>

struct pool {
	long before;
	pthread_mutex_t m;
	long items[4];
};
extern struct pool pool;

struct lib_state {
	int generation;
	pthread_mutex_t lock;
};
extern struct lib_state lib_state;

void work_locked(int who);
void lib_bump(void);
void job_run(void);
#endif
