#include "core/query/smooth_walk.h"

namespace voxcol {
namespace smooth_walk {

bool StretchWithoutSurface(const World& world, const KdRay& ray, float t_end, const ChunkKey& key) {
  // The stretch: the ray clipped to the chunk's mesh box, [8K + 0.5, 8K + 8.5] voxels per axis
  // (every triangle of the chunk lies in it), in double and widened by a sixteenth of a voxel,
  // well above the float error of a triangle test at any coordinate a world reaches. Not the
  // walk's distances: their float error grows with the ray's length. A ray that misses the box
  // meets no triangle of the chunk.
  constexpr double kSlack = 1.0 / 16;
  const double inv_h = 1.0 / double(world.voxel_size());
  const Int3 origin = ChunkOrigin(key);
  double o[3], d[3], t0 = 0, t1 = t_end;
  for (int i = 0; i < 3; ++i) {
    o[i] = double(ray.origin[i]) * inv_h;
    d[i] = double(ray.direction[i]) * inv_h;
    const double lo = origin[i] + 0.5 - kSlack, hi = origin[i] + kChunkSize + 0.5 + kSlack;
    if (d[i] == 0) {
      if (o[i] < lo || o[i] > hi) return true;
      continue;
    }
    const double a = (lo - o[i]) / d[i], b = (hi - o[i]) / d[i];
    t0 = std::max(t0, std::min(a, b));
    t1 = std::min(t1, std::max(a, b));
  }
  if (!(t0 <= t1)) return true;
  // The corners of the cells around a point p (voxel units) are floor(p - 0.5) and one up; a point
  // on a cell face lies in the neighbour cell's face too, whose corners there are the same. The
  // box is clipped to the chunk's cell corners, [8K, 8K + 9).
  IntBox box;
  for (int i = 0; i < 3; ++i) {
    const double a = o[i] + d[i] * t0, b = o[i] + d[i] * t1;
    box.min[i] = std::max(int32_t(std::floor(std::min(a, b) - 0.5)), origin[i]);
    box.max[i] =
        std::min(int32_t(std::floor(std::max(a, b) - 0.5)) + 2, origin[i] + kChunkSize + 1);
  }
  bool solid;
  return !box.Empty() && world.ProvenUntouchedSide(box, &solid);
}

}  // namespace smooth_walk
}  // namespace voxcol
