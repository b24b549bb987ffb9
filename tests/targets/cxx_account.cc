/*
 * A C++ account (std::mutex, std::lock_guard, std::thread, std::vector):
 * the bank bug in C++.  deposit() reads the balance under the lock, drops
 * it, then writes balance + amount under the lock again, so two deposits
 * can lose one.  The second depositor computes first (DELAY iterations),
 * so a natural run lets the first finish and the check holds; the order
 * "A reads, B reads, A writes, B writes" fails it (SIGABRT).  The history
 * vector is private to each depositor.
 *
 * usage: cxx_account [DELAY=150000000]
 */
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

class Account {
public:
	__attribute__((noinline)) long read() const
	{
		std::lock_guard<std::mutex> g(m_);
		return balance_; /* READ LINE */
	}
	__attribute__((noinline)) void write(long b)
	{
		std::lock_guard<std::mutex> g(m_);
		balance_ = b; /* WRITE LINE */
	}
	/* the bug: the lock is dropped between the read and the write */
	__attribute__((noinline)) void deposit(long amount)
	{
		long b = read();
		write(b + amount);
	}
	long balance() const { return balance_; }

private:
	mutable std::mutex m_;
	long balance_ = 100;
};

static long delay;

__attribute__((noinline)) static void other_work(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

static void client(Account &acct, long amount, bool busy)
{
	std::vector<long> history;
	if (busy)
		other_work(delay);
	history.push_back(amount);
	acct.deposit(history.back());
}

int main(int argc, char **argv)
{
	delay = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 150000000;
	Account acct;
	std::thread a(client, std::ref(acct), 50, false);
	std::thread b(client, std::ref(acct), 25, true);
	a.join();
	b.join();
	std::printf("balance=%ld\n", acct.balance());
	assert(acct.balance() == 175); /* ASSERT LINE */
	return 0;
}
