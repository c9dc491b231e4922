// Unary calls on the RPC threads (issue 35): the thread whose Next() returned the call runs the
// handler and sends the answer, with no hand-off to another thread.
//
// Why: a synchronous unary method is read by whichever thread polls the socket and then handed to
// one of gRPC's sync-server threads, which wakes to run it (strace of an idle server answering a
// Raycast every 10 ms: the poller wakes a successor poller and the handler thread, three wake-ups
// per call). Served here, the method's completion lands on the queue the RPC threads drain.
//
// Messages are raw (grpc::ByteBuffer): the handler parses the request itself, so one that does not
// parse is answered INVALID_ARGUMENT naming the method instead of gRPC's INTERNAL.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/async_unary_call.h>

#include <functional>
#include <memory>

#include "server/stream/async_stream.h"

namespace voxcol::server {

struct UnaryMethod {
  // Asks gRPC for the next call of the method (the service's RequestAsyncUnary with its index).
  std::function<void(grpc::ServerContext* context, grpc::ByteBuffer* request,
                     grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* responder,
                     grpc::ServerCompletionQueue* queue, void* tag)>
      request;
  // Answers one call: fills `response` when it returns OK. Runs on the RPC thread that took the
  // call, unless `run_elsewhere` is set. Inline it must be short and never wait: the RPC threads
  // also carry every stream's reads and writes.
  std::function<grpc::Status(grpc::ServerContext& context, grpc::ByteBuffer& request,
                             grpc::ByteBuffer* response)>
      handle;
  // Optional: hands a task (handle, then the answer) to other threads; false when they refuse it
  // (full), and the call is answered `refused`.
  std::function<bool(std::function<void()> task)> run_elsewhere;
  grpc::Status refused;
};

// Keeps one request for `method` waiting per RPC thread; each call that arrives is answered by
// method->handle and the next one is requested. Calls are counted in `threads` (Stop() waits for
// them); after the server shut down the waiting requests fail and free themselves.
void AcceptUnaryCalls(const RpcThreads& threads, std::shared_ptr<const UnaryMethod> method);

}  // namespace voxcol::server
