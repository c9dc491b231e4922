// The Query stream's threads: gRPC's completion-queue API for the Query method, polled by the query
// threads themselves, so that the thread that reads a batch usually runs it (no hand-off to another
// thread per batch; docs/benchmarks.md, "Query streams on the query threads").
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace voxcol::server {

// Something a completion-queue event is for: Handle(ok) runs on the query thread that took it.
class CompletionTag {
 public:
  virtual void Handle(bool ok) = 0;

 protected:
  ~CompletionTag() = default;
};

// `threads` query threads that poll one server completion queue and run the batches queued by its
// event handlers. At most `max_queued` batches wait for a thread (running ones do not count); a
// batch beyond that is refused at once. Between batches a thread handles the events that are
// ready when no other thread is waiting for events (so arrived batches are queued, or refused, and
// not left unseen while every thread runs a batch), then runs the oldest queued batch, and waits
// for the next event only when none is queued.
class QueryThreads {
 public:
  QueryThreads(int threads, size_t max_queued) : threads_(threads), max_queued_(max_queued) {}
  ~QueryThreads() { Stop(); }
  QueryThreads(const QueryThreads&) = delete;
  QueryThreads& operator=(const QueryThreads&) = delete;

  // Before ServerBuilder::BuildAndStart.
  void AddTo(grpc::ServerBuilder& builder) { cq_ = builder.AddCompletionQueue(); }
  // After BuildAndStart: `first` runs on a query thread (it posts the first accept), then the
  // threads start polling.
  void Start(std::function<void()> first);
  // After the server's Shutdown() has returned: shuts the queue down, runs what is left, joins.
  void Stop();

  grpc::ServerCompletionQueue* cq() const { return cq_.get(); }
  // Queues `batch`; false (and nothing runs) when the queue is full or the threads are stopping.
  bool TrySubmit(std::function<void()> batch);
  size_t queued() const;
  // Runs `post` (which starts one operation on the queue) unless the queue is shutting down; false
  // when it is. A stream's handlers post their operations through this.
  bool Post(const std::function<void()>& post);

 private:
  class Wake;
  void Run();
  bool Pop(std::function<void()>* batch);

  const int threads_;
  const size_t max_queued_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::vector<std::thread> workers_;
  std::atomic<int> polling_{0};  // threads waiting in cq_->Next
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex post_mu_;  // held while posting, and while shutting the queue down
  bool cq_shut_ ABSL_GUARDED_BY(post_mu_) = false;
};

}  // namespace voxcol::server
