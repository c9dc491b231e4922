// The chunk walk of the smooth raycasts (raycast_smooth.cc) and what lets a cold ray go without
// the broadphase records of the chunks it crosses.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/base/attributes.h"
#include "absl/base/macros.h"
#include "core/broadphase/broadphase_index.h"
#include "core/kdtree/kd_tree.h"
#include "core/mesh/marching_cubes.h"

namespace voxcol {
namespace smooth_walk {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Front-to-back walk over mesh chunks. Mesh chunk K covers [8K + 0.5, 8K + 8.5] voxels per axis,
// so the grid is the voxel grid shifted by half a voxel and scaled by 8. The key is kept as its
// offset from the low corner of MeshedChunkRange, so that the range and world tests of a step are
// one unsigned compare per axis (an offset below a range wraps to a large one). MeshedChunkRange
// (core/mesh/marching_cubes.h) is the world's chunks and one layer below them. The walk also keeps
// the class table's slot of the key (BroadphaseIndex::SlotOf), so that a step asks the table with
// one add (BroadphaseIndex::TableKnowsAt).
class ChunkWalk {
 public:
  // Every ray builds one, most of them to take a step or two: the axes are unrolled and their
  // signs selected without branches (the values are those of the per-sign expressions).
  ChunkWalk(const BroadphaseIndex& index, const Vec3& origin, const Vec3& dir) {
    const World& world = index.world();
    const IntBox chunks = world.chunk_bounds();
    // MeshedChunkRange(world): InWorld counts on it being the world's chunks and one layer below.
    ABSL_ASSERT((MeshedChunkRange(world).min + Int3{1, 1, 1} == chunks.min &&
                 MeshedChunkRange(world).max == chunks.max));
    const Int3 range_min = chunks.min - Int3{1, 1, 1};
    const std::array<size_t, 3> strides = index.SlotStrides();
    const float s = 1.0f / (kChunkSize * world.voxel_size());
    const Vec3 q = origin * s - Vec3(0.5f, 0.5f, 0.5f) * (1.0f / kChunkSize);
    ChunkKey start;
#pragma GCC unroll 3
    for (int a = 0; a < 3; ++a) {
      const int32_t key = FloorToInt(q[a]);
      start[a] = key;
      min_[a] = Component(range_min, a);
      size_[a] = uint32_t(Component(chunks.max, a) - Component(chunks.min, a));
      offset_[a] = uint32_t(key - min_[a]);  // wraps below the range: out of it
      const float dq = dir[a] * s;
      const bool up = dq > 0, down = dq < 0;
      step_[a] = int(up) - int(down);
      // Modulo 2^64: a step down subtracts the stride.
      slot_step_[a] = (strides[a] & (0 - size_t(up))) - (strides[a] & (0 - size_t(down)));
      // The next boundary is key + 1 going up, key going down; dq == 0 never reaches one (the
      // division's inf or NaN is not selected). |1 / dq| is inf for dq == 0, as wanted.
      const float to_bound = (float(key + int(up)) - q[a]) / dq;
      t_max_[a] = up | down ? to_bound : kInf;
      t_delta_[a] = std::fabs(1.0f / dq);
    }
    slot_ = index.SlotOf(start);
  }
  // Whether the current chunk is in MeshedChunkRange (offsets 0 to size on each axis).
  bool InRange() const {
    return (offset_[0] <= size_[0]) & (offset_[1] <= size_[1]) & (offset_[2] <= size_[2]);
  }
  // Whether the current chunk is one of the world's (offsets 1 to size on each axis).
  bool InWorld() const {
    return (offset_[0] - 1 < size_[0]) & (offset_[1] - 1 < size_[1]) & (offset_[2] - 1 < size_[2]);
  }
  // The class table's slot of key(); a table slot while InWorld.
  size_t slot() const { return slot_; }
  ChunkKey key() const {  // in uint32_t, converted once (a wrapped offset wraps back)
    return {int32_t(offset_[0] + uint32_t(min_[0])), int32_t(offset_[1] + uint32_t(min_[1])),
            int32_t(offset_[2] + uint32_t(min_[2]))};
  }
  // Ray distance (world units) where the walk leaves the current chunk.
  float t_exit() const { return Min(t_max_[0], Min(t_max_[1], t_max_[2])); }
  // Steps to the next chunk across the nearest boundary. The axis is that of
  // x < y ? (x < z ? 0 : 2) : (y < z ? 1 : 2) (x, y, z: t_max_), computed without branches: which
  // boundary comes first is a coin toss per step, and a branch on it mispredicts.
  void Next() {
    const float x = t_max_[0], y = t_max_[1], z = t_max_[2];
    const int x_first = int(x < y) & int(x < z);
    const int a = (1 - x_first) * (2 - int(y < z));
    offset_[a] += uint32_t(step_[a]);
    slot_ += slot_step_[a];
    t_max_[a] += t_delta_[a];
  }

 private:
  // std::min's value, which GCC compiles to a branch here and to one minss this way.
  static float Min(float a, float b) { return b < a ? b : a; }

  int32_t min_[3];                // MeshedChunkRange's low corner
  uint32_t size_[3], offset_[3];  // the world's size in chunks; the key's offset from min_
  int step_[3];
  size_t slot_, slot_step_[3];
  float t_max_[3], t_delta_[3];
};

// The chunks one query met first (BroadphaseIndex::Unmet), the last eight of them: meeting one of
// them again in the same query (the walk after InSolidCell, the voxel reads of a hit after the
// walk) is still the first meeting, which builds no record.
class FirstMeetings {
 public:
  // True when this query meets `key` first: unmet until now (then noted), or met first by it.
  bool Meet(const BroadphaseIndex& index, const ChunkKey& key) {
    if (index.Unmet(key)) {
      index.NoteMet(key);
      int32_t* kept = keys_[count_++ % kKept];
      kept[0] = key.x, kept[1] = key.y, kept[2] = key.z;
      return true;
    }
    for (uint32_t i = 0; i < std::min(count_, kKept); ++i) {
      if (keys_[i][0] == key.x && keys_[i][1] == key.y && keys_[i][2] == key.z) return true;
    }
    return false;
  }

  // How this query meets chunk `key` for its solid: kKnown when the class table answers (*touch;
  // one load, asked first so that warm chunks pay nothing more), kFirst when the query meets the
  // chunk first (Meet: it goes without the record), kRecord when only the record can tell
  // (BroadphaseIndex::Get).
  enum class Meeting { kKnown, kFirst, kRecord };
  // The table's answer inlines into the walk; the rest, rare once the records are built, does not.
  ABSL_ATTRIBUTE_ALWAYS_INLINE Meeting Classify(const BroadphaseIndex& index, const ChunkKey& key,
                                                bool* touch) {
    if (index.TableKnows(key, kClassSolid, touch)) return Meeting::kKnown;
    return ClassifyUnknown(index, key);
  }
  // The same for a chunk of the world (the walk's InWorld) whose table slot is `slot`.
  ABSL_ATTRIBUTE_ALWAYS_INLINE Meeting Classify(const BroadphaseIndex& index, size_t slot,
                                                const ChunkKey& key, bool* touch) {
    if (index.TableKnowsAt(slot, key, kClassSolid, touch)) return Meeting::kKnown;
    return ClassifyUnknown(index, key);
  }

 private:
  ABSL_ATTRIBUTE_NOINLINE Meeting ClassifyUnknown(const BroadphaseIndex& index,
                                                  const ChunkKey& key) {
    return Meet(index, key) ? Meeting::kFirst : Meeting::kRecord;
  }

  static constexpr uint32_t kKept = 8;
  int32_t keys_[kKept][3];  // the first min(count_, kKept) are set (no ChunkKey: it zero-fills)
  uint32_t count_ = 0;
};

// True when the ray, up to t_end, provably meets no triangle of mesh chunk `key` (a chunk of the
// world), with no voxel generated or loaded: the corners of the cells its stretch through the
// chunk can pass through all lie on one side of the surface (World::ProvenUntouchedSide), and a
// cell whose eight corners do holds no triangle. The proof costs about as much as generating a
// part of a hundred voxels; the mesh (or the broadphase record) it spares generates the chunk and
// parts of its neighbours.
bool StretchWithoutSurface(const World& world, const KdRay& ray, float t_end, const ChunkKey& key);

}  // namespace smooth_walk
}  // namespace voxcol
