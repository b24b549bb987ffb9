/* Stop signals (SIGINT, SIGTERM, SIGHUP) and the parallel workers of the
 * commands (cli/cli.h). */
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "predict/predict.h"
#include "tracer/tracer.h"

/* SIGINT, SIGTERM, SIGHUP.  A supervisor stops at its next step, kills its
 * target and keeps what it recorded (tracer_interrupt_all).  A parent of
 * parallel workers (the replays of `test`, the runs of an exploration)
 * sees tracer_interrupted() at its next wait, kills the workers in flight
 * (their targets die with them: PTRACE_O_EXITKILL) and prints what the
 * finished ones found; a worker dies with its parent (PR_SET_PDEATHSIG,
 * cli_worker_dies_with_parent).  Prediction stops at its next check and
 * keeps the predictions made so far (predict_interrupt). */
static void on_stop_signal(int sig)
{
	tracer_interrupt_all(sig);
	predict_interrupt(sig);
}

void cli_catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: waits must see it */
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

void cli_worker_dies_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* it died before the line above */
		_exit(128 + SIGKILL);
}
