/*
 * Names and classes of event kinds.  The names are part of the user-visible
 * contract (dump --json, reports), so the table is indexed by enum value and
 * checked for completeness at compile time.
 */
#include "event.h"

#include <string.h>

static const char *const kind_names[] = {
	[AVT_EV_NONE] = "none",
	[AVT_EV_START] = "start",
	[AVT_EV_EXIT] = "exit",
	[AVT_EV_CREATE] = "create",
	[AVT_EV_JOIN] = "join",
	[AVT_EV_ACQUIRE] = "acquire",
	[AVT_EV_RELEASE] = "release",
	[AVT_EV_TRYLOCK_FAIL] = "trylock_fail",
	[AVT_EV_RD_ACQUIRE] = "rd_acquire",
	[AVT_EV_WR_ACQUIRE] = "wr_acquire",
	[AVT_EV_WAIT] = "wait",
	[AVT_EV_SIGNAL] = "signal",
	[AVT_EV_BROADCAST] = "broadcast",
	[AVT_EV_BARRIER] = "barrier",
	[AVT_EV_SEM_WAIT] = "sem_wait",
	[AVT_EV_SEM_POST] = "sem_post",
	[AVT_EV_READ] = "read",
	[AVT_EV_WRITE] = "write",
	[AVT_EV_BEGIN] = "begin",
	[AVT_EV_END] = "end",
	[AVT_EV_FATAL_SIGNAL] = "fatal_signal",
	[AVT_EV_RMW] = "rmw",
	[AVT_EV_FUTEX_WAIT] = "futex_wait",
	[AVT_EV_FUTEX_WAKE] = "futex_wake",
};

/* A kind added to the enum without a name would print as NULL. */
_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == AVT_EV_KIND_COUNT,
	       "every event kind needs a name");

const char *avt_kind_name(unsigned kind)
{
	if (kind >= AVT_EV_KIND_COUNT)
		return NULL;
	return kind_names[kind];
}

enum avt_kind avt_kind_from_name(const char *name)
{
	if (!name)
		return AVT_EV_NONE;
	for (unsigned k = 0; k < AVT_EV_KIND_COUNT; k++)
		if (strcmp(kind_names[k], name) == 0)
			return (enum avt_kind)k;
	return AVT_EV_NONE;
}
