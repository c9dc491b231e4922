// On-disk formats across releases (issue 38). tests/fixtures/format-1 holds a data directory and a
// checkpoint written by the release that introduced store format 1, and what that release
// answered about them (answers.txt). Every later release must open both and answer the same, and
// --restore_from must restore the checkpoint into a fresh data directory that answers the same.
//
// VOXCOL_WRITE_FIXTURES=<dir> makes a new set in <dir> (with a new format only: an existing set
// is never rewritten, it is what older releases wrote).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/voxcol_client.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

namespace fs = std::filesystem;
using testing::ServerProcess;
using testing::TempDir;

const std::vector<std::string> kWorldFlags = {"--world_size=128,96,128", "--seed=11"};

// FNV-1a, 64 bits: a digest that never changes between releases or platforms.
uint64_t Fnv1a(const std::string& bytes, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// What the server says about the world, one line per answer: its info, a grid of rays (hit,
// voxel, material, version: what the stored voxels decide, not the mesher's triangles) and a
// digest of every voxel of the edited box.
std::string Answers(client::Client& client) {
  std::ostringstream out;
  v1::GetWorldInfoResponse info;
  EXPECT_TRUE(client.GetWorldInfo(&info).ok());
  out << "info version=" << info.version() << "\n";
  for (int i = 0; i < 64; ++i) {
    v1::RaycastRequest ray;
    ray.mutable_origin()->set_x(float(-56 + 16 * (i % 8)) + 0.25f);
    ray.mutable_origin()->set_y(40.5f);
    ray.mutable_origin()->set_z(float(-56 + 16 * (i / 8)) + 0.75f);
    ray.mutable_direction()->set_x(0.1f * float(i % 3 - 1));
    ray.mutable_direction()->set_y(-1);
    ray.set_max_distance(150);
    v1::RaycastResponse hit;
    EXPECT_TRUE(client.Raycast(ray, &hit).ok());
    out << "ray " << i << " hit=" << hit.hit();
    if (hit.hit()) {
      const v1::Int3& v = hit.first().voxel();
      out << " voxel=" << v.x() << "," << v.y() << "," << v.z()
          << " material=" << hit.first().material();
    }
    out << " version=" << hit.version() << "\n";
  }
  v1::ReadVoxelsRequest read;
  v1::VoxelBox* box = read.mutable_region();
  box->mutable_min()->set_x(-32), box->mutable_min()->set_y(-16), box->mutable_min()->set_z(-32);
  box->mutable_max()->set_x(32), box->mutable_max()->set_y(16), box->mutable_max()->set_z(32);
  v1::ReadVoxelsResponse voxels;
  EXPECT_TRUE(client.ReadVoxels(read, &voxels).ok());
  out << "voxels version=" << voxels.version() << " materials=" << std::hex
      << Fnv1a(voxels.voxels().materials())
      << " occupancies=" << Fnv1a(voxels.voxels().occupancies()) << std::dec << "\n";
  return out.str();
}

std::string Start(ServerProcess& server, const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.end(), kWorldFlags.begin(), kWorldFlags.end());
  EXPECT_TRUE(server.Start(VOXCOL_SERVER_PATH, args, dir.path())) << server.Log();
  return server.address();
}

// Writes a fixture set into `out`: edits, a checkpoint, a clean stop, the answers.
void WriteFixtures(const std::string& out) {
  ASSERT_FALSE(fs::exists(out)) << out << " exists: a fixture set is never rewritten";
  TempDir dir;
  ServerProcess server;
  client::Client client(
      Start(server, dir,
            {"--data_dir=" + dir.path() + "/data", "--backup_root=" + dir.path() + "/backups"}));
  for (int k = 0; k < 12; ++k) {
    v1::FillBallRequest ball;
    ball.mutable_center()->set_x(float(-28 + 5 * k));
    ball.mutable_center()->set_y(float(-8 + (k % 4) * 5));
    ball.mutable_center()->set_z(float(20 - 4 * k));
    ball.set_radius(3.5f + float(k % 3));
    ball.set_material(uint32_t(k % 2 == 0 ? 0 : 20 + k));  // carve and build
    ball.set_mode(v1::EDIT_MODE_SET);
    v1::EditAck ack;
    ASSERT_TRUE(client.FillBall(ball, &ack).ok());
  }
  v1::CreateCheckpointRequest checkpoint;
  checkpoint.set_dir("checkpoint");
  v1::CreateCheckpointResponse made;
  ASSERT_TRUE(client.CreateCheckpoint(checkpoint, &made).ok());
  const std::string answers = Answers(client);
  ASSERT_EQ(server.Stop(), 0);
  fs::create_directories(out);
  fs::copy(dir.path() + "/data", out + "/data", fs::copy_options::recursive);
  fs::copy(made.dir(), out + "/checkpoint", fs::copy_options::recursive);
  for (const char* sub : {"/data/store/LOCK", "/checkpoint/store/LOCK"}) fs::remove(out + sub);
  std::ofstream(out + "/answers.txt") << answers;
}

class FormatFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* out = std::getenv("VOXCOL_WRITE_FIXTURES")) WriteFixtures(out);
    std::ifstream in(fixtures_ + "/answers.txt");
    ASSERT_TRUE(in) << "no fixture set in " << fixtures_;
    std::stringstream text;
    text << in.rdbuf();
    expected_ = text.str();
  }
  // A copy of fixture `sub` (fixtures are never opened in place: opening writes to a store).
  std::string CopyOf(const std::string& sub) {
    fs::copy(fixtures_ + "/" + sub, dir_.path() + "/" + sub, fs::copy_options::recursive);
    return dir_.path() + "/" + sub;
  }

  const std::string fixtures_ = VOXCOL_FIXTURES_DIR "/format-1";
  std::string expected_;
  TempDir dir_;
};

TEST_F(FormatFixtureTest, DataDirectoryOfFormatOneAnswersAsItDid) {
  ServerProcess server;
  client::Client client(Start(server, dir_, {"--data_dir=" + CopyOf("data")}));
  EXPECT_EQ(Answers(client), expected_);
}

TEST_F(FormatFixtureTest, CheckpointOfFormatOneAnswersAsItDid) {
  ServerProcess server;
  client::Client client(Start(server, dir_, {"--data_dir=" + CopyOf("checkpoint")}));
  EXPECT_EQ(Answers(client), expected_);
}

TEST_F(FormatFixtureTest, RestoreFromCopiesTheCheckpointIntoAFreshDataDirectory) {
  const std::string checkpoint = CopyOf("checkpoint"), fresh = dir_.path() + "/restored";
  {
    ServerProcess server;
    client::Client client(
        Start(server, dir_, {"--data_dir=" + fresh, "--restore_from=" + checkpoint}));
    EXPECT_EQ(Answers(client), expected_);
  }
  // Never over an existing data directory, and only from a checkpoint.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--data_dir=" + fresh, "--restore_from=" + checkpoint},
        std::vector<std::string>{"--data_dir=" + dir_.path() + "/other",
                                 "--restore_from=" + dir_.path()}}) {
    ServerProcess refused;
    std::vector<std::string> full = args;
    full.insert(full.end(), kWorldFlags.begin(), kWorldFlags.end());
    EXPECT_FALSE(refused.Start(VOXCOL_SERVER_PATH, full, dir_.path()));
    EXPECT_NE(refused.Log().find("--restore_from"), std::string::npos) << refused.Log();
  }
}

}  // namespace
}  // namespace voxcol
