// The real server and CLI over a durable data directory: edits survive a restart, online
// checkpoints restore, regions export and import, and a corrupt record answers DATA_LOSS.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/store/keys.h"
#include "tests/integration/cli_fixture.h"
#include "voxcol/v1/admin_service.pb.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"
#include "voxcol/v1/world_service.pb.h"

namespace voxcol {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ServerProcess;
using testing::TempDir;

class StoreAdminTest : public testing::CliFixture {
 protected:
  std::string DataDir() const { return dir_.path() + "/data"; }
  std::string BackupRoot() const { return dir_.path() + "/backups"; }

  void StartServer(const std::string& data_dir) {
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH,
                              {"--data_dir=" + data_dir, "--seed=9", "--world_size=128,96,128",
                               "--backup_root=" + BackupRoot()},
                              dir_.path()))
        << server_.Log();
  }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

TEST_F(StoreAdminTest, EditsSurviveKillNineAndTheVersionContinues) {
  StartServer(DataDir());
  auto ack = CliJson<v1::EditAck>({"fill-ball", "--center=5,40,5", "--radius=3", "--material=77"});
  ASSERT_EQ(ack.version(), 1u);
  server_.Stop(SIGKILL);
  StartServer(DataDir());
  auto hit =
      CliJson<v1::RaycastResponse>({"raycast", "--origin=5.5,47.5,5.5", "--direction=0,-1,0"});
  EXPECT_EQ(hit.first().material(), 77u);
  EXPECT_EQ(hit.version(), 1u);
  EXPECT_EQ(CliJson<v1::EditAck>({"fill-ball", "--center=5,40,5", "--radius=3", "--material=air"})
                .version(),
            2u);
}

// The key is stored with its edit: after kill -9 and a restart, the retry is answered with the
// original ack (replayed) and applies nothing; the key reused for another batch is refused.
TEST_F(StoreAdminTest, IdempotencyKeysSurviveKillNine) {
  StartServer(DataDir());
  auto ack = CliJson<v1::EditAck>({"fill-ball", "--center=5,40,5", "--radius=3", "--material=sand",
                                   "--idempotency_key=retry-me"});
  ASSERT_EQ(ack.version(), 1u);
  CliJson<v1::EditAck>({"fill-ball", "--center=-5,40,5", "--radius=2", "--material=dirt"});
  server_.Stop(SIGKILL);
  StartServer(DataDir());
  auto retry = CliJson<v1::EditAck>({"fill-ball", "--center=5,40,5", "--radius=3",
                                     "--material=sand", "--idempotency_key=retry-me"});
  EXPECT_TRUE(retry.replayed());
  EXPECT_EQ(retry.version(), 1u);
  EXPECT_EQ(retry.changed_chunks(), ack.changed_chunks());
  // A ball of its own (repeating the dirt ball would change nothing and make no version).
  auto next =
      CliJson<v1::EditAck>({"fill-ball", "--center=-9,40,-9", "--radius=2", "--material=dirt"});
  EXPECT_EQ(next.version(), 3u);  // the retry applied nothing
  CommandResult reused = Cli({"fill-ball", "--center=9,40,5", "--radius=3", "--material=sand",
                              "--idempotency_key=retry-me"});
  EXPECT_NE(reused.exit_code, 0);
  EXPECT_NE(reused.err.find("INVALID_ARGUMENT"), std::string::npos) << reused.err;
}

// Checkpoints cannot be written outside the backup root, and client mistakes are never INTERNAL:
// each bad dir gets its code and names the field.
TEST_F(StoreAdminTest, CheckpointPathsOutsideTheBackupRootAreRefused) {
  StartServer(DataDir());
  ASSERT_TRUE(std::filesystem::create_directories(BackupRoot()));
  std::ofstream(BackupRoot() + "/a-file") << "x";
  // A link inside the root to a directory outside it: following it would escape the root.
  ASSERT_TRUE(std::filesystem::create_directories(dir_.path() + "/linked-outside"));
  std::filesystem::create_directory_symlink(dir_.path() + "/linked-outside",
                                            BackupRoot() + "/link");
  struct Case {
    std::string dir;
    const char* code;
  } cases[] = {
      {"../escaped", "INVALID_ARGUMENT"},
      {"ok/../../escaped", "INVALID_ARGUMENT"},
      {dir_.path() + "/outside", "INVALID_ARGUMENT"},
      {"link/escaped", "INVALID_ARGUMENT"},
      {"link", "INVALID_ARGUMENT"},
      {std::string(300, 'n'), "INVALID_ARGUMENT"},
      {"a-file/sub", "FAILED_PRECONDITION"},
      {"a-file", "ALREADY_EXISTS"},
  };
  for (const Case& c : cases) {
    CommandResult r = Cli({"checkpoint", "--dir=" + c.dir});
    EXPECT_EQ(r.exit_code, 1) << c.dir;
    EXPECT_NE(r.err.find(c.code), std::string::npos) << c.dir << ": " << r.err;
    EXPECT_NE(r.err.find("dir"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("INTERNAL"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/outside"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/escaped"));
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path() + "/linked-outside"));
  EXPECT_TRUE(server_.Running());
}

TEST_F(StoreAdminTest, CheckpointIsADataDirectoryWithTheEditsUpToIt) {
  StartServer(DataDir());
  CliJson<v1::EditAck>({"fill-ball", "--center=-10,40,3", "--radius=3", "--material=50"});
  // A name relative to the backup root; the answer is the absolute path.
  auto checkpoint = CliJson<v1::CreateCheckpointResponse>({"checkpoint", "--dir=world-1"});
  EXPECT_EQ(checkpoint.version(), 1u);
  const std::string backup = checkpoint.dir();
  EXPECT_EQ(backup, std::filesystem::weakly_canonical(BackupRoot() + "/world-1").string());
  CommandResult again = Cli({"checkpoint", "--dir=" + backup});  // absolute, inside the root
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("ALREADY_EXISTS"), std::string::npos) << again.err;
  CliJson<v1::EditAck>({"fill-ball", "--center=-10,40,3", "--radius=3", "--material=51"});
  server_.Stop(SIGTERM);
  StartServer(backup);  // restore = start on the checkpoint
  auto hit =
      CliJson<v1::RaycastResponse>({"raycast", "--origin=-9.5,47.5,3.5", "--direction=0,-1,0"});
  EXPECT_EQ(hit.first().material(), 50u);
  EXPECT_EQ(hit.version(), 1u);
}

TEST_F(StoreAdminTest, ExportedRegionImportsBackAfterTheAreaWasDug) {
  StartServer(DataDir());
  std::string before = dir_.path() + "/before.vxr", after = dir_.path() + "/after.vxr";
  const std::vector<std::string> box = {"--min=-12,-20,-12", "--max=12,10,12"};
  auto export_args = [&](const std::string& file) {
    std::vector<std::string> args = {"export-region", "--file=" + file};
    args.insert(args.end(), box.begin(), box.end());
    return args;
  };
  ASSERT_EQ(Cli(export_args(before)).exit_code, 0);
  EXPECT_EQ(ReadFile(before).size(), 32u + 2u * 24 * 30 * 24);
  CliJson<v1::EditAck>({"fill-ball", "--center=0,-5,0", "--radius=8", "--material=air"});
  auto ack = CliJson<v1::EditAck>({"import-region", "--file=" + before});
  EXPECT_EQ(ack.version(), 2u);
  EXPECT_GT(ack.changed_chunks(), 0u);
  ASSERT_EQ(Cli(export_args(after)).exit_code, 0);
  EXPECT_EQ(ReadFile(before), ReadFile(after));
  std::ofstream(dir_.path() + "/junk.vxr") << "not a region";
  CommandResult junk = Cli({"import-region", "--file=" + dir_.path() + "/junk.vxr"});
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_NE(junk.err.find("INVALID_ARGUMENT"), std::string::npos) << junk.err;
}

TEST_F(StoreAdminTest, CorruptStoredChunkAnswersDataLossAndIsLogged) {
  StartServer(DataDir());
  CliJson<v1::EditAck>({"fill-ball", "--center=20,30,20", "--radius=2", "--material=60"});
  ASSERT_EQ(server_.Stop(SIGTERM), 0);
  {
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), DataDir() + "/store", &db).ok());
    std::string key =
        store::EncodeKey(store::kChunkPrefix, {2, 3, 2});  // chunk of voxel (20, 30, 20)
    std::string value;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
    value[value.size() / 2] ^= 0x10;  // one flipped bit in the voxels
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
    delete db;
  }
  StartServer(DataDir());
  CommandResult r = Cli({"raycast", "--origin=20.5,47.5,20.5", "--direction=0,-1,0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("DATA_LOSS"), std::string::npos) << r.err;
  CommandResult region =
      Cli({"export-region", "--min=16,24,16", "--max=24,32,24", "--file=" + dir_.path() + "/x"});
  EXPECT_NE(region.err.find("DATA_LOSS"), std::string::npos) << region.err;
  // Elsewhere the world still answers, and the server is alive.
  auto hit =
      CliJson<v1::RaycastResponse>({"raycast", "--origin=-30.5,47.5,-30.5", "--direction=0,-1,0"});
  EXPECT_TRUE(hit.hit());
  EXPECT_NE(server_.Log().find("event=chunk_load_failed"), std::string::npos) << server_.Log();
}

TEST_F(StoreAdminTest, DataDirectoryFromBeforeTheStoreKeepsItsWorldAndGeneratorCheck) {
  std::filesystem::create_directories(DataDir());
  std::ofstream(DataDir() + "/world.conf")
      << "seed=31\nsize=64,32,64\nvoxel_size=0.5\ngenerator_version=1\n";
  StartServer(DataDir());
  auto info = CliJson<v1::GetWorldInfoResponse>({"info"});
  EXPECT_EQ(info.seed(), 31u);
  EXPECT_EQ(info.voxel_size(), 0.5f);
  EXPECT_EQ(info.voxel_bounds().max().x(), 32);
  server_.Stop(SIGTERM);

  std::string other = dir_.path() + "/other";
  std::filesystem::create_directories(other);
  std::ofstream(other + "/world.conf")
      << "seed=31\nsize=64,32,64\nvoxel_size=0.5\ngenerator_version=999\n";
  ServerProcess refused;
  EXPECT_FALSE(refused.Start(VOXCOL_SERVER_PATH, {"--data_dir=" + other}, dir_.path()));
  EXPECT_NE(refused.Log().find("generator version 999"), std::string::npos) << refused.Log();
}

}  // namespace
}  // namespace voxcol
