#include "core/query/buried_escape.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/query/raycast.h"

namespace voxcol::terrain {

bool BuriedEscape(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& s,
                  float* depth, Vec3* normal, absl::Status* status, QueryStats* stats) {
  const World& world = index.world();
  const Vec3& centre = s.pose.translation;
  if (!IsSolid(world.GetVoxel(world.VoxelAt(centre)))) return false;
  const Aabb bounds = world.world_bounds();
  float best = std::numeric_limits<float>::infinity();
  Vec3 best_dir;
  bool inside = false;
  std::vector<RaycastHit> hits;
  for (int axis = 0; axis < 6; ++axis) {
    Vec3 d;
    d[axis / 2] = axis % 2 == 0 ? 1.0f : -1.0f;
    const float room = axis % 2 == 0 ? bounds.max[axis / 2] - centre[axis / 2]
                                     : centre[axis / 2] - bounds.min[axis / 2];
    if (room <= 0) continue;
    RaycastInput ray{centre, d, std::min(room, 64.0f * world.voxel_size())};
    RaycastSmoothAll(index, cache, ray, RaycastSettings{}, &hits, stats);
    if (!hits.empty() && !hits[0].load_status.ok()) {
      *status = hits[0].load_status;
      return false;
    }
    if (hits.empty() || hits[0].front_face) {
      if (hits.empty() && axis == 2) inside = true;  // solid all the way up: still inside
      continue;
    }
    inside = true;  // the first crossing leaves the solid
    const float reach = Dot(-d, s.Support(-d) - centre);
    if (hits[0].distance + reach < best) best = hits[0].distance + reach, best_dir = d;
  }
  if (!inside) return false;
  if (best == std::numeric_limits<float>::infinity()) {
    // Solid beyond the reach of every probe: out through the top, at least that far.
    best_dir = {0, 1, 0};
    best = 64.0f * world.voxel_size() + Dot(-best_dir, s.Support(-best_dir) - centre);
  }
  *depth = best;
  *normal = best_dir;
  return true;
}

}  // namespace voxcol::terrain
