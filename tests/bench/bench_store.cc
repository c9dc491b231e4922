// Durable edit throughput: acknowledged edit batches per second through World::Edit with the
// RocksDB store attached, 1 and 8 concurrent writers. With sync, concurrent writers share the
// WAL sync of their group (group commit); syncs_per_batch shows how much.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>

#include "core/store/store.h"
#include "core/voxel/edit.h"
#include "core/worldgen/cave_generator.h"
#include "tests/core/store/store_test_util.h"

namespace voxcol {
namespace {

struct DurableWorld {
  testing::ScratchDir dir;
  testing::StoredCaveWorld world;
  std::atomic<uint64_t> next{0};
};

DurableWorld* shared_world = nullptr;

// One small FillBall per iteration, each at its own place so every batch changes 1-8 chunks.
void RunEditBatches(benchmark::State& state, bool sync) {
  if (state.thread_index() == 0) {
    shared_world = new DurableWorld;
    shared_world->world = testing::OpenStoredCaveWorld(shared_world->dir.path(), sync);
  }
  // Google Benchmark starts the timed loop of all threads together, after thread 0's setup.
  for (auto _ : state) {
    uint64_t i = shared_world->next.fetch_add(1);
    FillBallParams ball{{float(int(i % 29) * 4 - 56), float(int(i / 29 % 19) * 4 - 36),
                         float(int(i / 551 % 29) * 4 - 56)},
                        1.5f,
                        uint8_t(6 + i % 200),
                        EditMode::kSet};
    absl::StatusOr<EditResult> r = shared_world->world.world->Edit(
        [&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); });
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    // Thread 0 reports for all: the counters are summed over threads otherwise.
    double batches = double(shared_world->next.load());
    state.counters["syncs_per_batch"] =
        double(shared_world->world.store->batches_written()) / batches;
    delete shared_world;
    shared_world = nullptr;
  }
}

void BM_EditBatchDurable(benchmark::State& state) { RunEditBatches(state, /*sync=*/true); }
BENCHMARK(BM_EditBatchDurable)->Threads(1)->Threads(8)->UseRealTime();

void BM_EditBatchNoSync(benchmark::State& state) { RunEditBatches(state, /*sync=*/false); }
BENCHMARK(BM_EditBatchNoSync)->Threads(1)->Threads(8)->UseRealTime();

}  // namespace
}  // namespace voxcol
