#include "core/broadphase/ray_chunk_walk.h"

#include <limits>

namespace voxcol {

RayChunkWalk::RayChunkWalk(const BroadphaseIndex& index, const BroadphaseIndex::ReadScope& scope,
                           const Vec3& origin, const Int3& start_voxel, const Vec3& dir,
                           float t_end, uint8_t classes)
    : index_(index),
      scope_(scope),
      bounds_(index.world().chunk_bounds()),
      origin_(origin),
      dir_(dir),
      t_end_(t_end),
      classes_(classes),
      key_(ChunkOf(start_voxel)) {
  for (int a = 0; a < 3; ++a) {
    step_[a] = dir[a] > 0 ? 1 : (dir[a] < 0 ? -1 : 0);
    t_max_[a] = FaceT(a);
  }
  done_ = !bounds_.Contains(key_);
}

float RayChunkWalk::FaceT(int axis) const {
  if (step_[axis] == 0) return std::numeric_limits<float>::infinity();
  // Computed from the face position, not accumulated, so the voxel walk inside a chunk (which
  // uses the same formula) agrees exactly on where the chunk ends.
  int face = (key_[axis] + (step_[axis] > 0)) * kChunkSize;
  return (float(face) - origin_[axis]) / dir_[axis];
}

bool RayChunkWalk::Next(RayChunkSpan* span) {
  while (!done_) {
    ++chunks_stepped_;
    const ChunkKey key = key_;
    const float t_enter = t_;
    const int entered = entered_axis_;
    // Step to the next chunk: the nearest face wins.
    int a =
        t_max_[0] < t_max_[1] ? (t_max_[0] < t_max_[2] ? 0 : 2) : (t_max_[1] < t_max_[2] ? 1 : 2);
    const float t_exit = t_max_[a] < t_end_ ? t_max_[a] : t_end_;
    t_ = t_max_[a];
    key_[a] += step_[a];
    t_max_[a] = FaceT(a);
    entered_axis_ = a;
    done_ = t_ > t_end_ || !bounds_.Contains(key_);
    // The class table answers for skipped chunks without loading their slot or record.
    if (!index_.MayTouch(key, classes_, scope_)) continue;
    *span = {key, t_enter, t_exit, entered, &index_.Get(key, scope_)};
    return true;
  }
  return false;
}

}  // namespace voxcol
