#include "server/query_streams.h"

#include <grpc/support/time.h>
#include <grpcpp/alarm.h>

namespace voxcol::server {

// Wakes one thread polling the queue (an alarm due at once), so that it takes a queued batch.
class QueryThreads::Wake final : public CompletionTag {
 public:
  explicit Wake(grpc::ServerCompletionQueue* cq) {
    alarm_.Set(cq, gpr_now(GPR_CLOCK_MONOTONIC), static_cast<CompletionTag*>(this));
  }
  void Handle(bool) override { delete this; }

 private:
  grpc::Alarm alarm_;
};

void QueryThreads::Start(std::function<void()> first) {
  first();
  for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { Run(); });
}

void QueryThreads::Stop() {
  if (cq_ == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  {
    absl::WriterMutexLock lock(&post_mu_);
    if (!cq_shut_) cq_->Shutdown();
    cq_shut_ = true;
  }
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  // Without threads (never started) the queue still has to be drained.
  void* tag;
  bool ok;
  while (cq_->Next(&tag, &ok)) static_cast<CompletionTag*>(tag)->Handle(ok);
  std::function<void()> batch;
  while (Pop(&batch)) batch();
}

bool QueryThreads::TrySubmit(std::function<void()> batch) {
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(batch));
    // The submitting thread takes one batch itself when its handler returns; a second one waiting
    // wakes a polling thread. Read under mu_: a thread counts itself as polling before its last
    // look at the queue, so it either sees this batch or is counted here.
    wake = queue_.size() >= 2 && polling_.load() > 0;
  }
  if (wake) Post([this] { new Wake(cq_.get()); });
  return true;
}

size_t QueryThreads::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

bool QueryThreads::Post(const std::function<void()>& post) {
  absl::ReaderMutexLock lock(&post_mu_);
  if (cq_shut_) return false;
  post();
  return true;
}

bool QueryThreads::Pop(std::function<void()>* batch) {
  absl::MutexLock lock(&mu_);
  if (queue_.empty()) return false;
  *batch = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

void QueryThreads::Run() {
  std::function<void()> batch;
  for (;;) {
    // With no thread waiting for events, the ones that are ready come first: every batch that has
    // arrived is parsed and queued (or refused when the queue is full) instead of waiting unseen
    // in the completion queue while the threads run batches. A waiting thread sees them at once.
    void* tag;
    bool ok;
    if (polling_.load() == 0) {
      grpc::CompletionQueue::NextStatus status;
      while ((status = cq_->AsyncNext(&tag, &ok, gpr_inf_past(GPR_CLOCK_MONOTONIC))) ==
             grpc::CompletionQueue::GOT_EVENT) {
        static_cast<CompletionTag*>(tag)->Handle(ok);
      }
      if (status == grpc::CompletionQueue::SHUTDOWN) break;
    }
    polling_.fetch_add(1);
    if (Pop(&batch)) {
      polling_.fetch_sub(1);
      batch();
      batch = nullptr;
      continue;
    }
    const bool got = cq_->Next(&tag, &ok);
    polling_.fetch_sub(1);
    if (!got) break;  // shut down and drained
    static_cast<CompletionTag*>(tag)->Handle(ok);
  }
  while (Pop(&batch)) {
    batch();
    batch = nullptr;
  }
}

}  // namespace voxcol::server
