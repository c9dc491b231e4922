#include "core/voxel/chunk.h"

#include <mutex>

namespace voxcol {

bool Chunk::IsUniform() const {
  for (const Voxel& v : voxels) {
    if (v != voxels[0]) return false;
  }
  return true;
}

ChunkPtr UniformChunk(Voxel v) {
  // One interned chunk per voxel value: deep rock and open sky cost one pointer per chunk.
  static std::once_flag once;
  static std::array<ChunkPtr, 256 * 256>* table = nullptr;
  static std::mutex mu;
  std::call_once(once, [] { table = new std::array<ChunkPtr, 256 * 256>(); });
  std::lock_guard<std::mutex> lock(mu);
  ChunkPtr& slot = (*table)[v.material * 256 + v.occupancy];
  if (!slot) {
    auto chunk = std::make_shared<Chunk>();
    chunk->voxels.fill(v);
    slot = std::move(chunk);
  }
  return slot;
}

}  // namespace voxcol
