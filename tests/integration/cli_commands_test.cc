// Every subcommand of the real CLI against a real server: each one's answer and exit code, its
// --help (exit 0), and usage errors (exit 2). The list of subcommands is read from `voxcol --help`,
// so a command added without a test here fails CoversEveryCommandOfTheHelp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/integration/cli_fixture.h"
#include "voxcol/v1/admin_service.pb.h"
#include "voxcol/v1/body_service.pb.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"
#include "voxcol/v1/world_service.pb.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

// The subcommands `voxcol --help` lists.
std::set<std::string> HelpCommands(const std::string& scratch) {
  CommandResult help = RunCommand({VOXCOL_CLI_PATH, "--help"}, scratch);
  EXPECT_EQ(help.exit_code, 0);
  std::set<std::string> names;
  std::istringstream in(help.out.substr(help.out.find("Subcommands:")));
  std::string line;
  std::getline(in, line);
  const std::regex entry(R"(^  ([a-z][a-z-]*)\s)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) names.insert(m[1]);
  }
  return names;
}

std::string Str(const v1::Vec3& v) {
  return std::to_string(v.x()) + "," + std::to_string(v.y()) + "," + std::to_string(v.z());
}

class CliCommandsTest : public testing::CliFixture {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + dir_.path() + "/data", "--seed=5",
                               "--world_size=128,96,128", "--backup_root=" + dir_.path() + "/bk"},
                              dir_.path()))
        << server_.Log();
  }
  // Runs an edit command with --json; returns the version it produced (0 on failure).
  uint64_t Edit(std::vector<std::string> args) {
    tested_.insert(args[0]);
    v1::EditAck ack = CliJson<v1::EditAck>(std::move(args));
    return ack.version();
  }
  std::set<std::string> tested_;
  CommandResult Run(std::vector<std::string> args) {
    tested_.insert(args[0] == "--json" ? args[1] : args[0]);
    return Cli(std::move(args));
  }
  template <typename Message>
  Message Json(std::vector<std::string> args) {
    tested_.insert(args[0]);
    return CliJson<Message>(std::move(args));
  }
};

TEST_F(CliCommandsTest, EveryCommandAnswersAgainstARealServer) {
  auto info = Json<v1::GetWorldInfoResponse>({"info"});
  EXPECT_EQ(info.seed(), 5u);
  EXPECT_EQ(info.version(), 0u);
  CommandResult health = Run({"health"});
  EXPECT_EQ(health.exit_code, 0);
  EXPECT_EQ(health.out, "SERVING\n");

  // Queries at one column: the ray's hit anchors the shape queries' expectations.
  auto ray = Json<v1::RaycastResponse>({"raycast", "--origin=0.5,45,0.5"});
  ASSERT_TRUE(ray.hit());
  const v1::Vec3 ground = ray.first().position();
  EXPECT_NEAR(ground.y(), 45 - ray.first().distance(), 1e-3);
  // A sphere dropped on the same line touches no later than its lowest point's ray would.
  auto sweep = Json<v1::SweepResponse>(
      {"sweep", "--shape=sphere", "--radius=0.5", "--position=0.5,45,0.5", "--distance=100"});
  ASSERT_TRUE(sweep.hit());
  EXPECT_LE(sweep.first().distance(), ray.first().distance() - 0.5f + 1e-3f);
  EXPECT_GT(sweep.first().distance(), 0);
  auto overlap = Json<v1::OverlapResponse>(
      {"overlap", "--shape=sphere", "--radius=1", "--position=" + Str(ground), "--penetration"});
  EXPECT_TRUE(overlap.touches_solid());
  EXPECT_GT(overlap.penetration().depth(), 0);
  auto contacts = Json<v1::ContactsResponse>(
      {"contacts", "--shape=sphere", "--radius=1", "--position=" + Str(ground)});
  ASSERT_GT(contacts.chunks_size(), 0);
  EXPECT_GT(contacts.chunks(0).points_size(), 0);
  auto probe = Json<v1::ProbeResponse>({"probe", "--center=" + Str(ground), "--radius=1"});
  EXPECT_TRUE(probe.may_touch_solid());
  // A capsule falling from 3 units above the hit for 30 ticks lands on the ground.
  v1::Vec3 above = ground;
  above.set_y(ground.y() + 3);
  CommandResult move = Run({"--json", "move-character", "--radius=0.4", "--half_height=0.5",
                            "--position=" + Str(above), "--displacement=0,-0.3,0", "--ticks=30"});
  ASSERT_EQ(move.exit_code, 0) << move.err;
  v1::MoveCharactersResponse last;
  const std::string last_line = move.out.substr(move.out.rfind('\n', move.out.size() - 2) + 1);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(last_line, &last).ok()) << last_line;
  EXPECT_EQ(last.results(0).ground(), v1::GROUND_STATE_ON_GROUND);
  EXPECT_NEAR(last.results(0).position().y(), ground.y() + 0.9, 0.6);

  // The ray's own hit, claimed by a client that fired at version 0: confirmed.
  CommandResult verdict = Run({"validate-hit", "--origin=0.5,45,0.5", "--direction=0,-1,0",
                               "--claimed_hit=" + Str(ground), "--at_version=0"});
  ASSERT_EQ(verdict.exit_code, 0) << verdict.err;
  EXPECT_EQ(verdict.out.rfind("CONFIRMED (world version 0)", 0), 0u) << verdict.out;

  // A path from the ray's hit to itself (FindPath): answered at version 0 with a status.
  auto path =
      Json<v1::FindPathResponse>({"path", "--start=" + Str(ground), "--goal=" + Str(ground)});
  EXPECT_EQ(path.version(), 0u);
  EXPECT_NE(path.status(), v1::PATH_STATUS_UNSPECIFIED);

  // Bodies (issue 42): a capsule 10 units along +x from the ray's origin at tick 1, seen by a
  // bodies-only ray at that tick, listed, and judged by validate-hit at that tick.
  auto updated = Json<v1::UpdateBodiesResponse>(
      {"update-bodies", R"(--request={"tick":1,"create":[{"id":7,"owner":3,"position":)"
                        R"({"x":10.5,"y":45,"z":0.5},"parts":[{"part_id":2,"shape":)"
                        R"({"capsule":{"half_height":0.9,"radius":0.4}}}]}]})"});
  EXPECT_EQ(updated.tick(), 1);
  EXPECT_EQ(updated.body_count(), 1);
  auto listed_bodies = Json<v1::ListBodiesResponse>({"list-bodies"});
  ASSERT_EQ(listed_bodies.bodies_size(), 1);
  EXPECT_EQ(listed_bodies.bodies(0).owner(), 3u);
  auto body_ray = Json<v1::RaycastResponse>({"raycast", "--origin=0.5,45,0.5", "--direction=1,0,0",
                                             "--max_distance=20", "--bodies", "--body_scope=bodies",
                                             "--tick=1"});
  EXPECT_EQ(body_ray.first_kind(), v1::HIT_KIND_BODY);
  EXPECT_EQ(body_ray.body().part_id(), 2u);
  EXPECT_NEAR(body_ray.first().distance(), 9.6f, 1e-3f);
  CommandResult body_verdict = Run({"validate-hit", "--origin=0.5,45,0.5", "--direction=1,0,0",
                                    "--target_body=7", "--part=2", "--tick=1"});
  ASSERT_EQ(body_verdict.exit_code, 0) << body_verdict.err;
  EXPECT_NE(body_verdict.out.find("(world version 0)"), std::string::npos) << body_verdict.out;
  CommandResult old_tick = Run({"raycast", "--origin=0.5,45,0.5", "--bodies", "--tick=0"});
  EXPECT_EQ(old_tick.exit_code, 1);
  EXPECT_NE(old_tick.err.find("body_filter.tick"), std::string::npos) << old_tick.err;

  // Edits: each produces the next version.
  uint64_t v = 0;
  EXPECT_EQ(Edit({"fill-ball", "--center=" + Str(ground), "--radius=3", "--material=air"}), ++v);
  auto dug = Json<v1::RaycastResponse>({"raycast", "--origin=0.5,45,0.5"});
  EXPECT_GT(dug.first().distance(), ray.first().distance() + 2);  // the ray now enters the hole
  EXPECT_EQ(Edit({"fill-block", "--center=20,30,20", "--size=2,2,2"}), ++v);
  EXPECT_EQ(Edit({"fill-wedge", "--center=24,30,20", "--size=2,2,2"}), ++v);
  EXPECT_EQ(Edit({"fill-cylinder", "--center=28,30,20", "--height=2", "--radius=1"}), ++v);
  EXPECT_EQ(Edit({"fill-region", "--min=30,30,30", "--max=32,32,32"}), ++v);
  EXPECT_EQ(Edit({"replace-material", "--min=30,30,30", "--max=32,32,32", "--source=rock",
                  "--target=sand"}),
            ++v);
  EXPECT_EQ(Edit({"clear", "--min=30,30,30", "--max=31,31,31",
                  "--expected_version=" + std::to_string(v)}),
            v + 1);
  ++v;
  const std::string batch = dir_.path() + "/batch.json";
  std::ofstream(batch) << R"({"primitives":[{"fillBall":{"center":{"x":-20,"y":30,"z":-20},)"
                       << R"("radius":2,"material":2,"mode":"EDIT_MODE_ADD"}}]})";
  EXPECT_EQ(Edit({"edit", "--batch=" + batch}), ++v);

  const std::string voxels = dir_.path() + "/voxels.bin", region = dir_.path() + "/region.bin";
  CommandResult read = Run({"read-voxels", "--min=30,30,30", "--max=32,32,32", "--out=" + voxels});
  ASSERT_EQ(read.exit_code, 0) << read.err;
  EXPECT_GT(std::filesystem::file_size(voxels), 8u);
  EXPECT_EQ(Edit({"write-voxels", "--in=" + voxels, "--at=40,30,40"}), ++v);
  CommandResult exported =
      Run({"export-region", "--min=38,28,38", "--max=44,34,44", "--file=" + region});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_GT(std::filesystem::file_size(region), 0u);
  CommandResult imported = Run({"import-region", "--file=" + region});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;  // what is there already: no new version
  CommandResult checkpoint = Run({"checkpoint", "--dir=ck1"});
  EXPECT_EQ(checkpoint.exit_code, 0) << checkpoint.err;
  EXPECT_TRUE(std::filesystem::is_directory(dir_.path() + "/bk/ck1"));
  EXPECT_EQ(Json<v1::GetWorldInfoResponse>({"info"}).version(), v);

  // The change feed from the start: the first two batches, in order.
  CommandResult feed = Run({"--json", "subscribe", "--from=0", "--max_events=2"});
  ASSERT_EQ(feed.exit_code, 0) << feed.err;
  std::istringstream lines(feed.out);
  std::string line;
  for (uint64_t want = 1; want <= 2; ++want) {
    ASSERT_TRUE(std::getline(lines, line));
    v1::SubscribeResponse event;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &event).ok()) << line;
    EXPECT_EQ(event.version(), want);
  }

  CommandResult load = Run({"--json", "loadtest", "--streams=2", "--seconds=2", "--batch_size=8",
                            "--edit_rate=0", "--progress"});
  EXPECT_EQ(load.exit_code, 0) << load.err;
  // Live progress on stderr, once a second, with rate and the last interval's latency.
  const std::regex progress(R"(progress +[0-9.]+ s: [0-9]+ batches \(0 shed, 0 failed\), [0-9]+ )"
                            R"(queries, [0-9]+ queries/s, last second p99 <= [0-9.]+ ms)");
  EXPECT_GE(std::distance(std::sregex_iterator(load.err.begin(), load.err.end(), progress),
                          std::sregex_iterator()),
            1)
      << load.err;
  EXPECT_NE(load.out.find("\"queries\":"), std::string::npos);
  EXPECT_EQ(load.out.find("\"queries\":0,"), std::string::npos) << load.out;

  // Pictures are checked in render_test.cc; here: a PNG of the requested kind is written.
  const std::string png = dir_.path() + "/map.png";
  CommandResult render = Run({"render", "--size=64x48", "--out=" + png});
  ASSERT_EQ(render.exit_code, 0) << render.err;
  std::ifstream png_in(png, std::ios::binary);
  std::string signature(8, '\0');
  png_in.read(signature.data(), 8);
  EXPECT_EQ(signature, "\x89PNG\r\n\x1a\n");

  CommandResult completion = Run({"completion"});
  ASSERT_EQ(completion.exit_code, 0);
  EXPECT_NE(completion.out.find("complete -F _voxcol voxcol"), std::string::npos);
  const std::string script = dir_.path() + "/voxcol.bash";
  std::ofstream(script) << completion.out;
  // The script is valid bash and completes a command's options.
  CommandResult words =
      RunCommand({"bash", "-c",
                  "source " + script +
                      " && COMP_WORDS=(voxcol raycast --or) && COMP_CWORD=2 && _voxcol && echo "
                      "\"${COMPREPLY[@]}\""},
                 dir_.path());
  EXPECT_EQ(words.out, "--origin\n") << words.err;

  // Worlds (issue 22): a copy of the default world, edited through the global --world, listed,
  // deleted; the default world does not see the copy's edit.
  const uint64_t before = Json<v1::GetWorldInfoResponse>({"info"}).version();
  CommandResult created = Run({"create-world", "--id=match-1", "--template=default"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.out.find("world match-1 at version " + std::to_string(before)),
            std::string::npos)
      << created.out;
  EXPECT_EQ(
      Edit({"fill-ball", "--center=1,1,1", "--radius=2", "--material=sand", "--world=match-1"}),
      before + 1);
  EXPECT_EQ(Json<v1::GetWorldInfoResponse>({"info", "--world=match-1"}).version(), before + 1);
  EXPECT_EQ(Json<v1::GetWorldInfoResponse>({"info"}).version(), before);
  CommandResult listed = Run({"worlds"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("match-1"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("copied from default"), std::string::npos) << listed.out;
  ASSERT_EQ(Run({"delete-world", "--id=match-1"}).exit_code, 0);
  CommandResult gone = Run({"info", "--world=match-1"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("world"), std::string::npos) << gone.err;

  const std::set<std::string> all = HelpCommands(dir_.path());
  EXPECT_EQ(tested_, all);
}

TEST(CliUsageTest, EveryCommandHasItsOwnHelpAndRejectsBadOptionsWithExit2) {
  TempDir dir;
  const std::set<std::string> commands = HelpCommands(dir.path());
  ASSERT_GE(commands.size(), 20u);
  for (const std::string& command : commands) {
    CommandResult help = RunCommand({VOXCOL_CLI_PATH, command, "--help"}, dir.path());
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.out.find("Usage: voxcol " + command), std::string::npos) << help.out;
    CommandResult bad = RunCommand({VOXCOL_CLI_PATH, command, "--no_such_option=1"}, dir.path());
    EXPECT_EQ(bad.exit_code, 2) << command;
    // A command with required options, run without them, names one and exits 2 before any call;
    // one without names the unknown option.
    if (help.out.find("REQUIRED") == std::string::npos) {
      EXPECT_NE(bad.err.find("no_such_option"), std::string::npos) << command << ": " << bad.err;
    } else {
      CommandResult missing = RunCommand({VOXCOL_CLI_PATH, command}, dir.path());
      EXPECT_EQ(missing.exit_code, 2) << command;
      EXPECT_NE(missing.err.find("is required"), std::string::npos) << command << missing.err;
    }
  }
  CommandResult none = RunCommand({VOXCOL_CLI_PATH}, dir.path());
  EXPECT_EQ(none.exit_code, 2);
  CommandResult unknown = RunCommand({VOXCOL_CLI_PATH, "no-such-command"}, dir.path());
  EXPECT_EQ(unknown.exit_code, 2);
  CommandResult choice =
      RunCommand({VOXCOL_CLI_PATH, "raycast", "--origin=0,0,0", "--water=maybe"}, dir.path());
  EXPECT_EQ(choice.exit_code, 2);
  EXPECT_NE(choice.err.find("--water"), std::string::npos) << choice.err;
  CommandResult version = RunCommand({VOXCOL_CLI_PATH, "--version"}, dir.path());
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(std::regex_search(version.out, std::regex(R"(^voxcol [0-9.]+ \([0-9a-f]+)")))
      << version.out;
}

TEST(CliUsageTest, VoxcolServerEnvironmentVariableSetsTheServer) {
  TempDir dir;
  // Nothing listens on port 1: the error names the address taken from the environment.
  CommandResult r =
      RunCommand({"env", "VOXCOL_SERVER=127.0.0.1:1", VOXCOL_CLI_PATH, "--timeout_ms=2000", "info"},
                 dir.path());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace voxcol
