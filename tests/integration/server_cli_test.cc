// End to end: the real voxcol_server binary on a loopback port, driven by the real voxcol CLI.
#include <arpa/inet.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

// Issue 40's CLI rough edges, each against the real server.

TEST_F(ServerCliTest, SubscribeJsonKeepsZeroFields) {
  // A ball inside chunk (0,0,0) (8^3 voxels): its key is all zeros, which the JSON used to drop.
  CommandResult edit = Cli({"fill-ball", "--center=4,4,4", "--radius=1.5", "--material=rock"});
  ASSERT_EQ(edit.exit_code, 0) << edit.err;
  CommandResult feed = Cli({"--json", "subscribe", "--from=0", "--max_events=1"});
  ASSERT_EQ(feed.exit_code, 0) << feed.err;
  EXPECT_NE(feed.out.find(R"("chunk":{"x":0,"y":0,"z":0})"), std::string::npos) << feed.out;
  EXPECT_EQ(feed.out.find(R"("chunk":{})"), std::string::npos) << feed.out;
  v1::SubscribeResponse event;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(feed.out, &event).ok()) << feed.out;
  EXPECT_EQ(event.version(), 1u);
}

TEST_F(ServerCliTest, ShapeSizeLeftOutIsAUsageError) {
  // Without --half_height a capsule went out as half height 0 (a sphere) and the sweep missed
  // what the capsule would hit; now each command refuses it before any call.
  for (const char* command : {"sweep", "overlap", "contacts"}) {
    std::vector<std::string> args = {command, "--shape=capsule", "--radius=0.4",
                                     "--position=0,40,0"};
    if (std::string(command) == "sweep") args.push_back("--distance=100");
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--half_height"), std::string::npos) << command << ": " << r.err;
    args.push_back("--half_height=0.9");
    CommandResult ok = Cli(args);
    EXPECT_EQ(ok.exit_code, 0) << command << ": " << ok.err;
  }
  CommandResult sphere = Cli({"overlap", "--shape=sphere", "--position=0,40,0"});
  EXPECT_EQ(sphere.exit_code, 2) << sphere.err;
  EXPECT_NE(sphere.err.find("--radius"), std::string::npos) << sphere.err;
  // An explicit half height 0 is a valid capsule (a sphere), left to the server.
  EXPECT_EQ(
      Cli({"overlap", "--shape=capsule", "--radius=0.4", "--half_height=0", "--position=0,40,0"})
          .exit_code,
      0);
}

TEST_F(ServerCliTest, ProbeWithoutASizeIsAUsageError) {
  CommandResult r = Cli({"probe", "--center=0,0,0"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--half_extents"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--radius"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");  // nothing was sent, nothing answered
  EXPECT_EQ(Cli({"probe", "--center=0,0,0", "--radius=0"}).exit_code, 0);  // a point, given
  EXPECT_EQ(Cli({"probe", "--center=0,0,0", "--half_extents=1,1,1"}).exit_code, 0);
}

TEST_F(ServerCliTest, OnlyMinusOneMeansAnyVersion) {
  CommandResult r = Cli({"fill-ball", "--center=0,10,0", "--radius=2", "--expected_version=-7"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--expected_version"), std::string::npos) << r.err;
  EXPECT_EQ(CliJson<v1::GetWorldInfoResponse>({"info"}).version(), 0u);  // nothing applied
  for (std::vector<std::string> args :
       {std::vector<std::string>{"clear", "--min=0,0,0", "--max=1,1,1", "--expected_version=-2"},
        {"raycast", "--origin=0,40,0", "--at_version=-5"},
        {"subscribe", "--from=-3", "--max_events=1"}}) {
    CommandResult bad = Cli(args);
    EXPECT_EQ(bad.exit_code, 2) << args[0] << ": " << bad.err;
    const std::string flag = args.back().substr(0, args.back().find('='));
    EXPECT_NE(bad.err.find(args[0] == "subscribe" ? "--from" : flag), std::string::npos) << bad.err;
  }
  CommandResult any = Cli({"fill-ball", "--center=0,10,0", "--radius=2", "--expected_version=-1"});
  EXPECT_EQ(any.exit_code, 0) << any.err;
  EXPECT_EQ(CliJson<v1::GetWorldInfoResponse>({"info"}).version(), 1u);
}

TEST_F(ServerCliTest, DeadlineOnAReachableServerIsReportedAsADeadline) {
  ASSERT_EQ(Cli({"health"}).exit_code, 0);  // reachable
  // Contacts of a radius-60 sphere over a cold world: seconds of chunk builds, not 5 ms.
  CommandResult r =
      Cli({"--timeout_ms=5", "contacts", "--shape=sphere", "--radius=60", "--position=0,0,0"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("did not answer within --timeout_ms=5"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot reach"), std::string::npos) << r.err;
  EXPECT_EQ(Cli({"health"}).exit_code, 0);  // and it still serves
}

TEST(CliWithoutServer, SilentServerIsADeadlineNotUnreachable) {
  // A listener that accepts TCP connections and never answers: reachable, but no reply.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string server = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  TempDir dir;
  CommandResult r =
      RunCommand({VOXCOL_CLI_PATH, "--server=" + server, "--timeout_ms=700", "info"}, dir.path());
  close(fd);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("did not answer within --timeout_ms=700"), std::string::npos) << r.err;
}

TEST(CliWithoutServer, MistypedCommandSuggestsTheClosest) {
  TempDir dir;
  CommandResult r = RunCommand({VOXCOL_CLI_PATH, "raycats", "--origin=0,90,0"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'raycats'; did you mean raycast?"), std::string::npos)
      << r.err;
  // After a global option and its value, and with several close commands.
  r = RunCommand({VOXCOL_CLI_PATH, "--server", "127.0.0.1:1", "fill-blok"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean fill-block?"), std::string::npos) << r.err;
  r = RunCommand({VOXCOL_CLI_PATH, "worldz"}, dir.path());
  EXPECT_NE(r.err.find("did you mean worlds?"), std::string::npos) << r.err;
  r = RunCommand({VOXCOL_CLI_PATH, "xyzzy-plugh"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'xyzzy-plugh'; 'voxcol --help' lists the commands"),
            std::string::npos)
      << r.err;
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
