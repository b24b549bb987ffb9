/*
 * libFuzzer harness: meta.json loading (meta_read), and what replay does
 * with the result.
 */
#include <string.h>

#include "fuzz_util.h"
#include "trace/meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	const char *path = fuzz_file(data, size);
	struct avt_meta *m = meta_read(path, err, sizeof err, NULL);

	if (!m) {
		if (!strstr(err, path)) {
			fprintf(stderr, "message without the file: %s\n", err);
			abort();
		}
		return 0;
	}
	if (!m->argc || !m->argv[0] || m->argv[m->argc] || !*m->executable || !*m->cwd ||
	    strlen(m->build_id) > 40 || m->nwatch > AVT_META_MAX_WATCH || m->watch[m->nwatch])
		abort();
	for (size_t i = 0; m->env && i < m->nenv; i++)
		if (!m->env[i])
			abort();
	meta_free(m);
	return 0;
}
