// The generator's content of a World: chunks generated whole on first touch, and read without
// generating whole chunks: proofs that a box is uniform or on one side of the surface (for
// queries that would otherwise generate a region to find it empty), and parts and single voxels
// of chunks that are the generator's (for the broadphase's records and the mesher's neighbours).
#include <cassert>
#include <memory>

#include "core/voxel/remembered_parts.h"
#include "core/voxel/world.h"

namespace voxcol {

std::atomic<uint64_t> world_internal::world_epoch{0};

namespace {

// Sets the voxels of `part` (world voxels, a box inside the chunk `chunk` holds) outside `bounds`
// to air. A world whose size is not a multiple of the chunk size on an axis has chunks straddling
// its box there; a generator fills whole chunks, and terrain outside the box would be meshed (and
// hit by rays) while voxel reads call it air.
void ClearOutside(const IntBox& bounds, const IntBox& part, Chunk* chunk) {
  for (int32_t y = part.min.y; y < part.max.y; ++y)
    for (int32_t z = part.min.z; z < part.max.z; ++z)
      for (int32_t x = part.min.x; x < part.max.x; ++x) {
        const Int3 v{x, y, z};
        if (!bounds.Contains(v)) chunk->At(LocalOf(v)) = Voxel{};
      }
}

}  // namespace

ChunkPtr World::Generated(const ChunkKey& key) const {
  const IntBox box{ChunkOrigin(key), ChunkOrigin(key) + Int3{kChunkSize, kChunkSize, kChunkSize}};
  const bool inside = voxel_bounds_.ContainsBox(box);
  // Uniform chunks the generator proves so need no voxels generated (outside the world box only
  // air stays uniform after ClearOutside).
  Voxel fill;
  if (generator_->ProvenUniform(box, &fill) && (inside || fill == Voxel{}))
    return UniformChunk(fill);
  auto chunk = std::make_shared<Chunk>();
  generator_->Generate(key, chunk.get());
  if (!inside) ClearOutside(voxel_bounds_, box, chunk.get());
  return chunk->IsUniform() ? UniformChunk(chunk->voxels[0]) : ChunkPtr(std::move(chunk));
}

bool World::ProvenUniform(const IntBox& box, Voxel* fill) const {
  // Outside the world box only air stays uniform (as in Generated).
  return generator_->ProvenUniform(box, fill) &&
         (*fill == Voxel{} || voxel_bounds_.ContainsBox(box));
}

bool World::GeneratorsOnly(const IntBox& box) const {
  const ChunkKey first = ChunkOf(box.min), last = ChunkOf(box.max - Int3{1, 1, 1});
  for (int32_t y = first.y; y <= last.y; ++y)
    for (int32_t z = first.z; z <= last.z; ++z)
      for (int32_t x = first.x; x <= last.x; ++x) {
        absl::StatusOr<ChunkPtr> chunk = PeekChunk({x, y, z});
        if (!chunk.ok() || *chunk != nullptr) return false;  // edited, stored or resident
      }
  return true;
}

bool World::ProvenUntouched(const IntBox& box, Voxel* fill) const {
  const IntBox inside = box.Intersect(voxel_bounds_);
  if (inside.Empty()) {
    *fill = Voxel{};
    return true;
  }
  // The voxels outside the world box, if any, are air.
  return GeneratorsOnly(inside) && generator_->ProvenUniform(inside, fill) &&
         (voxel_bounds_.ContainsBox(box) || *fill == Voxel{});
}

bool World::ProvenUntouchedSide(const IntBox& box, bool* solid) const {
  const IntBox inside = box.Intersect(voxel_bounds_);
  if (inside.Empty()) {
    *solid = false;
    return true;
  }
  // The voxels outside the world box, if any, are air: not solid.
  return GeneratorsOnly(inside) && generator_->ProvenSide(inside, solid) &&
         (voxel_bounds_.ContainsBox(box) || !*solid);
}

void World::GeneratePart(const ChunkKey& key, const IntBox& part, Chunk* scratch) const {
  assert(!part.Empty() && ChunkOf(part.min) == key && ChunkOf(part.max - Int3{1, 1, 1}) == key);
  // On the heap: static TLS comes out of every thread's stack, and some threads' stacks are small
  // (the metrics server's workers overflowed with this in TLS).
  thread_local std::unique_ptr<world_internal::RememberedParts> remembered;
  if (remembered == nullptr) remembered = std::make_unique<world_internal::RememberedParts>();
  if (remembered->Find(this, key, part, scratch)) return;
  generator_->GeneratePart(key, part, scratch);
  if (!voxel_bounds_.ContainsBox(part)) ClearOutside(voxel_bounds_, part, scratch);
  remembered->Add(this, key, part, *scratch);
}

Voxel World::GeneratedVoxel(const ChunkKey& key, const Int3& voxel) const {
  assert(ChunkOf(voxel) == key);
  if (!voxel_bounds_.Contains(voxel)) return Voxel{};
  // On the heap, as above.
  thread_local std::unique_ptr<Chunk> scratch;
  if (scratch == nullptr) scratch = std::make_unique<Chunk>();
  if (generator_->GeneratesPartsAlone()) {
    generator_->GeneratePart(key, {voxel, voxel + Int3{1, 1, 1}}, scratch.get());
  } else {
    const Int3 origin = ChunkOrigin(key);
    GeneratePart(key, {origin, origin + Int3{kChunkSize, kChunkSize, kChunkSize}}, scratch.get());
  }
  return scratch->At(LocalOf(voxel));
}

}  // namespace voxcol
