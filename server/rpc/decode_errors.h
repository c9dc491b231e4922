// INVALID_ARGUMENT for a unary request that does not parse (issue 35). gRPC's sync handlers answer
// such a request INTERNAL ("Failed to parse"), which a client cannot tell from a server bug. The
// streams parse their raw messages themselves (server/stream); this interceptor covers the unary
// methods: when gRPC hands the handler no request message, the status it sends is replaced by
// INVALID_ARGUMENT naming the method and the message type it expected.
#pragma once

#include <grpcpp/support/server_interceptor.h>

namespace voxcol::server {

class DecodeErrorInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // Register it first: the interceptors after it (metrics, logs) then see the status it sends.
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace voxcol::server
