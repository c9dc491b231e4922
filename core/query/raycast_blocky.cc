#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/query/raycast.h"

namespace voxcol {

absl::Status ValidateRay(const World& world, const RayInput& ray, const QueryLimits& limits) {
  if (!IsFinite(ray.origin)) return absl::InvalidArgumentError("origin must be finite (no NaN or infinity)");
  if (!world.ContainsPoint(ray.origin)) {
    return absl::InvalidArgumentError(absl::StrCat("origin (", ray.origin.x, ", ", ray.origin.y, ", ",
                                                   ray.origin.z, ") is outside the world bounds"));
  }
  if (!IsFinite(ray.direction)) {
    return absl::InvalidArgumentError("direction must be finite (no NaN or infinity)");
  }
  // Squared length below ~1e-24 cannot be normalized reliably in float.
  if (!(LengthSq(ray.direction) > 1e-24f)) return absl::InvalidArgumentError("direction must be non-zero");
  if (!std::isfinite(ray.max_distance) || ray.max_distance <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_distance must be finite and > 0, got ", ray.max_distance));
  }
  if (ray.max_distance > limits.max_ray_distance) {
    return absl::InvalidArgumentError(absl::StrCat("max_distance ", ray.max_distance,
                                                   " exceeds the configured maximum ", limits.max_ray_distance));
  }
  return absl::OkStatus();
}

namespace {

// The Amanatides-Woo walk; `filled` decides which voxels stop the ray.
template <typename Filled>
RayHit WalkVoxels(const World& world, const RayInput& ray, const Filled& filled, QueryStats* stats) {
  const float h = world.voxel_size();
  const Vec3 dir = Normalize(ray.direction);
  const Vec3 o = ray.origin * (1.0f / h);  // voxel units
  const float t_end = ray.max_distance / h;
  const IntBox bounds = world.voxel_bounds();

  Int3 voxel = world.VoxelAt(ray.origin);
  Int3 step;
  float t_max[3], t_delta[3];
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int a = 0; a < 3; ++a) {
    if (dir[a] > 0) {
      step[a] = 1;
      t_max[a] = (float(voxel[a] + 1) - o[a]) / dir[a];
      t_delta[a] = 1.0f / dir[a];
    } else if (dir[a] < 0) {
      step[a] = -1;
      t_max[a] = (float(voxel[a]) - o[a]) / dir[a];
      t_delta[a] = -1.0f / dir[a];
    } else {
      step[a] = 0;
      t_max[a] = kInf;
      t_delta[a] = kInf;
    }
  }

  RayHit result;
  ChunkKey cached_key = ChunkOf(voxel);
  ChunkPtr chunk = world.GetChunk(cached_key);
  uint32_t voxels = 0, chunks = 1;
  float t = 0;
  int entered_axis = -1;
  while (bounds.Contains(voxel)) {
    ChunkKey key = ChunkOf(voxel);
    if (key != cached_key) {
      cached_key = key;
      chunk = world.GetChunk(key);
      ++chunks;
    }
    ++voxels;
    Voxel v = chunk->At(LocalOf(voxel));
    if (filled(v)) {
      result.hit = true;
      result.distance = t * h;
      result.position = ray.origin + dir * result.distance;
      result.voxel = voxel;
      result.value = v;
      result.chunk = key;
      if (entered_axis < 0) {
        result.started_inside = true;
      } else {
        result.normal[entered_axis] = float(-step[entered_axis]);
      }
      break;
    }
    // Advance to the nearest voxel boundary.
    int a = t_max[0] < t_max[1] ? (t_max[0] < t_max[2] ? 0 : 2) : (t_max[1] < t_max[2] ? 1 : 2);
    t = t_max[a];
    if (t > t_end) break;
    voxel[a] += step[a];
    t_max[a] += t_delta[a];
    entered_axis = a;
  }
  if (stats) {
    stats->voxels_visited += voxels;
    stats->chunks_visited += chunks;
  }
  return result;
}

}  // namespace

RayHit RaycastBlocky(const World& world, const RayInput& ray, const RaySettings& settings, QueryStats* stats) {
  if (settings.water == WaterMode::kStopAtSurface) {
    return WalkVoxels(world, ray, [](Voxel v) { return IsSolid(v) || IsWater(v); }, stats);
  }
  return WalkVoxels(world, ray, [](Voxel v) { return IsSolid(v); }, stats);
}

RayHit RaycastWaterSurface(const World& world, const RayInput& ray, QueryStats* stats) {
  return WalkVoxels(world, ray, [](Voxel v) { return IsWater(v); }, stats);
}

}  // namespace voxcol
