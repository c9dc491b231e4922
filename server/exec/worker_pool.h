// Fixed pool of worker threads with a bounded queue: work beyond the bound is refused at once
// (the caller answers RESOURCE_EXHAUSTED) instead of queueing into unbounded latency.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace voxcol::server {

class WorkerPool {
 public:
  // `threads` workers; at most `max_queued` tasks waiting (running ones do not count).
  WorkerPool(int threads, size_t max_queued);
  // Runs the queued tasks to completion, then joins the workers.
  ~WorkerPool();

  // Queues `task`; false (and `task` is dropped) when the queue is full or the pool is stopping.
  bool TrySubmit(std::function<void()> task);
  size_t queued() const;

 private:
  void Run();
  bool Ready() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); }

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace voxcol::server
