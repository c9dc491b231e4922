// Front-to-back walk over the chunks a ray crosses that may hold geometry.
//
// Amanatides & Woo, "A Fast Voxel Traversal Algorithm for Ray Tracing" (Eurographics 1987), on the
// 8^3 chunk grid. Chunks whose masks are empty for the requested classes are stepped over without
// reading any voxel, so rays through open air or water cost one class-table read per chunk.
#pragma once

#include <cstdint>

#include "core/broadphase/broadphase_index.h"
#include "core/geometry/vec3.h"

namespace voxcol {

struct RayChunkSpan {
  ChunkKey key;
  float t_enter = 0;      // voxel units along the unit direction; where the ray enters the chunk
  float t_exit = 0;       // where it leaves the chunk (or t_end, whichever is first)
  int entered_axis = -1;  // axis crossed to enter; -1 for the chunk holding the origin
  const MaskRecord* record = nullptr;  // valid while the walk's ReadScope lives
};

class RayChunkWalk {
 public:
  // `origin` in voxel units (world position / voxel size) lying in voxel `start_voxel`; `dir` of
  // unit length; the walk ends at t_end (voxel units) or the world bounds. `classes` are the
  // MaskClass bits that make a chunk worth reporting. `scope` must outlive the walk.
  RayChunkWalk(const BroadphaseIndex& index, const BroadphaseIndex::ReadScope& scope,
               const Vec3& origin, const Int3& start_voxel, const Vec3& dir, float t_end,
               uint8_t classes);

  // The next chunk along the ray that may hold geometry; false when the ray is done.
  bool Next(RayChunkSpan* span);

  // Chunks stepped through so far, reported or skipped.
  uint32_t chunks_stepped() const { return chunks_stepped_; }

 private:
  // t (voxel units) where the ray crosses the far face of the current chunk along `axis`.
  float FaceT(int axis) const;

  const BroadphaseIndex& index_;
  const BroadphaseIndex::ReadScope& scope_;
  IntBox bounds_;  // world chunk bounds
  Vec3 origin_, dir_;
  float t_end_;
  uint8_t classes_;
  ChunkKey key_;
  int step_[3];
  float t_max_[3];
  float t_ = 0;
  int entered_axis_ = -1;
  bool done_ = false;
  uint32_t chunks_stepped_ = 0;
};

}  // namespace voxcol
