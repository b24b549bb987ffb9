/*
 * The correct twin of atomic_wait.cc: the producer writes the `payload`
 * first, then publishes `ready` (a seq_cst store) and wakes the consumer,
 * which re-checks the flag around wait() and reads the payload only after
 * it saw the flag.  Every order passes the check.
 *
 * usage: atomic_wait_ok [DELAY=50000000]
 */
#include <atomic>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <thread>

static std::atomic<int> ready{0};
static int payload;

static volatile long sink;

__attribute__((noinline)) static void other_work(long n)
{
	for (long i = 0; i < n; i++)
		sink = i;
}

static void producer(long delay)
{
	other_work(delay);
	payload = 42; /* WRITE LINE */
	ready.store(1); /* PUBLISH LINE */
	ready.notify_one();
}

static void consumer(long delay)
{
	while (ready.load() == 0)
		ready.wait(0); /* WAIT LINE */
	other_work(delay); /* what the consumer does before it needs the payload */
	int v = payload; /* READ LINE */
	std::printf("payload=%d\n", v);
	assert(v == 42); /* ASSERT LINE */
}

int main(int argc, char **argv)
{
	long delay = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 50000000;
	std::thread c(consumer, delay);
	std::thread p(producer, delay);
	c.join();
	p.join();
	return 0;
}
