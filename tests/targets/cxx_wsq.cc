/*
 * cxx_wsq (issue 30, shape 3): a work-stealing deque on std::vector,
 * built -O0 (bin/cxx_wsq_O0, as the benchmarks are) and -O2.  The deque
 * is a local of main, shared with the owner and the thief by reference
 * (std::ref through std::thread's heap state).  push and pop hold the
 * mutex; steal checks the size WITHOUT it and takes the front item under
 * it: the owner can pop the last item between the check and the take,
 * and the thief then takes from an empty deque ("steal from an empty
 * deque", SIGABRT).  The thief computes first (DELAY iterations), so a
 * natural run lets the owner push and pop all its items and the thief
 * finds the deque empty: exit 0.  Every operation runs std::vector's
 * templates, whose locals (allocators, iterators) are private to the
 * thread that runs them: no event.
 *
 * usage: cxx_wsq [DELAY=50000000]
 */
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#ifndef WSQ_CORRECT
#define WSQ_CORRECT 0
#endif

class Wsq {
public:
	void push(int v)
	{
		std::lock_guard<std::mutex> g(m_);
		items_.push_back(v);
	}
	bool pop(int *v)
	{
		std::lock_guard<std::mutex> g(m_);
		if (items_.empty())
			return false;
		*v = items_.back();
		items_.pop_back();
		return true;
	}
	/* the racy size check (the thief's look before it locks) */
	size_t size_unlocked() const { return items_.size(); }
	bool steal(int *v)
	{
#if !WSQ_CORRECT
		if (size_unlocked() == 0) /* CHECK LINE */
			return false;
		std::lock_guard<std::mutex> g(m_);
		if (items_.empty()) { /* TAKE LINE */
			fprintf(stderr, "steal from an empty deque\n");
			abort();
		}
#else
		std::lock_guard<std::mutex> g(m_);
		if (items_.empty())
			return false;
#endif
		*v = items_.front();
		items_.erase(items_.begin());
		return true;
	}

private:
	std::mutex m_;
	std::vector<int> items_;
};

static void owner(Wsq &q)
{
	std::vector<int> done; /* private to the owner */
	for (int i = 0; i < 16; i++)
		q.push(i);
	int v;
	while (q.pop(&v))
		done.push_back(v);
	printf("owner popped %zu\n", done.size());
}

__attribute__((noinline)) static long compute(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}

static void thief(Wsq &q, long delay)
{
	long s = compute(delay);
	int v;
	int got = q.steal(&v);
	printf("thief stole %d (%ld)\n", got, s & 1);
}

int main(int argc, char **argv)
{
	long delay = argc > 1 ? atol(argv[1]) : 50000000;
	Wsq q;
	std::thread a(owner, std::ref(q));
	std::thread b(thief, std::ref(q), delay);
	a.join();
	b.join();
	return 0;
}
