/*
 * dlopener: loads tests/targets/bin/libannot.so with dlopen() after start
 * and calls its annot_bump() from two threads, twice each.  A recording
 * holds 4 reads and 4 writes of lib_counter (annotated inside the library,
 * at its LIB READ LINE / LIB WRITE LINE).  Exits 0 iff lib_counter == 4.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void (*bump)(void);

static void *worker(void *arg)
{
	(void)arg;
	bump();
	bump();
	return NULL;
}

int main(int argc, char **argv)
{
	char path[4096];
	(void)argc;
	snprintf(path, sizeof path, "%s/libannot.so", dirname(strdup(argv[0])));
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 2;
	}
	bump = (void (*)(void))dlsym(h, "annot_bump");
	long *counter = dlsym(h, "lib_counter");
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("lib_counter=%ld\n", *counter);
	return *counter == 4 ? 0 : 1;
}
