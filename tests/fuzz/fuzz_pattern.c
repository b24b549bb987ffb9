/*
 * libFuzzer harness: the PECAN pattern file reader (pr_patterns_load), on
 * top of the built-in patterns as `predict --patterns FILE` does.
 */
#include "fuzz_util.h"
#include "predict/pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pr_patterns ps = { 0 };

	if (pr_patterns_load(&ps, fuzz_file(data, size)) == 0) {
		for (size_t i = 0; i < ps.n; i++) {
			const struct pr_pat *p = &ps.p[i];
			if (p->n < 2 || p->n > PR_PAT_MAX || p->nthr < 2 || p->nthr > 4 ||
			    p->nvar > 4)
				abort(); /* the documented limits */
			for (unsigned k = 0; k < p->n; k++)
				if (p->ev[k].thr >= p->nthr || p->ev[k].var >= p->nvar ||
				    p->order[k] >= p->n)
					abort();
		}
	} else if (ps.n) {
		abort(); /* a failed load adds nothing */
	}
	pr_patterns_release(&ps);
	return 0;
}
