#include "server/rpc/decode_errors.h"

#include <google/protobuf/descriptor.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "server/convert/convert.h"

namespace voxcol::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// "/voxcol.v1.QueryService/Raycast" -> "voxcol.v1.RaycastRequest" (empty if unknown).
std::string RequestTypeOf(const std::string& path) {
  const std::string method = absl::StrReplaceAll(path.substr(path.empty() ? 0 : 1), {{"/", "."}});
  const google::protobuf::MethodDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(method);
  return descriptor == nullptr ? std::string() : descriptor->input_type()->full_name();
}

class DecodeErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit DecodeErrorInterceptor(std::string method) : method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      undecodable_ = methods->GetRecvMessage() == nullptr;
    }
    // Only gRPC's own answer to the missing message is replaced (INTERNAL, "Failed to parse").
    if (undecodable_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        methods->GetSendStatus().error_code() == grpc::StatusCode::INTERNAL) {
      const std::string type = RequestTypeOf(method_);
      methods->ModifySendStatus(ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat("the request to ", method_, " is not a ",
                       type.empty() ? std::string("valid message") : type,
                       " (it does not parse as protobuf)"))));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool undecodable_ = false;
};

}  // namespace

grpc::experimental::Interceptor* DecodeErrorInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
  return new DecodeErrorInterceptor(info->method());
}

}  // namespace voxcol::server
