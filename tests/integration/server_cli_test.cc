// End to end: the real voxcol_server binary on a loopback port, driven by the real voxcol CLI.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <regex>

#include "tests/integration/cli_fixture.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"
#include "voxcol/v1/world_service.pb.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

class ServerCliTest : public testing::CliFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--seed=77",
                               "--world_size=128,96,128", "--max_edit_radius=16"},
                              dir_.path()))
        << server_.Log();
  }
};

TEST_F(ServerCliTest, InfoReportsTheConfiguredWorld) {
  auto info = CliJson<v1::GetWorldInfoResponse>({"info"});
  EXPECT_EQ(info.seed(), 77u);
  EXPECT_EQ(info.voxel_size(), 1.0f);
  EXPECT_EQ(info.voxel_bounds().min().x(), -64);
  EXPECT_EQ(info.voxel_bounds().max().y(), 48);
  EXPECT_EQ(info.bounds().max().z(), 64.0f);
  EXPECT_EQ(info.version(), 0u);
  // The server's release, as `voxcol_server --version` prints it after the program name.
  CommandResult version = RunCommand({VOXCOL_SERVER_PATH, "--version"}, dir_.path());
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "voxcol_server " + info.server_version() + "\n");
  EXPECT_TRUE(
      std::regex_match(info.server_version(),
                       std::regex(R"(\d+\.\d+\.\d+ \(revision ([0-9a-f]+(-dirty)?|unknown)\))")))
      << info.server_version();
  EXPECT_EQ(version.out.find("Debug build"), std::string::npos);  // Abseil's default text
  CommandResult human = Cli({"info"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("seed 77"), std::string::npos) << human.out;
}

TEST_F(ServerCliTest, RaycastStraightDownHitsTheTerrain) {
  auto hit = CliJson<v1::RaycastResponse>(
      {"raycast", "--origin=3.5,47.5,-7.5", "--direction=0,-1,0", "--mode=blocky"});
  ASSERT_TRUE(hit.hit());
  EXPECT_GT(hit.first().distance(), 0.0f);
  EXPECT_FLOAT_EQ(hit.first().position().y(), 47.5f - hit.first().distance());
  EXPECT_GE(hit.first().material(), 2u);  // solid
  EXPECT_GE(hit.first().occupancy(), 128u);
  EXPECT_EQ(hit.first().normal().y(), 1.0f);
  EXPECT_EQ(hit.first().triangle(), -1);
  CommandResult human = Cli({"raycast", "--origin=3.5,47.5,-7.5"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("hit  distance"), std::string::npos) << human.out;
}

// The default mode is the smooth surface: within a voxel of the blocky hit, with a triangle.
TEST_F(ServerCliTest, RaycastDefaultsToTheSmoothSurface) {
  auto blocky =
      CliJson<v1::RaycastResponse>({"raycast", "--origin=3.5,47.5,-7.5", "--mode=blocky"});
  auto smooth = CliJson<v1::RaycastResponse>({"raycast", "--origin=3.5,47.5,-7.5", "--stats"});
  ASSERT_TRUE(smooth.hit());
  EXPECT_NEAR(smooth.first().distance(), blocky.first().distance(), 1.0f);
  EXPECT_GE(smooth.first().triangle(), 0);
  EXPECT_GT(smooth.first().normal().y(), 0.5f);
  EXPECT_GE(smooth.first().material(), 2u);
  EXPECT_GT(smooth.stats().triangles_tested(), 0u);
  auto all = CliJson<v1::RaycastResponse>({"raycast", "--origin=3.5,47.5,-7.5", "--all"});
  ASSERT_GE(all.hits_size(), 1);
  EXPECT_EQ(all.hits(0).distance(), smooth.first().distance());
  EXPECT_TRUE(all.hits(0).front_face());
  CommandResult bad = Cli({"raycast", "--origin=3.5,47.5,-7.5", "--mode=round"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST_F(ServerCliTest, FillBallCarvesAHoleThatTheNextRaycastSees) {
  auto before = CliJson<v1::RaycastResponse>({"raycast", "--origin=10.5,47.5,10.5"});
  ASSERT_TRUE(before.hit());
  float y = before.first().position().y();
  auto ack = CliJson<v1::EditAck>({"fill-ball", "--center=10.5," + std::to_string(y) + ",10.5",
                                   "--radius=4", "--material=air"});
  EXPECT_EQ(ack.version(), 1u);
  EXPECT_GT(ack.changed_chunks(), 0u);
  auto after = CliJson<v1::RaycastResponse>({"raycast", "--origin=10.5,47.5,10.5"});
  ASSERT_EQ(after.version(), 1u);
  // The ray now enters the crater: it travels at least most of the radius further.
  EXPECT_GT(after.first().distance(), before.first().distance() + 3.0f);
  // Filling it back with rock brings the surface above the old one.
  auto ack2 = CliJson<v1::EditAck>({"fill-ball", "--center=10.5," + std::to_string(y) + ",10.5",
                                    "--radius=6", "--material=rock"});
  EXPECT_EQ(ack2.version(), 2u);
  auto filled = CliJson<v1::RaycastResponse>({"raycast", "--origin=10.5,47.5,10.5"});
  EXPECT_LT(filled.first().distance(), before.first().distance());
  EXPECT_EQ(filled.first().material(), 2u);
}

TEST_F(ServerCliTest, BadInputIsInvalidArgumentNamingTheFieldAndServerKeepsServing) {
  struct Case {
    std::vector<std::string> args;
    const char* field;
  } cases[] = {
      {{"raycast", "--origin=nan,0,0"}, "origin"},
      {{"raycast", "--origin=0,inf,0"}, "origin"},
      {{"raycast", "--origin=0,-inf,0"}, "origin"},
      {{"raycast", "--origin=500,0,0"}, "origin"},
      {{"raycast", "--origin=0,0,0", "--direction=0,0,0"}, "direction"},
      {{"raycast", "--origin=0,0,0", "--direction=nan,1,0"}, "direction"},
      {{"raycast", "--origin=0,0,0", "--max_distance=-1"}, "max_distance"},
      {{"raycast", "--origin=0,0,0", "--max_distance=1e30"}, "max_distance"},
      {{"fill-ball", "--center=0,0,0", "--radius=0"}, "radius"},
      {{"fill-ball", "--center=0,0,0", "--radius=-2"}, "radius"},
      {{"fill-ball", "--center=0,0,0", "--radius=nan"}, "radius"},
      {{"fill-ball", "--center=0,0,0", "--radius=17"}, "radius"},
      {{"fill-ball", "--center=0,100,0", "--radius=2"}, "center"},
      {{"fill-ball", "--center=nan,0,0", "--radius=2"}, "center"},
      {{"fill-ball", "--center=0,0,0", "--radius=2", "--material=300"}, "material"},
  };
  for (const Case& c : cases) {
    CommandResult r = Cli(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args[1] << "\n" << r.err;
    EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << r.err;
  }
  EXPECT_TRUE(server_.Running());
  auto info = CliJson<v1::GetWorldInfoResponse>({"info"});
  EXPECT_EQ(info.version(), 0u) << "a rejected edit must not commit";
  auto hit = CliJson<v1::RaycastResponse>({"raycast", "--origin=3.5,47.5,-7.5"});
  EXPECT_TRUE(hit.hit());
}

TEST_F(ServerCliTest, HealthReportsServing) {
  CommandResult r = Cli({"health"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "SERVING\n");
}

TEST_F(ServerCliTest, SigtermShutsDownCleanly) {
  EXPECT_EQ(server_.Stop(SIGTERM), 0);
  EXPECT_NE(server_.Log().find("event=stopped"), std::string::npos) << server_.Log();
}

TEST_F(ServerCliTest, RestartKeepsTheWorldIdentityOfTheDataDirectory) {
  ASSERT_EQ(server_.Stop(SIGINT), 0);
  ServerProcess second;
  ASSERT_TRUE(second.Start(VOXCOL_SERVER_PATH, {"--data_dir=" + dir_.path() + "/data", "--seed=5"},
                           dir_.path()))
      << second.Log();
  CommandResult r =
      RunCommand({VOXCOL_CLI_PATH, "--json", "--server=" + second.address(), "info"}, dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &info).ok());
  EXPECT_EQ(info.seed(), 77u);
  EXPECT_EQ(info.voxel_bounds().max().x(), 64);
}

TEST(CliWithoutServer, UnreachableServerGivesAClearMessageAndExitCode3) {
  TempDir dir;
  // Port 1 on loopback: nothing listens there.
  CommandResult r = RunCommand(
      {VOXCOL_CLI_PATH, "--server=127.0.0.1:1", "--timeout_ms=2000", "info"}, dir.path());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot reach the server at 127.0.0.1:1"), std::string::npos) << r.err;
}

TEST(CliWithoutServer, UsageErrorsExitWith2) {
  TempDir dir;
  EXPECT_EQ(RunCommand({VOXCOL_CLI_PATH, "frobnicate"}, dir.path()).exit_code, 2);
  EXPECT_EQ(RunCommand({VOXCOL_CLI_PATH, "raycast"}, dir.path()).exit_code, 2);
  EXPECT_EQ(RunCommand({VOXCOL_CLI_PATH, "raycast", "--origin=1,2"}, dir.path()).exit_code, 2);
}

}  // namespace
}  // namespace voxcol
