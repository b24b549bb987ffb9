/*
 * dl_glib: GLib loaded late (tests/e2e/test_agent.sh): the program is not
 * linked with GLib; it dlopen()s libglibplug.so (tests/targets/dl/
 * glib_plug.c, next to this binary), which is, and runs its GMutex
 * counter.  avtrace's agent, preloaded before any of it, must find
 * libglib's functions only then (docs/agent.md, "GMutex").
 *
 * Usage: dl_glib [N=500]   prints "count=2N"; exits 0 iff it is 2N.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500;
	char path[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", path, sizeof path - 32);
	if (len <= 0)
		return 2;
	path[len] = 0;
	char *slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "libglibplug.so");
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dl_glib: %s\n", dlerror());
		return 2;
	}
	long (*run)(long) = (long (*)(long))dlsym(h, "plug_run");
	if (!run)
		return 2;
	long count = run(n);
	printf("count=%ld\n", count);
	return count == 2 * n ? 0 : 1;
}
