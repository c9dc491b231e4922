// Done-means for durability: the real server is killed with SIGKILL at random moments while
// several clients stream edit batches; after every restart each acknowledged batch is present in
// full, no batch is partially applied, and versions continue monotonically.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "client/voxcol_client.h"
#include "core/store/region_file.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

constexpr int kCycles = 20;
constexpr int kClients = 4;
constexpr float kRadius = 1.5f;
constexpr int kSpacing = 4;  // voxels between ball centres; balls never overlap
constexpr int kReach = 2;    // a ball touches voxels [centre - 2, centre + 2) on each axis

// Batch i is a FillBall (mode SET) with its own centre on a grid and its own material, so its
// voxels are recognizable: exactly those with that material inside its box.
struct Batch {
  Int3 center;
  uint8_t material;
};

Batch BatchAt(int i) {
  // Centres in [-60, 60] x [-44, 44] x [-60, 60]; every other one sits on a chunk corner, so its
  // batch changes 8 chunks at once.
  constexpr int kPerAxis = 31;
  int x = i % kPerAxis, z = (i / kPerAxis) % kPerAxis, y = i / (kPerAxis * kPerAxis);
  return {{-60 + kSpacing * x, -44 + kSpacing * y, -60 + kSpacing * z}, uint8_t(6 + i % 250)};
}
constexpr int kMaxBatches = 31 * 31 * 23;

enum class Fate { kAcked, kUnknown, kDurable, kLost };

// Voxels a full batch sets, from geometry alone: the ball of radius kRadius around a lattice point
// (a voxel corner) covers each voxel of the 4x4x4 block around it by a fraction found here by
// integration on a fine grid. The 8 inner voxels are (nearly) covered and the 24 face neighbours
// about a fifth; the 24 edge neighbours by under 1% (FillBall's coverage samples miss them) and the
// corners not at all, so a full batch is the voxels covered by more than 1%: 32. Fails if a
// voxel's coverage is ambiguous (between 0.5% and 5%).
int ExpectedVoxelsPerBatch() {
  constexpr int kSteps = 40;
  int count = 0;
  for (int vy = -kReach; vy < kReach; ++vy)
    for (int vz = -kReach; vz < kReach; ++vz)
      for (int vx = -kReach; vx < kReach; ++vx) {
        int inside = 0;
        for (int k = 0; k < kSteps; ++k)
          for (int j = 0; j < kSteps; ++j)
            for (int i = 0; i < kSteps; ++i) {
              const double x = vx + (i + 0.5) / kSteps, y = vy + (j + 0.5) / kSteps,
                           z = vz + (k + 0.5) / kSteps;
              inside += x * x + y * y + z * z < double(kRadius) * kRadius;
            }
        const double fraction = double(inside) / (kSteps * kSteps * kSteps);
        EXPECT_TRUE(fraction < 0.005 || fraction > 0.05) << "ambiguous voxel coverage " << fraction;
        count += fraction > 0.01;
      }
  return count;
}

class CrashRecoveryTest : public ::testing::Test {
 protected:
  std::vector<std::string> ServerArgs() {
    return {"--data_dir=" + dir_.path() + "/data", "--seed=3", "--world_size=128,96,128",
            "--store_cache_mb=1"};
  }

  // Streams batches from kClients threads until the server dies; records each batch's fate.
  void StreamEdits(const std::string& address) {
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        client::Client client(address, std::chrono::seconds(5));
        uint64_t last_version = 0;
        while (true) {
          // Each cycle may use its share of the positions, so a fast machine cannot run out.
          int id = next_batch_.load();
          do {
            if (id >= cycle_limit_.load()) return;
          } while (!next_batch_.compare_exchange_weak(id, id + 1));
          Batch b = BatchAt(id);
          v1::FillBallRequest request;
          request.mutable_center()->set_x(b.center.x);
          request.mutable_center()->set_y(b.center.y);
          request.mutable_center()->set_z(b.center.z);
          request.set_radius(kRadius);
          request.set_material(b.material);
          request.set_mode(v1::EDIT_MODE_SET);
          v1::EditAck ack;
          grpc::Status status = client.FillBall(request, &ack);
          std::lock_guard<std::mutex> lock(mu_);
          fates_[id] = status.ok() ? Fate::kAcked
                                   : Fate::kUnknown;  // a failed call may still have committed
          cycle_batches_.push_back(id);
          if (!status.ok()) return;
          EXPECT_GT(ack.version(), last_version) << "client " << c;
          EXPECT_GT(ack.version(), restart_version_);
          last_version = ack.version();
          max_acked_version_ = std::max(max_acked_version_, ack.version());
        }
      });
    }
    for (auto& t : clients) t.join();
  }

  // The whole world's voxels, in two exports (each under the region size limit).
  std::vector<store::Region> ReadWorld(client::Client& client) {
    std::vector<store::Region> halves;
    for (int y0 : {-48, 0}) {
      v1::ExportRegionRequest request;
      auto* box = request.mutable_box();
      box->mutable_min()->set_x(-64), box->mutable_min()->set_y(y0), box->mutable_min()->set_z(-64);
      box->mutable_max()->set_x(64), box->mutable_max()->set_y(y0 + 48),
          box->mutable_max()->set_z(64);
      v1::ExportRegionResponse response;
      grpc::Status status = client.ExportRegion(request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      halves.push_back(*store::DecodeRegion(response.region()));
    }
    return halves;
  }

  static int CountMaterial(const std::vector<store::Region>& world, const Batch& b) {
    int n = 0;
    for (int y = b.center.y - kReach; y < b.center.y + kReach; ++y)
      for (int z = b.center.z - kReach; z < b.center.z + kReach; ++z)
        for (int x = b.center.x - kReach; x < b.center.x + kReach; ++x) {
          const store::Region& r = world[y < 0 ? 0 : 1];
          n += r.materials[r.IndexOf({x, y, z})] == b.material;
        }
    return n;
  }

  // Every acked batch complete, every unknown one all-or-nothing (and from then on fixed).
  void CheckBatches(const std::vector<store::Region>& world) {
    for (auto& [id, fate] : fates_) {
      int n = CountMaterial(world, BatchAt(id));
      if (fate == Fate::kAcked || fate == Fate::kDurable) {
        ASSERT_EQ(n, full_count_) << "acknowledged batch " << id << " lost or partial";
      } else if (fate == Fate::kLost) {
        ASSERT_EQ(n, 0) << "lost batch " << id << " reappeared";
      } else {
        ASSERT_TRUE(n == 0 || n == full_count_) << "batch " << id << " partially applied: " << n;
        fate = n == 0 ? Fate::kLost : Fate::kDurable;
      }
    }
  }

  // Every batch is one version: since the last restart the version grew by exactly the batches of
  // that cycle that became durable.
  void CheckVersionGrewByDurableBatches(uint64_t version) {
    int durable = int(std::count_if(cycle_batches_.begin(), cycle_batches_.end(), [&](int id) {
      return fates_[id] == Fate::kAcked || fates_[id] == Fate::kDurable;
    }));
    ASSERT_EQ(version, restart_version_ + durable);
    restart_version_ = version;
    cycle_batches_.clear();
  }

  TempDir dir_;
  std::atomic<int> next_batch_{0};
  std::atomic<int> cycle_limit_{0};  // positions below this may be used in the current cycle
  std::mutex mu_;
  std::map<int, Fate> fates_;
  uint64_t max_acked_version_ = 0;
  uint64_t restart_version_ = 0;
  std::vector<int> cycle_batches_;  // batches sent since the last restart
  const int full_count_ = ExpectedVoxelsPerBatch();
};

TEST_F(CrashRecoveryTest, AcknowledgedBatchesSurviveKillNineAtRandomMoments) {
  ASSERT_EQ(full_count_, 32);  // 8 inner voxels + 24 face neighbours
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delay_ms(50, 600);
  int in_flight_at_kills = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    ServerProcess server;
    ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(), dir_.path())) << server.Log();
    client::Client client(server.address());
    v1::GetWorldInfoResponse info;
    ASSERT_TRUE(client.GetWorldInfo(&info).ok());
    ASSERT_GE(info.version(), max_acked_version_) << "cycle " << cycle;
    CheckBatches(ReadWorld(client));
    if (HasFatalFailure()) return;
    CheckVersionGrewByDurableBatches(info.version());
    if (HasFatalFailure()) return;

    cycle_limit_ = (cycle + 1) * kMaxBatches / kCycles;
    std::thread editors([&] { StreamEdits(server.address()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    server.Stop(SIGKILL);
    editors.join();
    in_flight_at_kills += int(std::count_if(fates_.begin(), fates_.end(),
                                            [](auto& f) { return f.second == Fate::kUnknown; }));
  }
  // A last restart to check the final cycle's batches.
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH, ServerArgs(), dir_.path())) << server.Log();
  client::Client client(server.address());
  CheckBatches(ReadWorld(client));
  v1::GetWorldInfoResponse info;
  ASSERT_TRUE(client.GetWorldInfo(&info).ok());
  CheckVersionGrewByDurableBatches(info.version());
  auto count = [&](Fate fate) {
    return std::count_if(fates_.begin(), fates_.end(), [&](auto& f) { return f.second == fate; });
  };
  std::printf(
      "%zu batches sent in %d cycles: %zd acknowledged, %d in flight at a kill (%zd durable, %zd "
      "lost), "
      "%d voxels per batch\n",
      fates_.size(), kCycles, count(Fate::kAcked), in_flight_at_kills, count(Fate::kDurable),
      count(Fate::kLost), full_count_);
  EXPECT_LE(next_batch_.load(), kMaxBatches);
  EXPECT_GT(in_flight_at_kills, kCycles);  // the kills did interrupt streams
}

}  // namespace
}  // namespace voxcol
