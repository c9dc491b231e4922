// One call to any method by its path, with raw bytes as its only request message: works for unary
// and streaming methods alike (the tests that sweep every method of every service).
#pragma once

#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "voxcol/v1/admin_service.grpc.pb.h"
#include "voxcol/v1/body_service.grpc.pb.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/replica_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::testing {

// Opens a call to `path`, sends `request` as its only message (no message at all when it is
// nullopt), half-closes, reads until the server ends the call (or `deadline` passes) and returns
// its status.
inline grpc::Status CallWithBytes(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& path,
                                  const std::optional<std::string>& request,
                                  std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, path, &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&] { return cq.Next(&tag, &ok) && ok; };
  call->StartCall(nullptr);
  step();
  if (request.has_value()) {
    grpc::Slice slice(request->data(), request->size());
    grpc::ByteBuffer message(&slice, 1);
    call->Write(message, nullptr);
    step();
  }
  call->WritesDone(nullptr);
  step();
  grpc::ByteBuffer reply;
  for (int reads = 0; reads < 1000; ++reads) {
    call->Read(&reply, nullptr);
    if (!step()) break;
  }
  grpc::Status status;
  call->Finish(&status, nullptr);
  step();
  return status;
}

// Every method of every service voxcol_server registers (gRPC's reflection aside), from the proto
// descriptors: a method added to a service is in the list without editing any test.
inline std::vector<const google::protobuf::MethodDescriptor*> AllServerMethods() {
  // Each service by a message of its file: referencing it links the file's descriptors in.
  const google::protobuf::FileDescriptor* files[] = {
      v1::GetWorldInfoRequest::descriptor()->file(),
      v1::RaycastRequest::descriptor()->file(),
      v1::FillBallRequest::descriptor()->file(),
      v1::CreateCheckpointRequest::descriptor()->file(),
      v1::GetReplicaStatusRequest::descriptor()->file(),
      v1::UpdateBodiesRequest::descriptor()->file(),
      grpc::health::v1::HealthCheckRequest::descriptor()->file()};
  std::vector<const google::protobuf::MethodDescriptor*> methods;
  for (const google::protobuf::FileDescriptor* file : files) {
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        methods.push_back(file->service(s)->method(m));
      }
    }
  }
  return methods;
}

// "/voxcol.v1.QueryService/Raycast"
inline std::string MethodPath(const google::protobuf::MethodDescriptor& method) {
  return "/" + method.service()->full_name() + "/" + method.name();
}

}  // namespace voxcol::testing
