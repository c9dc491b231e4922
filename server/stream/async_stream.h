// Streaming calls on completion queues and threads the server owns (issue 35), with the shape of
// gRPC's callback reactors: StartRead / StartWrite / Finish in, OnReadDone / OnWriteDone /
// OnCancel / OnDone out.
//
// Why not gRPC's callback API: in Debian's gRPC (1.51) the server's callback completions run on
// two process-wide "nexting" threads that wait at most 1 s for an event and then sleep 100 ms. A
// stream used about once a second had a batch wait up to ~54 ms, and while both threads slept no
// thread polled the sockets, so every unary call stalled ~100 ms once every 1.1 s as well
// (docs/benchmarks.md, "Tick latency"). Here each RpcThreads thread blocks in Next() on its own
// queue with no timeout: a thread always polls, and every completion runs as soon as it arrives.
//
// Messages are raw (grpc::ByteBuffer): each stream parses its requests itself, so a message that
// does not parse ends the call with INVALID_ARGUMENT instead of gRPC's own status.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/async_stream.h>

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace voxcol::server {

// What a completion-queue event is for: the thread that takes the event calls Run(ok).
class CqTag {
 public:
  virtual void Run(bool ok) = 0;

 protected:
  ~CqTag() = default;
};

// One completion queue drained by `threads` threads, each blocked in Next() with no timeout until
// Stop(). One queue for all, not one per thread: a call's completions all go to the queue it was
// requested on, and with a queue per thread one busy thread held up every call on its queue (read
// replicas' lag p99 went from ~10 ms to 29-43 ms, max 0.5 s; with the shared queue p99 9-11 ms).
class RpcThreads {
 public:
  // Adds the queue to `builder`; call before BuildAndStart.
  RpcThreads(grpc::ServerBuilder& builder, int threads);
  ~RpcThreads() { Stop(); }
  RpcThreads(const RpcThreads&) = delete;
  RpcThreads& operator=(const RpcThreads&) = delete;

  // Starts the threads; call after BuildAndStart (and after the services began accepting calls).
  void Start();
  // Waits until every call of these queues is over and freed, then shuts the queues down and
  // joins the threads. Call after grpc::Server::Shutdown, which fails the waiting requests and
  // cancels the open calls (before it, this waits for ever): the streams then end on the running
  // threads, including those that still had work elsewhere (a batch on the query pool, the
  // Subscribe pump), so nothing of a stream outlives this. A queue must not be shut down earlier:
  // an operation started on it afterwards aborts the process.
  void Stop();

  grpc::ServerCompletionQueue* queue() const { return queue_.get(); }
  int thread_count() const { return thread_count_; }

  // Counts the calls (waiting requests and open calls) Stop() waits for; see StreamCall.
  void CallStarted() const;
  void CallEnded() const;

 private:
  const int thread_count_;
  std::unique_ptr<grpc::ServerCompletionQueue> queue_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
  mutable absl::Mutex calls_mu_;
  mutable int calls_ ABSL_GUARDED_BY(calls_mu_) = 0;
};

// The gRPC objects of one streaming call: its context and its raw stream. Made before the call
// arrives (gRPC fills them in), then handed to the call's AsyncStream.
class AsyncStream;
class StreamCall {
 public:
  virtual ~StreamCall() {
    if (threads_ != nullptr) threads_->CallEnded();
  }
  // Counts this call in `threads` until it is destroyed; called once, before it is requested.
  void CountIn(const RpcThreads* threads) {
    threads_ = threads;
    threads_->CallStarted();
  }
  grpc::ServerContext* context() { return &context_; }
  virtual void Read(grpc::ByteBuffer* message, void* tag) = 0;
  virtual void Write(const grpc::ByteBuffer& message, void* tag) = 0;
  virtual void Finish(const grpc::Status& status, void* tag) = 0;

  // The tag of AsyncNotifyWhenDone (set before the call is requested). The call may end, e.g.
  // cancelled by the client, while its stream is still being made: the event then waits here
  // until the stream is bound.
  class DoneRelay final : public CqTag {
   public:
    void Run(bool ok) override;
    // Sets the stream; true if the call already ended.
    bool Bind(AsyncStream* stream);

   private:
    absl::Mutex mu_;
    AsyncStream* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
    bool fired_ ABSL_GUARDED_BY(mu_) = false;
  };
  DoneRelay* done_relay() { return &done_relay_; }

 protected:
  grpc::ServerContext context_;
  DoneRelay done_relay_;

 private:
  const RpcThreads* threads_ = nullptr;
};

// Client and server stream (Query, EditStream).
class BidiCall final : public StreamCall {
 public:
  void Read(grpc::ByteBuffer* message, void* tag) override { stream.Read(message, tag); }
  void Write(const grpc::ByteBuffer& message, void* tag) override { stream.Write(message, tag); }
  void Finish(const grpc::Status& status, void* tag) override { stream.Finish(status, tag); }
  grpc::ServerAsyncReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer> stream{&context_};
};

// One request, then a server stream (Subscribe, Health.Watch). Read is not used.
class WriterCall final : public StreamCall {
 public:
  void Read(grpc::ByteBuffer*, void*) override {}
  void Write(const grpc::ByteBuffer& message, void* tag) override { writer.Write(message, tag); }
  void Finish(const grpc::Status& status, void* tag) override { writer.Finish(status, tag); }
  grpc::ByteBuffer request;
  grpc::ServerAsyncWriter<grpc::ByteBuffer> writer{&context_};
};

// The base of every stream handler. As with gRPC's reactors: at most one read and one write are
// outstanding; Finish() is called once, and is the last thing a method does with `this`, since
// OnDone() (which usually deletes the handler) may then run at once on another thread. OnDone()
// runs exactly once, after Finish() completed, the call is over and no other callback runs.
// Operations started in the constructor are issued once the constructor has returned.
class AsyncStream {
 public:
  virtual ~AsyncStream() = default;
  AsyncStream(const AsyncStream&) = delete;
  AsyncStream& operator=(const AsyncStream&) = delete;

  // Issues what the constructor started; called by the acceptor right after construction.
  void Bind();

 protected:
  explicit AsyncStream(std::unique_ptr<StreamCall> call);

  grpc::ServerContext* context() { return call_->context(); }
  StreamCall& call() { return *call_; }

  void StartRead(grpc::ByteBuffer* message);
  void StartWrite(const grpc::ByteBuffer* message);
  // Sent once any outstanding write has completed.
  void Finish(grpc::Status status);

  virtual void OnReadDone(bool) {}
  virtual void OnWriteDone(bool) {}
  virtual void OnCancel() {}
  virtual void OnDone() = 0;

 private:
  template <void (AsyncStream::*Method)(bool)>
  class Tag final : public CqTag {
   public:
    explicit Tag(AsyncStream* stream) : stream_(stream) {}
    void Run(bool ok) override { (stream_->*Method)(ok); }

   private:
    AsyncStream* stream_;
  };

  void ReadDone(bool ok);
  void WriteDone(bool ok);
  void FinishDone(bool ok);
  friend class StreamCall::DoneRelay;
  void CallDone(bool ok);
  // Ends a reaction: OnDone() if everything is over. The last touch of `this` by the reaction.
  void EndCallback();
  // Whether OnDone() may run now (then it is taken: it runs once).
  bool TakeDoneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<StreamCall> call_;
  Tag<&AsyncStream::ReadDone> read_tag_{this};
  Tag<&AsyncStream::WriteDone> write_tag_{this};
  Tag<&AsyncStream::FinishDone> finish_tag_{this};

  absl::Mutex mu_;
  bool bound_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ByteBuffer* pending_read_ ABSL_GUARDED_BY(mu_) = nullptr;  // started before Bind()
  const grpc::ByteBuffer* pending_write_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::optional<grpc::Status> pending_finish_ ABSL_GUARDED_BY(mu_);  // waits for a write or Bind()
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_started_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_done_ ABSL_GUARDED_BY(mu_) = false;
  bool call_done_ ABSL_GUARDED_BY(mu_) = false;
  int callbacks_running_ ABSL_GUARDED_BY(mu_) = 0;
  bool on_done_called_ ABSL_GUARDED_BY(mu_) = false;
};

// Keeps one request for a streaming method waiting per RPC thread: when a call arrives it is
// handed to `open` (which returns its started AsyncStream) and the next request is made on the
// same queue. After the server shut down, the requests fail and free themselves.
// Tags are passed to gRPC as CqTag* (converted to void* and back from the same type).
//
// `request` asks gRPC for the next call of the method into `call` (a BidiCall or WriterCall, as
// made by `make_call`), e.g. service->RequestQuery(...).
struct StreamMethod {
  std::function<std::unique_ptr<StreamCall>()> make_call;
  std::function<void(StreamCall* call, grpc::ServerCompletionQueue* cq, void* tag)> request;
  std::function<AsyncStream*(std::unique_ptr<StreamCall> call)> open;
};
void AcceptCalls(const RpcThreads& threads, std::shared_ptr<const StreamMethod> method);

// Typed helpers for the generated RequestX methods of raw async services.
template <typename Service, typename Base>
std::shared_ptr<const StreamMethod> BidiMethod(
    Service* service,
    void (Base::*request)(grpc::ServerContext*,
                          grpc::ServerAsyncReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>*,
                          grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*),
    std::function<AsyncStream*(std::unique_ptr<StreamCall>)> open) {
  auto method = std::make_shared<StreamMethod>();
  method->make_call = [] { return std::make_unique<BidiCall>(); };
  method->request = [service, request](StreamCall* call, grpc::ServerCompletionQueue* cq,
                                       void* tag) {
    auto* bidi = static_cast<BidiCall*>(call);
    (service->*request)(bidi->context(), &bidi->stream, cq, cq, tag);
  };
  method->open = std::move(open);
  return method;
}

template <typename Service, typename Base>
std::shared_ptr<const StreamMethod> WriterMethod(
    Service* service,
    void (Base::*request)(grpc::ServerContext*, grpc::ByteBuffer*,
                          grpc::ServerAsyncWriter<grpc::ByteBuffer>*, grpc::CompletionQueue*,
                          grpc::ServerCompletionQueue*, void*),
    std::function<AsyncStream*(std::unique_ptr<StreamCall>)> open) {
  auto method = std::make_shared<StreamMethod>();
  method->make_call = [] { return std::make_unique<WriterCall>(); };
  method->request = [service, request](StreamCall* call, grpc::ServerCompletionQueue* cq,
                                       void* tag) {
    auto* writer = static_cast<WriterCall*>(call);
    (service->*request)(writer->context(), &writer->request, &writer->writer, cq, cq, tag);
  };
  method->open = std::move(open);
  return method;
}

// A stream that only ends the call with `status` (refused before it started).
AsyncStream* FinishedStream(std::unique_ptr<StreamCall> call, grpc::Status status);

}  // namespace voxcol::server
