/* A library loaded with dlopen() whose accesses are annotated: its probes
 * must be found although it is not mapped at the program's entry. */
#include <pthread.h>

#include "avtrace.h"

long lib_counter;
pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void annot_bump(void)
{
	pthread_mutex_lock(&lib_lock);
	AVT_READ(&lib_counter); /* LIB READ LINE */
	long v = lib_counter;
	AVT_WRITE(&lib_counter); /* LIB WRITE LINE */
	lib_counter = v + 1;
	pthread_mutex_unlock(&lib_lock);
}
