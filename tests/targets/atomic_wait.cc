/*
 * A C++20 hand-off on std::atomic<int>::wait / notify_one (issue 29): the
 * producer publishes `ready` and wakes the consumer before it writes the
 * `payload` the flag guards.  The consumer waits for the flag, then reads
 * the payload and checks it (SIGABRT when it reads the old value).
 *
 * The producer computes first (DELAY iterations), so the consumer is asleep
 * in the futex wait when the flag is published, and the consumer computes
 * again (DELAY iterations) after it wakes, before it reads the payload:
 * natively the producer's next store comes long before, even on a loaded
 * machine where the wake-up preempts the producer, and the check holds.
 * The order "producer publishes, consumer wakes and reads, producer writes"
 * fails it.  atomic_wait_ok.cc is the correct twin (payload first).
 *
 * usage: atomic_wait [DELAY=50000000]
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
	ready.store(1); /* PUBLISH LINE */
	ready.notify_one();
	payload = 42; /* WRITE LINE: the bug, written after the flag */
}

static void consumer(long delay)
{
	/* wait() may return spuriously: it is re-checked, so that is not the bug */
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
