/*
 * The locks a look-ahead follows (sim.h).
 */
#include "sim.h"

size_t xp_sim_find(const struct xp_sim *m, uint64_t obj)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->l[i].obj == obj)
			return i;
	return XP_SIM_LOCKS;
}

size_t xp_sim_at(struct xp_sim *m, uint64_t obj)
{
	size_t i = xp_sim_find(m, obj);
	if (i < XP_SIM_LOCKS || m->n == XP_SIM_LOCKS)
		return i;
	m->l[m->n].obj = obj;
	m->l[m->n].owner = XP_SIM_FREE;
	m->l[m->n].count = 0;
	return m->n++;
}

bool xp_sim_is_free(const struct xp_sim *m, uint64_t obj)
{
	size_t i = xp_sim_find(m, obj);
	return i == XP_SIM_LOCKS || m->l[i].owner == XP_SIM_FREE;
}

bool xp_sim_step(struct xp_sim *m, uint32_t t, const struct xp_rev *r)
{
	size_t i = xp_sim_at(m, r->obj);
	if (i == XP_SIM_LOCKS)
		return false;
	if (r->kind == AVT_EV_ACQUIRE) {
		if (m->l[i].owner != XP_SIM_FREE && m->l[i].owner != t)
			return false;
		m->l[i].owner = t;
		m->l[i].count++;
		return true;
	}
	if (m->l[i].owner != t)
		return false;
	if (--m->l[i].count == 0)
		m->l[i].owner = XP_SIM_FREE;
	return true;
}
