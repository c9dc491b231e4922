// Every RPC of every service voxcol_server registers answers INVALID_ARGUMENT to a request that
// does not parse (issue 35), and the message names the request type it expected. The methods are
// taken from the proto descriptors, so a method added to a service is covered without editing
// this test. (gRPC's own reflection service is not ours and is left out.)
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/generic_call.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

// Field 1 as length-delimited with a length of 127 and no bytes after it: truncated, so it does
// not parse as any message, whatever field 1 is.
const char kGarbage[] = "\x0a\x7f";

TEST(DecodeErrorsTest, EveryMethodAnswersInvalidArgumentNamingTheRequestType) {
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH,
                           {"--data_dir=" + dir.path() + "/data", "--world_size=64,64,64",
                            "--backup_root=" + dir.path() + "/backups"},
                           dir.path()))
      << server.Log();
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  int methods = 0;
  for (const google::protobuf::MethodDescriptor* method : testing::AllServerMethods()) {
    ++methods;
    const std::string path = testing::MethodPath(*method);
    const grpc::Status status =
        testing::CallWithBytes(channel, path, std::string(kGarbage, sizeof kGarbage - 1));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << path << ": " << status.error_message();
    EXPECT_NE(status.error_message().find(method->input_type()->name()), std::string::npos)
        << path << ": " << status.error_message();
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
