/*
 * The "yield T n" steps of an explored run (yields.h).
 */
#include "yields.h"

void yields_init(struct yields *y)
{
	*y = (struct yields){ UINT32_MAX, 0, 0 };
}

uint32_t yields_pick(struct yields *y, uint32_t lid, bool cont, size_t nev, uint32_t *of)
{
	/* an event since the last pick ends the count, whatever ended the
	 * turn that made it: a thread that made its event and was then
	 * sliced in a computation made no event-less turn.  (A count left
	 * from before that event gave "yield T0 1" where the computation
	 * outlasted the slice and none where it did not: other runs for one
	 * seed on a slower or busier machine.) */
	if (y->last != UINT32_MAX) {
		if (nev != y->nev)
			y->pending = 0;
		else if (!cont)
			y->pending++;
	}
	uint32_t n = lid != y->last ? y->pending : 0;
	*of = y->last;
	if (lid != y->last)
		y->pending = 0;
	y->last = lid;
	y->nev = nev;
	return n;
}
