// End to end: the Probe RPC (conservative broadphase) on the real server, through the CLI and a raw
// gRPC stub.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_fixture.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

class ProbeTest : public testing::CliFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--seed=77", "--world_size=128,96,128",
         "--max_edit_radius=16", "--max_shape_extent=20", "--max_probe_voxels=500"},
        dir_.path()))
        << server_.Log();
  }
};

TEST_F(ProbeTest, BoxInRockTouchesSolidAndBoxInTheSkyTouchesNothing) {
  auto rock =
      CliJson<v1::ProbeResponse>({"probe", "--center=0.5,-44.5,0.5", "--half_extents=1,1,1"});
  EXPECT_TRUE(rock.may_touch_solid());
  EXPECT_FALSE(rock.may_touch_water());
  ASSERT_GT(rock.chunks_size(), 0);
  EXPECT_TRUE(rock.chunks(0).solid());
  EXPECT_EQ(rock.voxels_size(), 0);  // not asked for
  auto sky =
      CliJson<v1::ProbeResponse>({"probe", "--center=0.5,46.5,0.5", "--radius=0.4", "--stats"});
  EXPECT_FALSE(sky.may_touch_solid());
  EXPECT_FALSE(sky.may_touch_water());
  EXPECT_EQ(sky.chunks_size(), 0);
  EXPECT_GT(sky.stats().chunks_visited(), 0u);
  CommandResult human = Cli({"probe", "--center=0.5,-44.5,0.5", "--half_extents=1,1,1"});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("solid yes, water no"), std::string::npos) << human.out;
}

TEST_F(ProbeTest, TouchedVoxelsAreBoundedByTheRequestedLimit) {
  auto all =
      CliJson<v1::ProbeResponse>({"probe", "--center=0.5,-44.5,0.5", "--radius=1", "--voxels"});
  EXPECT_EQ(all.voxels_size(), 5 * 5 * 5);  // voxels -2..2 around the centre voxel, all in rock
  EXPECT_FALSE(all.voxels_truncated());
  auto few = CliJson<v1::ProbeResponse>(
      {"probe", "--center=0.5,-44.5,0.5", "--radius=1", "--voxels", "--max_voxels=10"});
  EXPECT_EQ(few.voxels_size(), 10);
  EXPECT_TRUE(few.voxels_truncated());
  auto capped =
      CliJson<v1::ProbeResponse>({"probe", "--center=0.5,-40.5,0.5", "--radius=10", "--voxels"});
  EXPECT_EQ(capped.voxels_size(), 500);  // the server's --max_probe_voxels
  EXPECT_TRUE(capped.voxels_truncated());
}

TEST_F(ProbeTest, CarvedHoleIsSeenByTheNextProbe) {
  auto before =
      CliJson<v1::ProbeResponse>({"probe", "--center=0.5,-30.5,0.5", "--half_extents=1,1,1"});
  ASSERT_TRUE(before.may_touch_solid());
  auto ack =
      CliJson<v1::EditAck>({"fill-ball", "--center=0.5,-30.5,0.5", "--radius=9", "--material=air"});
  EXPECT_EQ(ack.version(), 1u);
  auto after =
      CliJson<v1::ProbeResponse>({"probe", "--center=0.5,-30.5,0.5", "--half_extents=1,1,1"});
  EXPECT_FALSE(after.may_touch_solid());
  EXPECT_FALSE(after.may_touch_water());
  EXPECT_EQ(after.version(), 1u);
}

TEST_F(ProbeTest, BadInputIsInvalidArgumentNamingTheField) {
  struct Case {
    std::vector<std::string> args;
    const char* field;
  } cases[] = {
      {{"probe", "--center=nan,0,0", "--half_extents=1,1,1"}, "box.center"},
      {{"probe", "--center=0,inf,0", "--radius=1"}, "sphere.center"},
      {{"probe", "--center=500,0,0", "--half_extents=1,1,1"}, "box.center"},
      {{"probe", "--center=0,0,0", "--half_extents=1,-1,1"}, "box.half_extents.y"},
      {{"probe", "--center=0,0,0", "--half_extents=1,1,nan"}, "box.half_extents.z"},
      {{"probe", "--center=0,0,0", "--half_extents=21,1,1"}, "box.half_extents.x"},
      {{"probe", "--center=0,0,0", "--radius=-1"}, "sphere.radius"},
      {{"probe", "--center=0,0,0", "--radius=inf"}, "sphere.radius"},
      {{"probe", "--center=0,0,0", "--radius=21"}, "sphere.radius"},
      {{"probe", "--center=0,0,0", "--radius=1", "--voxels", "--max_voxels=501"}, "max_voxels"},
  };
  for (const Case& c : cases) {
    CommandResult r = Cli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args[1] << "\n" << r.err;
    EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << c.field << ": " << r.err;
  }
  // A request without a shape can only come from a raw client.
  auto stub = v1::QueryService::NewStub(
      grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::ProbeResponse response;
  grpc::Status status = stub->Probe(&context, v1::ProbeRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("shape"), std::string::npos) << status.error_message();
  EXPECT_TRUE(server_.Running());
}

}  // namespace
}  // namespace voxcol
