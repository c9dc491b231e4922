// The CLI's lag compensation (issue 19) against a real server: validate-hit and --at_version.
#include <gtest/gtest.h>

#include "tests/integration/cli_fixture.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol {
namespace {

class CliLagTest : public testing::CliFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        server_.Start(VOXCOL_SERVER_PATH,
                      {"--data_dir=" + dir_.path() + "/data", "--seed=3", "--world_size=128,96,128",
                       "--history_versions=4", "--history_window_ms=0"},
                      dir_.path()))
        << server_.Log();
  }
};

TEST_F(CliLagTest, ValidateHitAndAtVersionReadTheWorldAsTheClientSawIt) {
  const std::vector<std::string> shot = {"--origin=-30,40,0", "--direction=1,0,0",
                                         "--target_point=30,40,0"};
  ASSERT_EQ(Cli({"fill-ball", "--center=0,40,0", "--radius=4", "--material=rock"}).exit_code, 0);
  std::vector<std::string> args = {"validate-hit", "--at_version=0"};
  args.insert(args.end(), shot.begin(), shot.end());
  v1::ValidateHitResponse then = CliJson<v1::ValidateHitResponse>(args);
  EXPECT_EQ(then.verdict(), v1::HIT_VERDICT_CONFIRMED);
  EXPECT_EQ(then.version(), 0u);
  args[1] = "--at_version=1";
  v1::ValidateHitResponse now = CliJson<v1::ValidateHitResponse>(args);
  EXPECT_EQ(now.verdict(), v1::HIT_VERDICT_BLOCKED_BY_TERRAIN);
  EXPECT_TRUE(now.server_hit());
  testing::CommandResult summary = Cli(args);
  EXPECT_EQ(summary.exit_code, 0);
  EXPECT_NE(summary.out.find("BLOCKED_BY_TERRAIN"), std::string::npos) << summary.out;

  v1::RaycastResponse past = CliJson<v1::RaycastResponse>(
      {"raycast", "--origin=-30,40,0", "--direction=1,0,0", "--max_distance=60", "--at_version=0"});
  EXPECT_FALSE(past.hit());
  EXPECT_EQ(past.version(), 0u);
  // Past the retained versions: OUT_OF_RANGE naming the oldest readable one.
  // Five balls in five places: the same ball again would change nothing and make no version.
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Cli({"fill-ball", "--center=" + std::to_string(-20 + 8 * i) + ",30,20", "--radius=2",
                   "--material=rock"})
                  .exit_code,
              0);
  }
  testing::CommandResult old = Cli(
      {"raycast", "--origin=-30,40,0", "--direction=1,0,0", "--max_distance=60", "--at_version=0"});
  EXPECT_NE(old.exit_code, 0);
  EXPECT_NE(old.err.find("OUT_OF_RANGE"), std::string::npos) << old.err;
  EXPECT_NE(old.err.find("oldest readable version is 2"), std::string::npos) << old.err;
  // Exactly one claim.
  EXPECT_NE(Cli({"validate-hit", "--origin=0,40,0", "--direction=1,0,0"}).exit_code, 0);
}

}  // namespace
}  // namespace voxcol
