// voxcol_store_populate: writes N edited chunks into a server data directory, for measuring how
// fast a server restarts on a large stored world (scripts/measure-restart.sh).
//
//   voxcol_store_populate --data_dir=DIR [--chunks=100000]
//
// The world is 1024x192x1024 voxels (seed 1); the chunks fill a block from the world's minimum
// corner, each with its own non-uniform content. Writes go through the same Store as the server
// (one WriteBatch per 1000 chunks, not synced) and the tool exits without closing the store, like
// a crash, so the next open replays the write-ahead log.
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/worldgen/cave_generator.h"
#include "server/world/data_dir.h"

ABSL_FLAG(std::string, data_dir, "",
          "server data directory to create (must not hold another world)");
ABSL_FLAG(int, chunks, 100000, "edited chunks to write");

namespace voxcol {
namespace {

ChunkPtr PatternChunk(int i) {
  auto chunk = std::make_shared<Chunk>();
  for (int v = 0; v < kChunkVoxels; ++v) {
    bool solid = (v / 64) < 2 + (i + v / 8) % 5;  // a bumpy floor, different per chunk
    chunk->voxels[v] = solid ? Voxel{uint8_t(2 + i % 4), uint8_t(255 - v % 7)} : Voxel{};
  }
  return chunk;
}

int Populate(const std::string& dir, int count) {
  store::StoreOptions options;
  options.sync = false;
  WorldConfig config{{1024, 192, 1024}, 1.0f, 1};
  absl::StatusOr<server::DataDir> data =
      server::OpenDataDir(dir, config, CaveGenerator::kVersion, options);
  if (!data.ok()) {
    std::fprintf(stderr, "%s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  const IntBox chunks = {ChunkOf(WorldVoxelBounds(data->world.config).min),
                         ChunkOf(WorldVoxelBounds(data->world.config).max)};
  const Int3 extent = chunks.max - chunks.min;
  std::vector<std::pair<ChunkKey, ChunkPtr>> batch;
  for (int i = 0; i < count; ++i) {
    ChunkKey key =
        chunks.min + Int3{i % extent.x, (i / extent.x) % extent.y, i / (extent.x * extent.y)};
    batch.emplace_back(key, PatternChunk(i));
    if (batch.size() == 1000 || i + 1 == count) {
      absl::Status s = data->store->WriteChunks(batch, uint64_t(i / 1000 + 1));
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return 1;
      }
      batch.clear();
    }
  }
  std::printf("wrote %d chunks to %s\n", count, dir.c_str());
  std::fflush(stdout);
  // Leave like a crash (no flush, no close): the next open replays the WAL, the slow case.
  std::_Exit(0);
}

}  // namespace
}  // namespace voxcol

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_data_dir).empty()) {
    std::fprintf(stderr, "usage: voxcol_store_populate --data_dir=DIR [--chunks=N]\n");
    return 2;
  }
  return voxcol::Populate(absl::GetFlag(FLAGS_data_dir), absl::GetFlag(FLAGS_chunks));
}
