/* Opening untrusted files (file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *avt_fopen_regular(const char *path, uint64_t max, uint64_t *size)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO with no writer would wait forever */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int e;
	FILE *fp;

	*size = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	*size = (uint64_t)st.st_size;
	if (*size > max) {
		errno = EFBIG;
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) < 0 || !(fp = fdopen(fd, "rb")))
		goto fail;
	return fp;
fail:
	e = errno;
	close(fd);
	errno = e;
	return NULL;
}

const char *avt_file_error(int errnum, uint64_t size, uint64_t max, char *buf, size_t len)
{
	if (errnum == EINVAL)
		snprintf(buf, len, "not a regular file");
	else if (errnum == EFBIG)
		snprintf(buf, len, "%llu bytes (at most %llu)", (unsigned long long)size,
			 (unsigned long long)max);
	else
		snprintf(buf, len, "%s", strerror(errnum));
	return buf;
}
