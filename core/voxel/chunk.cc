#include "core/voxel/chunk.h"

#include <mutex>

namespace voxcol {

bool Chunk::IsUniform() const {
  for (const Voxel& v : voxels) {
    if (v != voxels[0]) return false;
  }
  return true;
}

namespace {
// Interned uniform chunks by material * 256 + occupancy; slots are written once, under the mutex.
std::once_flag interned_once;
std::array<ChunkPtr, 256 * 256>* interned = nullptr;
}  // namespace

ChunkPtr UniformChunk(Voxel v) {
  // One interned chunk per voxel value: deep rock and open sky cost one pointer per chunk.
  static std::mutex mu;
  std::call_once(interned_once, [] { interned = new std::array<ChunkPtr, 256 * 256>(); });
  std::lock_guard<std::mutex> lock(mu);
  ChunkPtr& slot = (*interned)[v.material * 256 + v.occupancy];
  if (!slot) {
    auto chunk = std::make_shared<Chunk>();
    chunk->voxels.fill(v);
    slot = std::move(chunk);
  }
  return slot;
}

const ChunkPtr& InternedUniformChunk(Voxel v) {
  return (*interned)[v.material * 256 + v.occupancy];
}

}  // namespace voxcol
