#include "core/broadphase/probe.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace voxcol {
namespace {

// Appends the voxels of one chunk's hits (bit set in hits_solid or hits_water for slice y).
void CollectVoxels(const Int3& origin, int y, uint64_t hits_solid, uint64_t hits_water,
                   uint32_t max_voxels, ProbeResult* result) {
  uint64_t hits = hits_solid | hits_water;
  while (hits != 0) {
    if (result->voxels.size() >= max_voxels) {
      result->voxels_truncated = true;
      return;
    }
    int bit = __builtin_ctzll(hits);
    uint8_t classes =
        uint8_t((hits_solid >> bit & 1) * kClassSolid | (hits_water >> bit & 1) * kClassWater);
    Int3 local{bit & (kChunkSize - 1), y, bit >> kChunkBits};
    result->voxels.push_back({origin + local, classes});
    hits &= hits - 1;
  }
}

// Tests one chunk's slices in the local voxel range [lo, hi] (inclusive); returns the classes hit.
uint8_t OverlapChunk(const MaskRecord& record, const Int3& origin, const Int3& lo, const Int3& hi,
                     uint32_t max_voxels, ProbeResult* result) {
  const uint64_t xz = SliceRectMask(lo.x, hi.x, lo.z, hi.z);
  const uint64_t* solid = record.solid();
  const uint64_t* water = record.water();
  uint64_t any_solid = 0, any_water = 0;
  for (int y = lo.y; y <= hi.y; ++y) {
    uint64_t s = solid[y] & xz, w = water[y] & xz;
    any_solid |= s;
    any_water |= w;
    if (max_voxels > 0 && (s | w) != 0) CollectVoxels(origin, y, s, w, max_voxels, result);
  }
  return uint8_t((any_solid != 0) * kClassSolid | (any_water != 0) * kClassWater);
}

}  // namespace

Aabb ProbeShape::Bounds() const {
  Vec3 h = is_sphere ? Vec3{radius, radius, radius} : half_extents;
  return {center - h, center + h};
}

void Probe(const BroadphaseIndex& index, const ProbeShape& shape, const ProbeSettings& settings,
           ProbeResult* result) {
  ProbeAabb(index, shape.Bounds(), settings, result);
}

void ProbeResult::Clear() {
  may_touch_solid = may_touch_water = voxels_truncated = false;
  chunks.clear();
  voxels.clear();
  chunks_visited = 0;
}

IntBox ProbeVoxelRange(const World& world, const Aabb& box) {
  // Clamp to a margin around the world first: far-away boxes (long sweeps) must not overflow the
  // float-to-int conversion, and clamping does not change the clipped result.
  const Aabb wb = world.world_bounds();
  const Vec3 margin = Vec3{2, 2, 2} * world.voxel_size();
  const Vec3 lo_clamped = Min(Max(box.min, wb.min - margin), wb.max + margin);
  const Vec3 hi_clamped = Min(Max(box.max, wb.min - margin), wb.max + margin);
  Int3 lo = world.VoxelAt(lo_clamped) - Int3{1, 1, 1};
  Int3 hi =
      world.VoxelAt(hi_clamped) + Int3{2, 2, 2};  // inclusive max voxel, grown by one, exclusive
  return IntBox{lo, hi}.Intersect(world.voxel_bounds());
}

void ProbeVoxels(const BroadphaseIndex& index, const IntBox& voxels, const ProbeSettings& settings,
                 ProbeResult* result) {
  if (voxels.Empty()) return;
  const bool early_out = !settings.collect_chunks && settings.max_voxels == 0;
  BroadphaseIndex::ReadScope scope(index);
  const Int3 last = voxels.max - Int3{1, 1, 1};
  const ChunkKey c0 = ChunkOf(voxels.min), c1 = ChunkOf(last);
  for (int cy = c0.y; cy <= c1.y; ++cy)
    for (int cz = c0.z; cz <= c1.z; ++cz)
      for (int cx = c0.x; cx <= c1.x; ++cx) {
        const ChunkKey key{cx, cy, cz};
        const MaskRecord& record = index.Get(key, scope);
        ++result->chunks_visited;
        if (!record.MayTouch(kClassAny)) continue;
        // Clamp the voxel range to this chunk, in local coordinates.
        const Int3 origin = ChunkOrigin(key);
        const Int3 lo{std::max(voxels.min.x - origin.x, 0), std::max(voxels.min.y - origin.y, 0),
                      std::max(voxels.min.z - origin.z, 0)};
        const Int3 hi{std::min(last.x - origin.x, kChunkSize - 1),
                      std::min(last.y - origin.y, kChunkSize - 1),
                      std::min(last.z - origin.z, kChunkSize - 1)};
        uint8_t hit = OverlapChunk(record, origin, lo, hi, settings.max_voxels, result);
        if (hit == 0) continue;
        result->may_touch_solid |= (hit & kClassSolid) != 0;
        result->may_touch_water |= (hit & kClassWater) != 0;
        if (settings.collect_chunks) result->chunks.push_back({key, hit});
        if (early_out && result->may_touch_solid && result->may_touch_water) return;
      }
}

void ProbeAabb(const BroadphaseIndex& index, const Aabb& box, const ProbeSettings& settings,
               ProbeResult* result) {
  result->Clear();
  ProbeVoxels(index, ProbeVoxelRange(index.world(), box), settings, result);
}

void ProbeSphere(const BroadphaseIndex& index, const Vec3& center, float radius,
                 const ProbeSettings& settings, ProbeResult* result) {
  const Vec3 r{radius, radius, radius};
  ProbeAabb(index, {center - r, center + r}, settings, result);
}

}  // namespace voxcol
