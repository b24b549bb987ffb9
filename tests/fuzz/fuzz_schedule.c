/*
 * libFuzzer harness: the schedule reader, and the writer on what it read
 * (a schedule read back must write out and read in again the same).
 */
#include <string.h>

#include "fuzz_util.h"
#include "trace/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	const char *path = fuzz_file(data, size);
	struct schedule *s = schedule_read(path, err, sizeof err);

	if (!s) {
		if (!strstr(err, path)) {
			fprintf(stderr, "message without the file: %s\n", err);
			abort();
		}
		return 0;
	}
	(void)schedule_total_events(s);
	for (size_t i = 0; i < s->nsteps; i++)
		if (!s->steps[i].count)
			abort(); /* the reader refuses empty steps */
	/* round trip: what the writer makes of it, the reader takes */
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (mem && schedule_write_fp(s, mem) == 0 && fclose(mem) == 0) {
		mem = NULL;
		struct schedule *again = schedule_read(fuzz_file((const uint8_t *)text, len), err,
						       sizeof err);
		if (!again || again->nsteps != s->nsteps || again->has_free != s->has_free) {
			fprintf(stderr, "round trip: %s\n", again ? "differs" : err);
			abort();
		}
		schedule_free(again);
	}
	if (mem)
		fclose(mem);
	free(text);
	schedule_free(s);
	return 0;
}
