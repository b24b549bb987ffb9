/*
 * Which CPU a supervisor and its target are pinned to.
 *
 * Serialized work is pinned to one CPU (PTRACE-NOTES: cross-CPU wake-ups
 * cost 6x per event).  Parallel runs (-j) each get their own CPU, chosen
 * from the CPUs this avtrace was allowed before it pinned itself: `avtrace
 * test` pins itself while recording, and the children it forks later would
 * otherwise all read that one-CPU mask.  An avtrace started alone takes the
 * CPU it is running on, so independent avtrace jobs spread over the
 * machine instead of all piling onto the first CPU.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "trace/log.h"
#include "tracer_int.h"

static cpu_set_t allowed;
static bool allowed_saved;

/* The CPUs the user gave this process, before it first pinned itself. */
static const cpu_set_t *allowed_cpus(void)
{
	if (!allowed_saved) {
		if (sched_getaffinity(0, sizeof allowed, &allowed) < 0)
			CPU_ZERO(&allowed);
		allowed_saved = true;
	}
	return &allowed;
}

void tracer_pin_cpu(int cpu)
{
	if (cpu < 0)
		return;
	allowed_cpus();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) < 0)
		avt_warn("cannot pin to CPU %d: %s", cpu, strerror(errno));
}

int tracer_nth_cpu(unsigned k)
{
	const cpu_set_t *set = allowed_cpus();
	if (!CPU_COUNT(set))
		return -1;
	unsigned want = k % (unsigned)CPU_COUNT(set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, set) && want-- == 0)
			return i;
	return -1;
}

int tracer_default_cpu(void)
{
	const cpu_set_t *set = allowed_cpus();
	int now = sched_getcpu();
	if (now >= 0 && now < CPU_SETSIZE && CPU_ISSET(now, set))
		return now;
	return tracer_nth_cpu(0);
}
