/*
 * Opening a file that came from anywhere: only a regular file, never
 * blocking on a FIFO, never larger than the reader can hold.
 */
#ifndef AVT_TRACE_FILE_H
#define AVT_TRACE_FILE_H

#include <stdint.h>
#include <stdio.h>

/* Opens path for reading ("rb") if it is a regular file of at most max
 * bytes (UINT64_MAX: any size); *size gets its size.  NULL with errno set
 * on failure: the open()'s errno, EINVAL for anything but a regular file
 * (a device like /dev/zero, a FIFO, a directory), EFBIG for a file larger
 * than max (then *size is set too).  avt_file_error() words it. */
FILE *avt_fopen_regular(const char *path, uint64_t max, uint64_t *size);
/* "not a regular file", "N bytes (at most MAX)" or strerror(errnum). */
const char *avt_file_error(int errnum, uint64_t size, uint64_t max, char *buf, size_t len);

#endif
