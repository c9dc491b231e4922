// Worlds shared by tests and benchmarks: the default cave world and analytic worlds.
#pragma once

#include <functional>
#include <memory>

#include "core/voxel/world.h"
#include "core/worldgen/cave_generator.h"

namespace voxcol::testing {

// A cave world with the default generator parameters.
inline std::unique_ptr<World> MakeCaveWorld(uint64_t seed, Int3 size = {128, 96, 128}) {
  WorldConfig config{size, 1.0f, seed};
  return std::make_unique<World>(config,
                                 std::make_unique<CaveGenerator>(seed, WorldVoxelBounds(config)));
}

// Generator from a function of the voxel index, for analytic worlds.
class FunctionGenerator : public ChunkGenerator {
 public:
  explicit FunctionGenerator(std::function<Voxel(const Int3&)> f) : f_(std::move(f)) {}
  void Generate(const ChunkKey& key, Chunk* out) const override {
    Int3 origin = ChunkOrigin(key);
    for (int y = 0; y < kChunkSize; ++y)
      for (int z = 0; z < kChunkSize; ++z)
        for (int x = 0; x < kChunkSize; ++x)
          out->At(x, y, z) = Canonical(f_(origin + Int3{x, y, z}));
  }
  uint32_t Version() const override { return 0; }

 private:
  std::function<Voxel(const Int3&)> f_;
};

inline std::unique_ptr<World> MakeFunctionWorld(std::function<Voxel(const Int3&)> f,
                                                Int3 size = {64, 64, 64}, float voxel_size = 1.0f) {
  WorldConfig config{size, voxel_size, 0};
  return std::make_unique<World>(config, std::make_unique<FunctionGenerator>(std::move(f)));
}

inline std::unique_ptr<World> MakeEmptyWorld(Int3 size = {64, 64, 64}, float voxel_size = 1.0f) {
  return MakeFunctionWorld([](const Int3&) { return Voxel{}; }, size, voxel_size);
}

}  // namespace voxcol::testing
