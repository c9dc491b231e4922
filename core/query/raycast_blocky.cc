#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/broadphase/ray_chunk_walk.h"
#include "core/query/raycast.h"

namespace voxcol {

namespace {

// The ray in voxel units, shared by every chunk span.
struct VoxelRay {
  Vec3 o;       // origin, voxel units
  Vec3 dir;     // unit direction
  int step[3];  // -1, 0 or +1 per axis
  float t_end;  // voxel units
  bool (*filled)(Voxel);
};

bool FilledSolid(Voxel v) { return IsSolid(v); }
bool FilledSolidOrWater(Voxel v) { return IsSolid(v) || IsWater(v); }
bool FilledWater(Voxel v) { return IsWater(v); }

// t where the ray leaves `voxel` along `axis` (from the face position, matching RayChunkWalk).
float VoxelFaceT(const VoxelRay& r, const Int3& voxel, int axis) {
  if (r.step[axis] == 0) return std::numeric_limits<float>::infinity();
  return (float(voxel[axis] + (r.step[axis] > 0)) - r.o[axis]) / r.dir[axis];
}

// First voxel of a span: the origin voxel, or the voxel on the entered face of the chunk. The
// other coordinates come from the entry point, clamped into the chunk against rounding.
Int3 SpanEntryVoxel(const VoxelRay& r, const RayChunkSpan& span, const Int3& start_voxel) {
  if (span.entered_axis < 0) return start_voxel;
  Int3 lo = ChunkOrigin(span.key), voxel;
  for (int a = 0; a < 3; ++a) {
    int v = int(std::floor(r.o[a] + span.t_enter * r.dir[a]));
    voxel[a] = std::clamp(v, lo[a], lo[a] + kChunkSize - 1);
  }
  int a = span.entered_axis;
  voxel[a] = r.step[a] > 0 ? lo[a] : lo[a] + kChunkSize - 1;
  return voxel;
}

// Voxel DDA inside one chunk span. Returns true on a hit (filling `hit`), false when the ray
// leaves the chunk or ends. Only voxels whose mask bit is set are read.
bool WalkSpan(const VoxelRay& r, const World& world, const RayChunkSpan& span,
              const Int3& start_voxel, uint8_t classes, RaycastHit* hit, uint32_t* voxels) {
  uint64_t masks[kChunkSize];
  span.record->Combined(classes, masks);
  // Partial records pair their masks with the snapshot they were built from; FULL ones skip
  // nothing, so the live chunk is as good as any.
  ChunkPtr live;
  if (span.record->chunk() == nullptr) {
    // FULL records (and those of chunks whose stored record is corrupt) carry no snapshot.
    absl::StatusOr<ChunkPtr> loaded = world.LoadChunk(span.key);
    if (!loaded.ok()) {
      hit->load_status = loaded.status();
      return true;
    }
    live = *std::move(loaded);
  }
  const Chunk& chunk = span.record->chunk() ? *span.record->chunk() : *live;
  const Int3 lo = ChunkOrigin(span.key);
  Int3 voxel = SpanEntryVoxel(r, span, start_voxel);
  float t_max[3] = {VoxelFaceT(r, voxel, 0), VoxelFaceT(r, voxel, 1), VoxelFaceT(r, voxel, 2)};
  float t = span.t_enter;
  int entered = span.entered_axis;
  for (;;) {
    ++*voxels;
    Int3 local = voxel - lo;
    if (masks[local.y] >> (local.x | local.z << kChunkBits) & 1) {
      Voxel v = chunk.At(local);
      if (r.filled(v)) {
        hit->hit = true;
        hit->distance = t;  // voxel units; scaled by the caller
        hit->voxel = voxel;
        hit->value = v;
        hit->started_inside = entered < 0;
        if (entered >= 0) hit->normal[entered] = float(-r.step[entered]);
        return true;
      }
    }
    int a = t_max[0] < t_max[1] ? (t_max[0] < t_max[2] ? 0 : 2) : (t_max[1] < t_max[2] ? 1 : 2);
    t = t_max[a];
    voxel[a] += r.step[a];
    if (t > r.t_end || voxel[a] < lo[a] || voxel[a] >= lo[a] + kChunkSize) return false;
    t_max[a] = VoxelFaceT(r, voxel, a);
    entered = a;
  }
}

}  // namespace

namespace {

// The broadphase chunk walk with a voxel DDA inside each visited chunk; `filled` decides which
// voxels stop the ray and `classes` which masks may hold them.
RaycastHit WalkFilled(const BroadphaseIndex& index, const RaycastInput& ray, uint8_t classes,
                      bool (*filled)(Voxel), QueryStats* stats) {
  const World& world = index.world();
  const float h = world.voxel_size();
  VoxelRay r;
  r.dir = Normalize(ray.direction);
  r.o = ray.origin * (1.0f / h);
  r.t_end = ray.max_distance / h;
  r.filled = filled;
  for (int a = 0; a < 3; ++a) r.step[a] = r.dir[a] > 0 ? 1 : (r.dir[a] < 0 ? -1 : 0);
  const Int3 start_voxel = world.VoxelAt(ray.origin);

  BroadphaseIndex::ReadScope scope(index);
  RayChunkWalk walk(index, scope, r.o, start_voxel, r.dir, r.t_end, classes);
  RaycastHit result;
  RayChunkSpan span;
  uint32_t voxels = 0, chunks = 0;
  while (walk.Next(&span)) {
    ++chunks;
    if (!WalkSpan(r, world, span, start_voxel, classes, &result, &voxels)) continue;
    if (!result.load_status.ok()) break;
    result.distance *= h;
    result.position = ray.origin + r.dir * result.distance;
    result.chunk = span.key;
    break;
  }
  if (stats) {
    stats->voxels_visited += voxels;
    stats->chunks_visited += chunks;
  }
  return result;
}

}  // namespace

RaycastHit RaycastBlocky(const BroadphaseIndex& index, const RaycastInput& ray,
                         const RaycastSettings& settings, QueryStats* stats) {
  if (settings.water == WaterMode::kStopAtSurface) {
    return WalkFilled(index, ray, kClassAny, FilledSolidOrWater, stats);
  }
  return WalkFilled(index, ray, kClassSolid, FilledSolid, stats);
}

RaycastHit RaycastWaterSurface(const BroadphaseIndex& index, const RaycastInput& ray,
                               QueryStats* stats) {
  return WalkFilled(index, ray, kClassWater, FilledWater, stats);
}

}  // namespace voxcol
