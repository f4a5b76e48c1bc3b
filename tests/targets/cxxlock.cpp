// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ target: threads take a std::mutex through std::lock_guard in a
 * namespaced class (std::mutex::lock and the guard are inlined down to
 * pthread_mutex_lock), and lock a shared library's mutex through its code.
 *
 *   cxxlock --truth FILE [--threads N] [--iters N]
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
#include "lib/sharedlock.h"
}

namespace app {

class Counter {
public:
	void add(long n)
	{
		std::lock_guard<std::mutex> guard(mutex_); // CALLSITE:counter_add
		value_ += n;
		std::this_thread::sleep_for(std::chrono::microseconds(300));
	}
	std::mutex mutex_;
	long value_ = 0;
};

Counter counter;

} // namespace app

int main(int argc, char **argv)
{
	const char *truth = nullptr;
	int threads = 2, iters = 20;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--truth"))
			truth = argv[i + 1];
		else if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
	}
	std::vector<std::thread> pool;
	long shared = 0;
	std::mutex shared_count_lock;
	for (int t = 0; t < threads; t++)
		pool.emplace_back([&] {
			for (int i = 0; i < iters; i++)
				app::counter.add(1);
			long n = shared_lock_work(iters);
			std::lock_guard<std::mutex> g(shared_count_lock);
			shared += n;
		});
	for (auto &t : pool)
		t.join();
	if (FILE *f = truth ? fopen(truth, "w") : nullptr) {
		fprintf(f, "{\"counter_object\": \"%p\", \"add_count\": %ld, "
			"\"shared_object\": \"%p\", \"shared_count\": %ld}\n",
			(void *)&app::counter.mutex_, app::counter.value_,
			(void *)&shared_lock, shared);
		fclose(f);
	}
	return 0;
}
