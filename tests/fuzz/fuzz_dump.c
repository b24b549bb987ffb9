/*
 * libFuzzer harness: `avtrace dump --raw` and `dump --json --raw` on a
 * trace (cli/dump.c, linked in): every event, note, stack and flag printed
 * from what the reader accepted.  Symbolizing is left out: it opens the
 * module files the trace names, which would make the input the disk's.
 * Output goes to stdout, which `make fuzz` closes (-close_fd_mask=3).
 */
#include <stdarg.h>
#include <stddef.h>

#include "cli/cli.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cmd_dump's only outside call is for a bad option, which these argv
 * never have. */
int usage_error(const char *cmd, const char *fmt, ...)
{
	(void)cmd, (void)fmt;
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	char *raw[] = { "dump", "-d", (char *)path, "--raw", NULL };
	char *json[] = { "dump", "-d", (char *)path, "--json", "--raw", NULL };
	int a = cmd_dump(4, raw), b = cmd_dump(5, json);

	if ((a != 0 && a != EXIT_USAGE) || a != b)
		abort(); /* read or not, both ways alike */
	return 0;
}
