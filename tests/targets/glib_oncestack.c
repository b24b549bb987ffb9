/*
 * glib_oncestack: g_once_init_enter's first call, from a function of the
 * program, beside a worker (the way g_test_init reaches GLib's
 * get_random_version).  g_once_init_enter takes GLib's own GMutex
 * (g_once_mutex) inside: a part of the once call, no event of its own.
 * With --stacks that inner lock used to be recorded as an event (the
 * event's stack watched the user frames' returns, and the once call's
 * own return frame was taken to be among them and never pushed), while
 * replays did not make it: every replay diverged.  And g_set_prgname's
 * unlock, a tail call, returns through the slot --stacks swapped for its
 * trampoline at the acquire: its site was the trampoline's address, not
 * main's line.  Correct in every order.
 *
 * Usage: glib_oncestack
 */
#include <glib.h>

static gsize once_value;
static GMutex lock;
static int counter;

__attribute__((noinline)) static gsize value(void)
{
	if (g_once_init_enter(&once_value)) /* ONCE LINE */
		g_once_init_leave(&once_value, 42);
	return once_value;
}

static gpointer worker(gpointer arg)
{
	(void)arg;
	g_mutex_lock(&lock);
	counter += (int)value();
	g_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	/* its GMutex released by a tail call (`jmp g_mutex_unlock`), through
	 * the return slot --stacks swapped at the acquire's stack */
	g_set_prgname("glib_oncestack"); /* PRGNAME LINE */
	GThread *t = g_thread_new("worker", worker, NULL);
	g_mutex_lock(&lock);
	counter += (int)value();
	g_mutex_unlock(&lock);
	g_thread_join(t);
	return counter == 84 ? 0 : 1;
}
