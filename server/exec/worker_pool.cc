#include "server/exec/worker_pool.h"

namespace voxcol::server {

WorkerPool::WorkerPool(int threads, size_t max_queued)
    : thread_count_(threads), max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::TrySubmit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queued_) return false;
  queue_.push_back(std::move(task));
  return true;
}

bool WorkerPool::TryRunHere(absl::FunctionRef<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || !queue_.empty() || running_ >= thread_count_) return false;
    ++running_;
  }
  task();
  absl::MutexLock lock(&mu_);
  --running_;
  return true;
}

size_t WorkerPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &WorkerPool::Ready));
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace voxcol::server
