/*
 * Inside explore/: every internal header, for the unit tests that reach
 * the parts directly (the recording view, the starting points, prefixes,
 * each policy, the look-ahead and its lock simulation).  No file of
 * explore/ includes it but policy.c, the top of the layering (xp.h).
 */
#ifndef AVT_EXPLORE_POLICY_INT_H
#define AVT_EXPLORE_POLICY_INT_H

#include "explore/ahead.h"
#include "explore/guided.h"
#include "explore/pct.h"
#include "explore/policy.h"
#include "explore/pos.h"
#include "explore/prefix.h"
#include "explore/rec.h"
#include "explore/rf.h"
#include "explore/sim.h"
#include "explore/start.h"
#include "explore/surw.h"
#include "explore/xp.h"

#endif
