#include "server/stream/async_unary.h"

#include <utility>

namespace voxcol::server {

namespace {

// One call of a unary method, from its request to the end of its Finish. Its two events come
// back as Run(): the call arrived (or, with !ok, the server shut down first), then the answer was
// sent (or the client was gone: either way the call is over).
class UnaryCall final : public CqTag {
 public:
  UnaryCall(const RpcThreads* threads, std::shared_ptr<const UnaryMethod> method)
      : threads_(threads), method_(std::move(method)) {
    threads_->CallStarted();
    method_->request(&context_, &request_, &responder_, threads_->queue(),
                     static_cast<CqTag*>(this));
  }
  ~UnaryCall() { threads_->CallEnded(); }

  void Run(bool ok) override {
    if (!ok || answered_) {
      delete this;
      return;
    }
    new UnaryCall(threads_, method_);  // the next call of this method
    answered_ = true;  // the next event is the end of Finish, wherever it is started
    if (!method_->run_elsewhere) {
      Answer();
    } else if (!method_->run_elsewhere([this] { Answer(); })) {
      responder_.FinishWithError(method_->refused, static_cast<CqTag*>(this));
    }
  }

 private:
  // Runs the handler and starts sending its answer (from any thread: async operations may be
  // started anywhere); `this` is not touched after Finish.
  void Answer() {
    grpc::ByteBuffer response;
    const grpc::Status status = method_->handle(context_, request_, &response);
    request_.Clear();
    if (status.ok()) {
      responder_.Finish(response, status, static_cast<CqTag*>(this));
    } else {
      responder_.FinishWithError(status, static_cast<CqTag*>(this));
    }
  }

  const RpcThreads* threads_;
  std::shared_ptr<const UnaryMethod> method_;
  grpc::ServerContext context_;
  grpc::ByteBuffer request_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> responder_{&context_};
  bool answered_ = false;
};

}  // namespace

void AcceptUnaryCalls(const RpcThreads& threads, std::shared_ptr<const UnaryMethod> method) {
  for (int i = 0; i < threads.thread_count(); ++i) new UnaryCall(&threads, method);
}

}  // namespace voxcol::server
