// Every RPC of every service voxcol_server registers answers INVALID_ARGUMENT to a request that
// does not parse (issue 35), and the message names the request type it expected. The methods are
// taken from the proto descriptors, so a method added to a service is covered without editing
// this test. (gRPC's own reflection service is not ours and is left out.)
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/integration/server_process.h"
#include "voxcol/v1/admin_service.grpc.pb.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/replica_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

// Field 1 as length-delimited with a length of 127 and no bytes after it: truncated, so it does
// not parse as any message, whatever field 1 is.
const char kGarbage[] = "\x0a\x7f";

// Opens a call to `path`, sends the garbage as its only message, half-closes, reads until the
// server ends the call and returns its status. Works for unary and streaming methods alike.
grpc::Status CallWithGarbage(const std::shared_ptr<grpc::Channel>& channel,
                             const std::string& path) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, path, &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&] { return cq.Next(&tag, &ok) && ok; };
  call->StartCall(nullptr);
  step();
  grpc::Slice slice(kGarbage, sizeof kGarbage - 1);
  grpc::ByteBuffer garbage(&slice, 1);
  call->Write(garbage, nullptr);
  step();
  call->WritesDone(nullptr);
  step();
  grpc::ByteBuffer reply;
  for (int reads = 0; reads < 100; ++reads) {
    call->Read(&reply, nullptr);
    if (!step()) break;
  }
  grpc::Status status;
  call->Finish(&status, nullptr);
  step();
  return status;
}

TEST(DecodeErrorsTest, EveryMethodAnswersInvalidArgumentNamingTheRequestType) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH,
                           {"--data_dir=" + dir.path() + "/data", "--world_size=64,64,64",
                            "--backup_root=" + dir.path() + "/backups"},
                           dir.path()))
      << server.Log();
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  // Each service by a message of its file: referencing it links the file's descriptors in.
  const std::vector<const google::protobuf::FileDescriptor*> files = {
      v1::GetWorldInfoRequest::descriptor()->file(),
      v1::RaycastRequest::descriptor()->file(),
      v1::FillBallRequest::descriptor()->file(),
      v1::CreateCheckpointRequest::descriptor()->file(),
      v1::GetReplicaStatusRequest::descriptor()->file(),
      grpc::health::v1::HealthCheckRequest::descriptor()->file()};
  int methods = 0;
  for (const google::protobuf::FileDescriptor* file : files) {
    ASSERT_EQ(file->service_count(), 1) << file->name();
    const google::protobuf::ServiceDescriptor* service = file->service(0);
    for (int i = 0; i < service->method_count(); ++i, ++methods) {
      const google::protobuf::MethodDescriptor* method = service->method(i);
      const std::string path = "/" + service->full_name() + "/" + method->name();
      const grpc::Status status = CallWithGarbage(channel, path);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << path << ": " << status.error_message();
      EXPECT_NE(status.error_message().find(method->input_type()->name()), std::string::npos)
          << path << ": " << status.error_message();
    }
  }
  EXPECT_GE(methods, 23);  // 22 voxcol methods and at least Health.Check
  // The server is still serving: a well-formed call after the garbage succeeds.
  auto world = v1::WorldService::NewStub(channel);
  grpc::ClientContext context;
  v1::GetWorldInfoResponse info;
  EXPECT_TRUE(world->GetWorldInfo(&context, v1::GetWorldInfoRequest(), &info).ok());
  EXPECT_TRUE(server.Running());
}

}  // namespace
}  // namespace voxcol
