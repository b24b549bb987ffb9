/*
 * A work-stealing queue on std::vector (issue 30, shape 3): the owner
 * pushes and pops at the back, thieves steal at the front through a
 * head index, all under one std::mutex.  The bug (unless WSQ_OK): steal()
 * reads the head under the lock, drops it, and takes items_[h] and
 * advances the head under the lock again, so two thieves can both take
 * the same item (and the one behind it is lost).  Each thread keeps what
 * it took in a std::vector of its own (private, as in real schedulers);
 * main checks that every item was taken exactly once (SIGABRT if not).
 * The second thief computes first (DELAY iterations), so a natural run
 * lets the first finish its steal and the check holds.
 *
 * usage: cxx_wsq [DELAY=2000000]
 */
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

enum { NITEMS = 6, NSTEAL = 1 };

class WSQueue {
public:
	__attribute__((noinline)) void push(long v)
	{
		std::lock_guard<std::mutex> g(m_);
		items_.push_back(v);
	}
	/* the owner's end */
	__attribute__((noinline)) bool pop(long &out)
	{
		std::lock_guard<std::mutex> g(m_);
		if (items_.size() <= head_)
			return false;
		out = items_.back();
		items_.pop_back();
		return true;
	}
	/* the thieves' end */
	__attribute__((noinline)) bool steal(long &out)
	{
#ifdef WSQ_OK
		std::lock_guard<std::mutex> g(m_);
		if (head_ >= items_.size())
			return false;
		out = items_[head_];
		head_++;
		return true;
#else
		size_t h;
		{
			std::lock_guard<std::mutex> g(m_);
			if (head_ >= items_.size()) /* CHECK LINE */
				return false;
			h = head_;
		}
		/* the bug: another thief may take h between the two locks */
		std::lock_guard<std::mutex> g(m_);
		out = items_[h];
		head_ = h + 1; /* ADVANCE LINE */
		return true;
#endif
	}

private:
	std::mutex m_;
	std::vector<long> items_;
	size_t head_ = 0;
};

static long delay;
static WSQueue q;
static std::vector<long> taken[3];

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static void thief(int id, bool busy)
{
	std::vector<long> mine;
	if (busy)
		other_work(delay);
	long v;
	for (int i = 0; i < NSTEAL && q.steal(v); i++)
		mine.push_back(v);
	taken[id] = mine;
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2000000;
	for (long i = 0; i < NITEMS; i++)
		q.push(i);
	std::thread a(thief, 1, false);
	std::thread b(thief, 2, true);
	std::vector<long> mine;
	long v;
	for (int i = 0; i < 2 && q.pop(v); i++)
		mine.push_back(v);
	taken[0] = mine;
	a.join();
	b.join();
	int seen[NITEMS] = {0};
	for (auto &t : taken)
		for (long x : t)
			seen[x]++;
	for (long x : taken[0])
		std::printf("%ld ", x);
	std::printf("| %zu %zu\n", taken[1].size(), taken[2].size());
	for (int i = 0; i < NITEMS; i++)
		assert(seen[i] <= 1); /* ASSERT LINE */
	return 0;
}
