#include "multi.h"

struct lib_state lib_state = { .lock = PTHREAD_MUTEX_INITIALIZER };

__attribute__((noinline)) void lib_bump(void)
{
	pthread_mutex_lock(&lib_state.lock); /* LIB LOCK LINE */
	lib_state.generation++;
	pthread_mutex_unlock(&lib_state.lock);
}
