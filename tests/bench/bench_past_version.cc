// Lag compensation cost (issue 19): the same batches of rays as BM_RaycastInProcess
// (bench_query_stream.cc: same rays, same world, same kQueryThreads pool threads, same window of
// batches in flight), each batch reading the version 60 edits back (QueryBatchRequest.read_at)
// after 70 edits where those rays land. The history kept for it is reported per edit.
#include <benchmark/benchmark.h>
#include <time.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/voxel/edit.h"
#include "server/exec/query_batch.h"
#include "server/rpc/query_service.h"
#include "tests/bench/bench_scenes.h"
#include "tests/bench/raycast_batches.h"

namespace voxcol::bench {
namespace {

constexpr int kRays = kBatchRays;
constexpr int kQueryThreads = 2;
constexpr int kWindow = server::StreamLimits{}.max_in_flight_batches;
constexpr int kEdits = 70, kBack = 60;

// The bench cave world itself, given a history: kEdits / 2 digs where BM_RaycastInProcess's rays
// land, then as many edits writing back each dug ball's original voxels, so its current content
// (and every other benchmark's) is what it was, while the version kBack edits back has holes
// under the rays. Retention keeps every version since.
struct EditedScene {
  uint64_t past_version = 0;
  size_t history_bytes = 0, history_versions = 0;

  EditedScene() {
    World& world = BenchCaveWorld();
    world.SetHistoryRetention({absl::ZeroDuration(), 1000, 0});
    // The cache observes its world already; the shared index did not need to (nothing edited).
    world.AddObserver(const_cast<BroadphaseIndex*>(&BenchCaveIndex()));
    const std::vector<RaycastInput> rays = DownwardRays(world, kRays, 9);
    struct Saved {
      IntBox box;
      std::vector<Voxel> voxels;
    };
    std::vector<Saved> saved;
    for (size_t i = 0; int(saved.size()) < kEdits / 2 && i < rays.size(); i += 7) {
      const RaycastHit hit =
          Raycast(BenchCaveIndex(), BenchCaveCache(), rays[i], RaycastSettings{});
      if (!hit.hit) continue;
      const FillBallParams ball{hit.position, 3.0f, kMaterialAir, EditMode::kSubtract};
      // Every voxel the ball may touch (its radius in voxels, plus margin).
      const int r = int(std::ceil(3.0f / world.voxel_size())) + 2;
      Saved s{{world.VoxelAt(hit.position) - Int3{r, r, r},
               world.VoxelAt(hit.position) + Int3{r + 1, r + 1, r + 1}},
              {}};
      for (int y = s.box.min.y; y < s.box.max.y; ++y)
        for (int z = s.box.min.z; z < s.box.max.z; ++z)
          for (int x = s.box.min.x; x < s.box.max.x; ++x)
            s.voxels.push_back(world.GetVoxel({x, y, z}));
      absl::StatusOr<EditResult> dug =
          world.Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); });
      if (!dug.ok()) {
        std::fprintf(stderr, "dig failed: %s\n", dug.status().ToString().c_str());
        std::abort();
      }
      saved.push_back(std::move(s));
    }
    if (int(saved.size()) < kEdits / 2) {  // the rays must land often enough
      std::fprintf(stderr, "only %zu rays hit\n", saved.size());
      std::abort();
    }
    // Newest first: a later dig's saved box may hold an earlier dig's hole.
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      const Saved& s = *it;
      auto restore = [&](ChunkEdit& e) {
        size_t i = 0;
        for (int y = s.box.min.y; y < s.box.max.y; ++y)
          for (int z = s.box.min.z; z < s.box.max.z; ++z)
            for (int x = s.box.min.x; x < s.box.max.x; ++x) {
              if (world.voxel_bounds().Contains({x, y, z})) e.Set({x, y, z}, s.voxels[i]);
              ++i;
            }
        return absl::OkStatus();
      };
      if (absl::Status st = world.Edit(restore).status(); !st.ok()) {
        std::fprintf(stderr, "restore failed: %s\n", st.ToString().c_str());
        std::abort();
      }
    }
    // The current content is the original again (the first box holding a voxel saved it).
    absl::flat_hash_set<Int3> checked;
    for (const Saved& s : saved) {
      size_t i = 0;
      for (int y = s.box.min.y; y < s.box.max.y; ++y)
        for (int z = s.box.min.z; z < s.box.max.z; ++z)
          for (int x = s.box.min.x; x < s.box.max.x; ++x) {
            if (!checked.insert({x, y, z}).second) {
              ++i;
              continue;
            }
            const Voxel v = world.GetVoxel({x, y, z});
            if (v.material != s.voxels[i].material || v.occupancy != s.voxels[i].occupancy) {
              std::fprintf(stderr, "voxel %d,%d,%d not restored: %d/%d, was %d/%d\n", x, y, z,
                           v.material, v.occupancy, s.voxels[i].material, s.voxels[i].occupancy);
              std::abort();
            }
            ++i;
          }
    }
    past_version = world.version() - kBack;
    const World::HistoryStats stats = world.history_stats();
    history_bytes = stats.bytes;
    history_versions = stats.versions;
  }
};

EditedScene& Scene() {
  static EditedScene scene;
  return scene;
}

// As InProcessDriver in bench_query_stream.cc: kWindow batches in flight on a WorkerPool.
class Driver {
 public:
  Driver(const std::vector<v1::QueryBatchRequest>& batches, server::QueryEngine engine)
      : batches_(batches), engine_(engine), pool_(kQueryThreads, 1024) {}
  ~Driver() { WaitFor(submitted_); }
  void Step() {
    while (submitted_ - completed_seen_ < size_t(kWindow)) Submit();
    WaitFor(++completed_seen_);
  }
  uint64_t failures() const { return failures_.load(); }

 private:
  void Submit() {
    const v1::QueryBatchRequest* batch = &batches_[submitted_++ % batches_.size()];
    const bool queued = pool_.TrySubmit([this, batch] {
      google::protobuf::Arena arena(server::BatchArenaOptions());
      auto* response = google::protobuf::Arena::CreateMessage<v1::QueryBatchResponse>(&arena);
      server::ExecuteBatch(engine_, limits_, batch_limits_, *batch, absl::InfiniteFuture(), nullptr,
                           response);
      if (response->code() != 0 && failures_.fetch_add(1) == 0) {
        std::fprintf(stderr, "batch failed: %s\n", response->message().c_str());
      }
      benchmark::DoNotOptimize(response);
      std::lock_guard<std::mutex> lock(mu_);
      ++completed_;
      cv_.notify_one();
    });
    if (!queued) std::abort();
  }
  void WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return completed_ >= n; });
  }

  const std::vector<v1::QueryBatchRequest>& batches_;
  server::QueryEngine engine_;
  const server::ServiceLimits limits_;
  const server::BatchLimits batch_limits_;
  server::WorkerPool pool_;
  std::atomic<uint64_t> failures_{0};
  size_t submitted_ = 0, completed_seen_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t completed_ = 0;
};

// CPU time of the whole process in microseconds (as bench_query_stream.cc): per batch it tells
// what the work costs apart from how much of the machine other processes left us.
double ProcessCpuMicros() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e6 + double(t.tv_nsec) * 1e-3;
}

void Run(benchmark::State& state, bool past) {
  EditedScene& scene = Scene();
  const int size = int(state.range(0));
  const std::vector<v1::QueryBatchRequest> batches =
      RaycastBatches(size, past ? &scene.past_version : nullptr);
  Driver driver(batches, server::QueryEngine{BenchCaveIndex(), BenchCaveCache()});
  // Three warm-up passes: a chunk a ray meets first gets its record on the second meeting, and
  // meetings chain (world_scenes.h, WarmRays).
  for (size_t b = 0; b < 3 * batches.size(); ++b) driver.Step();
  const double cpu_start = ProcessCpuMicros();
  for (auto _ : state) driver.Step();
  state.counters["cpu_us_per_batch"] =
      (ProcessCpuMicros() - cpu_start) / double(state.iterations());
  if (driver.failures() != 0) state.SkipWithError("a batch failed");
  state.SetItemsProcessed(state.iterations() * size);
  state.counters["query_threads"] = kQueryThreads;
  state.counters["versions_back"] =
      past ? double(BenchCaveWorld().version() - scene.past_version) : 0;
  state.counters["history_bytes_per_edit"] =
      double(scene.history_bytes) / double(std::max<size_t>(scene.history_versions, 1));
  state.counters["past_mask_bytes"] = double(BenchCaveIndex().past_record_bytes());
  state.counters["past_mesh_bytes"] = double(BenchCaveCache().stats().past_bytes);
}

// Every batch reads the version kBack edits back.
void BM_RaycastAtPastVersion(benchmark::State& state) { Run(state, true); }
BENCHMARK(BM_RaycastAtPastVersion)->Arg(1)->Arg(16)->Arg(256)->UseRealTime();

// The same batches at the current version after the edits (the content BM_RaycastInProcess reads,
// now with history kept): what retention alone costs the newest version.
void BM_RaycastAtCurrentVersionWithHistory(benchmark::State& state) { Run(state, false); }
BENCHMARK(BM_RaycastAtCurrentVersionWithHistory)->Arg(1)->Arg(16)->Arg(256)->UseRealTime();

}  // namespace
}  // namespace voxcol::bench
