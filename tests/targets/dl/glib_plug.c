/*
 * libglibplug.so: a plugin linked with GLib, loaded by dl_glib.c with
 * dlopen() long after the program (and avtrace's agent) started, so
 * libglib is mapped late.  plug_run(N): two GThreads each add 1 to
 * `plug_count` N times under the GMutex `plug_lock`; returns the count.
 */
#include <glib.h>

GMutex plug_lock;
long plug_count;
static long plug_n;

static gpointer adder(gpointer arg)
{
	(void)arg;
	for (long i = 0; i < plug_n; i++) {
		g_mutex_lock(&plug_lock);
		plug_count++;
		g_mutex_unlock(&plug_lock);
	}
	return NULL;
}

long plug_run(long n)
{
	plug_n = n;
	GThread *a = g_thread_new("adder", adder, NULL), *b = g_thread_new("adder", adder, NULL);
	g_thread_join(a);
	g_thread_join(b);
	return plug_count;
}
