/*
 * Facts of a replay in words: what the text report prints (headline,
 * failure site, the interleaving, the deadlock's wait-for cycle), as JSON
 * with file:line and names, added to DIR/replays/NNNN.json so that a reader
 * without the binaries (avtrace summary on a cluster's shared directory,
 * the SARIF and test --json writers) needs nothing else.  The fields are
 * documented in docs/json-output.md.
 */
#ifndef AVT_CLI_FACTS_H
#define AVT_CLI_FACTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"
#include "replay/replay.h"

/* At most this many events of the interleaving go into the JSON (the
 * last ones: those nearest the failure). */
#define FACTS_MAX_EVENTS 1000

/* The failure's code site: for a fatal signal, the faulting event's site,
 * or when the signal was raised inside a library (abort, assert), the
 * innermost frame of the program itself (module 0).  For other failures
 * the failing thread's last event with a site.  False when there is none. */
bool facts_failure_site(const struct replay_result *res, unsigned *mod, uint64_t *off,
			int *is_return);

/* The report's first line ("BUG reproduced: SIGABRT in T0 at bank.c:86
 * (main)"), without the newline. */
void facts_headline(struct names *n, const struct replay_result *res, char *buf, size_t len);

/* {"file","line","function","module","offset"} of a code site (file is
 * the path the DWARF line table gives, absolute when the compiler wrote
 * it so; unknown fields are absent).  A new reference. */
json_t *facts_site_json(struct names *n, unsigned mod, uint64_t off, int is_return);

/* Adds the facts to the replay JSON file jpath (rewritten atomically);
 * -1 if it cannot be read or written. */
int facts_add(const char *jpath, struct names *n, const struct replay *rp,
	      const struct replay_result *res);

#endif
