#include "server/stream/async_stream.h"

#include <utility>

namespace voxcol::server {

RpcThreads::RpcThreads(grpc::ServerBuilder& builder, int threads)
    : thread_count_(std::max(1, threads)), queue_(builder.AddCompletionQueue()) {}

namespace {

// gRPC hands a tag back as the void* it was given: always give it a CqTag*.
void* Tagged(CqTag* tag) { return tag; }

void Drain(grpc::ServerCompletionQueue* queue) {
  void* tag = nullptr;
  bool ok = false;
  while (queue->Next(&tag, &ok)) static_cast<CqTag*>(tag)->Run(ok);
}

}  // namespace

void RpcThreads::Start() {
  for (int i = 0; i < thread_count_; ++i) threads_.emplace_back(Drain, queue_.get());
}

void RpcThreads::CallStarted() const {
  absl::MutexLock lock(&calls_mu_);
  ++calls_;
}

void RpcThreads::CallEnded() const {
  absl::MutexLock lock(&calls_mu_);
  --calls_;
}

void RpcThreads::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!threads_.empty()) {
    absl::MutexLock lock(&calls_mu_);
    calls_mu_.Await(absl::Condition(
        +[](int* calls) { return *calls == 0; }, &calls_));
  }
  queue_->Shutdown();
  if (threads_.empty()) Drain(queue_.get());  // never started: drain here
  for (std::thread& thread : threads_) thread.join();
}

void StreamCall::DoneRelay::Run(bool ok) {
  AsyncStream* stream = nullptr;
  {
    absl::MutexLock lock(&mu_);
    fired_ = true;
    stream = stream_;
  }
  if (stream != nullptr) stream->CallDone(ok);
}

bool StreamCall::DoneRelay::Bind(AsyncStream* stream) {
  absl::MutexLock lock(&mu_);
  stream_ = stream;
  return fired_;
}

AsyncStream::AsyncStream(std::unique_ptr<StreamCall> call) : call_(std::move(call)) {}

void AsyncStream::Bind() {
  const bool ended = call_->done_relay()->Bind(this);
  {
    absl::MutexLock lock(&mu_);
    bound_ = true;
    if (pending_read_ != nullptr) {
      reading_ = true;
      call_->Read(std::exchange(pending_read_, nullptr), Tagged(&read_tag_));
    }
    if (pending_write_ != nullptr) {
      writing_ = true;
      call_->Write(*std::exchange(pending_write_, nullptr), Tagged(&write_tag_));
    } else if (pending_finish_) {
      finish_started_ = true;
      call_->Finish(*pending_finish_, Tagged(&finish_tag_));
      pending_finish_.reset();
    }
  }
  if (ended) CallDone(true);
}

void AsyncStream::StartRead(grpc::ByteBuffer* message) {
  absl::MutexLock lock(&mu_);
  if (!bound_) {
    pending_read_ = message;
    return;
  }
  reading_ = true;
  call_->Read(message, Tagged(&read_tag_));
}

void AsyncStream::StartWrite(const grpc::ByteBuffer* message) {
  absl::MutexLock lock(&mu_);
  if (!bound_) {
    pending_write_ = message;
    return;
  }
  writing_ = true;
  call_->Write(*message, Tagged(&write_tag_));
}

void AsyncStream::Finish(grpc::Status status) {
  absl::MutexLock lock(&mu_);
  if (finish_started_ || pending_finish_) return;  // once
  if (!bound_ || writing_ || pending_write_ != nullptr) {
    pending_finish_ = std::move(status);
    return;
  }
  finish_started_ = true;
  call_->Finish(status, Tagged(&finish_tag_));
}

// Every reaction counts itself in callbacks_running_ while it runs and decides under mu_, in the
// same critical section as its last change, whether OnDone() runs now: the RPC threads share one
// queue, so the reactions of one call may run at once on different threads, and once a reaction
// has unlocked without taking OnDone() another may delete the stream.
void AsyncStream::ReadDone(bool ok) {
  {
    absl::MutexLock lock(&mu_);
    reading_ = false;
    ++callbacks_running_;
  }
  OnReadDone(ok);
  EndCallback();
}

void AsyncStream::WriteDone(bool ok) {
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (pending_finish_) {
      finish_started_ = true;
      call_->Finish(*pending_finish_, Tagged(&finish_tag_));
      pending_finish_.reset();
    }
    ++callbacks_running_;
  }
  OnWriteDone(ok);
  EndCallback();
}

void AsyncStream::FinishDone(bool) {
  bool done = false;
  {
    absl::MutexLock lock(&mu_);
    finish_done_ = true;
    done = TakeDoneLocked();
  }
  if (done) OnDone();
}

void AsyncStream::CallDone(bool) {
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    call_done_ = true;
    cancelled = call_->context()->IsCancelled();
    ++callbacks_running_;
  }
  if (cancelled) OnCancel();
  EndCallback();
}

void AsyncStream::EndCallback() {
  bool done = false;
  {
    absl::MutexLock lock(&mu_);
    --callbacks_running_;
    done = TakeDoneLocked();
  }
  if (done) OnDone();
}

bool AsyncStream::TakeDoneLocked() {
  if (on_done_called_ || !finish_done_ || !call_done_ || reading_ || writing_ ||
      callbacks_running_ > 0) {
    return false;
  }
  on_done_called_ = true;
  return true;
}

namespace {

// One waiting request of a method on one queue; see AcceptCalls.
class Acceptor final : public CqTag {
 public:
  Acceptor(const RpcThreads* threads, std::shared_ptr<const StreamMethod> method,
           grpc::ServerCompletionQueue* queue)
      : threads_(threads), method_(std::move(method)), queue_(queue), call_(method_->make_call()) {
    call_->CountIn(threads_);
    call_->context()->AsyncNotifyWhenDone(Tagged(call_->done_relay()));
    method_->request(call_.get(), queue_, Tagged(this));
  }

  void Run(bool ok) override {
    if (ok) {
      new Acceptor(threads_, method_, queue_);  // the next call of this method on this queue
      method_->open(std::move(call_))->Bind();
    }
    delete this;  // !ok: the server is shutting down, and a call never started is never done
  }

 private:
  const RpcThreads* threads_;
  std::shared_ptr<const StreamMethod> method_;
  grpc::ServerCompletionQueue* queue_;
  std::unique_ptr<StreamCall> call_;
};

class Finished final : public AsyncStream {
 public:
  Finished(std::unique_ptr<StreamCall> call, grpc::Status status) : AsyncStream(std::move(call)) {
    Finish(std::move(status));
  }
  void OnDone() override { delete this; }
};

}  // namespace

void AcceptCalls(const RpcThreads& threads, std::shared_ptr<const StreamMethod> method) {
  // One waiting request per thread, so that a burst of new calls is accepted by all of them.
  for (int i = 0; i < threads.thread_count(); ++i) {
    new Acceptor(&threads, method, threads.queue());
  }
}

AsyncStream* FinishedStream(std::unique_ptr<StreamCall> call, grpc::Status status) {
  return new Finished(std::move(call), std::move(status));
}

}  // namespace voxcol::server
