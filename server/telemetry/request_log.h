// Per-RPC request ids and structured log lines, as a gRPC server interceptor.
//
// Every call gets a request id: the client's `x-request-id` metadata if present, else a generated
// one. The id is echoed in the response's initial metadata. A call that ends with a non-OK status,
// and every streaming call, is logged as one line:
//   `event=rpc method=... request_id=... peer=... code=... millis=... message=...`, every value
// escaped as a logfmt value (LogValue), so that client text cannot forge a field or a line.
// Successful unary calls are not logged (at game-server rates that would be most of the log).
#pragma once

#include <grpcpp/support/server_interceptor.h>

namespace voxcol::server {

class RequestLogInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace voxcol::server
