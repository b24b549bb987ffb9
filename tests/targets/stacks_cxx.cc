// -O2 -fomit-frame-pointer C++: exceptions thrown through frames that had
// events (lock/unlock), caught two calls up; a thread exits through
// pthread_exit from deep inside calls (forced unwind).  Correct program: the
// output must match a native run.
#include <pthread.h>
#include <cstdio>
#include <stdexcept>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

struct guard {
	guard() { pthread_mutex_lock(&m); }
	~guard() { pthread_mutex_unlock(&m); }
};

__attribute__((noinline)) static void leaf(int i)
{
	guard g;
	total += i;
	if (i % 3 == 0)
		throw std::runtime_error("multiple of three");
}

__attribute__((noinline)) static long middle(int i)
{
	{
		guard g;
		total += 2 * i;
	}
	leaf(i);
	return i;
}

__attribute__((noinline)) static long top(int n)
{
	long ok = 0, caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			ok += middle(i);
		} catch (const std::exception &e) {
			caught++;
		}
	}
	return ok * 1000 + caught;
}

__attribute__((noinline)) static void exit_here(int d)
{
	{
		guard g;
		total += d;
	}
	pthread_exit((void *)7);
}

__attribute__((noinline)) static void deep_exit(int d)
{
	{
		guard g;
		total += d;
	}
	exit_here(d - 1);
}

static void *worker(void *arg)
{
	long r = top((int)(long)arg);
	deep_exit(3);
	return (void *)r;
}

int main()
{
	pthread_t th[2];
	void *r[2];
	for (long t = 0; t < 2; t++)
		pthread_create(&th[t], nullptr, worker, (void *)(10 + t));
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], &r[t]);
	std::printf("r %ld %ld total %ld after %ld\n", (long)r[0], (long)r[1], total, top(7));
	return 0;
}
