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

class DecodeErrorsTest : public ::testing::Test {
 protected:
  // A small world on loopback; returns a channel to it (the server lives as long as the test).
  std::shared_ptr<grpc::Channel> Start() {
    EXPECT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--world_size=64,64,64",
                               "--backup_root=" + dir_.path() + "/backups"},
                              dir_.path()))
        << server_.Log();
    return grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials());
  }

  TempDir dir_;
  ServerProcess server_;
};

TEST_F(DecodeErrorsTest, EveryMethodAnswersInvalidArgumentNamingTheRequestType) {
  auto channel = Start();
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
  EXPECT_GE(methods, 27);  // 26 voxcol methods (BodyService's and GetNavMesh included), Health
  // The server is still serving: a well-formed call after the garbage succeeds.
  auto world = v1::WorldService::NewStub(channel);
  grpc::ClientContext context;
  v1::GetWorldInfoResponse info;
  EXPECT_TRUE(world->GetWorldInfo(&context, v1::GetWorldInfoRequest(), &info).ok());
  EXPECT_TRUE(server_.Running());
}

// A call whose client half-closes without sending its request. That is not an undecodable request
// but a cardinality violation, which gRPC answers itself before voxcol sees the call: the gRPC
// status-code table says UNIMPLEMENTED, Debian's gRPC 1.51 answers INTERNAL ("Unable to parse
// request") for the methods served on the RPC threads, and the sync methods see an empty buffer
// and answer INVALID_ARGUMENT. What must hold: no method takes "no request" for an empty one and
// acts on it (a Subscribe to the whole world, an edit), and the server keeps serving.
TEST_F(DecodeErrorsTest, NoMethodActsOnACallThatSentNoRequest) {
  auto channel = Start();
  auto world = v1::WorldService::NewStub(channel);
  auto version = [&] {
    grpc::ClientContext context;
    v1::GetWorldInfoResponse info;
    EXPECT_TRUE(world->GetWorldInfo(&context, v1::GetWorldInfoRequest(), &info).ok());
    return info.version();
  };
  const uint64_t before = version();
  for (const google::protobuf::MethodDescriptor* method : testing::AllServerMethods()) {
    const std::string path = testing::MethodPath(*method);
    const grpc::Status status =
        testing::CallWithBytes(channel, path, std::nullopt, std::chrono::seconds(5));
    if (method->client_streaming()) {
      // A client stream that ends at once is a call with nothing to do.
      EXPECT_TRUE(status.ok()) << path << ": " << status.error_message();
      continue;
    }
    EXPECT_TRUE(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                status.error_code() == grpc::StatusCode::INTERNAL ||
                status.error_code() == grpc::StatusCode::UNIMPLEMENTED)
        << path << ": " << status.error_code() << " " << status.error_message();
  }
  EXPECT_EQ(version(), before);  // no edit was made of an empty request
  EXPECT_TRUE(server_.Running());
}

}  // namespace
}  // namespace voxcol
