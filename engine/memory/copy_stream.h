// One long-lived worker that runs host-to-device copies in submission order, the way a
// copy stream does on an accelerator. A thread per copy would cost a thread start each
// time and, for copies that go through the CPU, a fresh OpenMP team per thread that then
// spins against the compute threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

namespace kiln::memory {

class CopyStream {
 public:
  CopyStream() = default;
  ~CopyStream();  // runs what is queued, then joins
  CopyStream(const CopyStream&) = delete;
  CopyStream& operator=(const CopyStream&) = delete;

  // Queues fn; its result or exception arrives through the future.
  template <typename Fn>
  auto submit(Fn fn) -> std::future<decltype(fn())> {
    using R = decltype(fn());
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
    std::future<R> result = task->get_future();
    push([task] { (*task)(); });
    return result;
  }

 private:
  void push(std::function<void()> job);
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread worker_;  // started by the first submit
};

}  // namespace kiln::memory
