/*
 * Shared by the libFuzzer harnesses (tests/fuzz/README.md): the readers
 * take a path, so each input is written to a memfd and read back through
 * /proc/self/fd/N, a regular file as far as fstat is concerned.
 */
#ifndef AVT_FUZZ_UTIL_H
#define AVT_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/log.h"

/* The path of a file holding data[0..size); the same file every call. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("avtrace-fuzz", 0);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror("memfd write");
		abort();
	}
	return path;
}

#endif
