// Fixed pool of worker threads with a bounded queue: work beyond the bound is refused at once
// (the caller answers RESOURCE_EXHAUSTED) instead of queueing into unbounded latency. The pool is
// also the bound on how many tasks run at once: a caller may run a task on its own thread in place
// of an idle worker (TryRunHere), and that run counts against the same bound.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
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
  // Runs `task` on the calling thread if nothing is queued and fewer than `threads` tasks run
  // (workers' and other callers' together), and returns true once it has run; false (and nothing
  // runs) otherwise. Saves the two thread hand-offs of TrySubmit when the pool is idle.
  bool TryRunHere(absl::FunctionRef<void()> task);
  size_t queued() const;

 private:
  void Run();
  // A worker takes a task only while fewer than thread_count_ run (a task run by a caller holds a
  // worker's place until it returns), and leaves once the pool is stopping and drained.
  bool Ready() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (!queue_.empty() && running_ < thread_count_) || (stopping_ && queue_.empty());
  }

  const int thread_count_;
  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;  // tasks running, on workers and in TryRunHere
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace voxcol::server
