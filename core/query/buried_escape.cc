#include "core/query/buried_escape.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/query/raycast.h"

namespace voxcol::terrain {
namespace {

enum class CellSide { kOpen, kSolid, kMixed };

// The marching-cubes cell that holds `p`: its corners are the centres of the voxels lo + {0, 1}^3
// around p.
Int3 CellAt(const World& world, const Vec3& p) {
  const float inv = 1.0f / world.voxel_size();
  return {int32_t(std::floor(p.x * inv - 0.5f)), int32_t(std::floor(p.y * inv - 0.5f)),
          int32_t(std::floor(p.z * inv - 0.5f))};
}

// When the 8 corner samples of cell `lo` are all on one side, no surface crosses the cell and
// every point in it is on that side.
CellSide SideOfCell(const World& world, const Int3& lo) {
  const Int3 hi = lo + Int3{1, 1, 1};
  const bool inside = world.voxel_bounds().Contains(lo) && world.voxel_bounds().Contains(hi);
  // The corners lie in one to eight chunks: each loaded once, not a world look-up per voxel.
  // Outside the world, or where a chunk does not load, the world's own read decides.
  const ChunkKey lo_key = ChunkOf(lo), hi_key = ChunkOf(hi);
  ChunkPtr chunks[8];  // by which axes step into the next chunk: bit 0 x, 1 y, 2 z
  int solid = 0;
  for (int c = 0; c < 8; ++c) {
    const Int3 v = lo + Int3{c & 1, c >> 1 & 1, c >> 2};
    const int next = (c & 1 && hi_key.x != lo_key.x) | (c & 2 && hi_key.y != lo_key.y) << 1 |
                     (c & 4 && hi_key.z != lo_key.z) << 2;
    if (inside && chunks[next] == nullptr) {
      absl::StatusOr<ChunkPtr> got = world.LoadChunk(ChunkOf(v));
      if (got.ok()) chunks[next] = *std::move(got);
    }
    solid += IsSolid(chunks[next] != nullptr ? chunks[next]->At(LocalOf(v)) : world.GetVoxel(v));
  }
  if (solid == 0) return CellSide::kOpen;
  return solid == 8 ? CellSide::kSolid : CellSide::kMixed;
}

// SideOfCell, remembered for the rest of a move (in its MoveScope's memo): its casts and contact
// queries ask about the same few cells around the character again and again.
CellSide SideOfCellInMove(const BroadphaseIndex& index, const Vec3& p) {
  const Int3 lo = CellAt(index.world(), p);
  const MoveScope* move = MoveScope::Active(index);
  if (move == nullptr) return SideOfCell(index.world(), lo);
  if (const int known = move->RecallCell(lo); known >= 0) return CellSide(known);
  const CellSide side = SideOfCell(index.world(), lo);
  move->RememberCell(lo, uint8_t(side));
  return side;
}

// The shape touches no surface (BuriedEscape's precondition), so it lies wholly on one side, and
// any of its points in a cell no surface crosses tells which. The centre first; when the surface
// crosses its cell, the shape's top (shapes resting on the ground clear it first). kMixed: both
// cells are crossed.
CellSide SideOfShape(const BroadphaseIndex& index, const PosedShape& s) {
  const CellSide centre = SideOfCellInMove(index, s.pose.translation);
  return centre != CellSide::kMixed ? centre : SideOfCellInMove(index, s.Support({0, 1, 0}));
}

}  // namespace

bool BuriedEscape(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& s,
                  float* depth, Vec3* normal, absl::Status* status, QueryStats* stats) {
  const World& world = index.world();
  const Vec3& centre = s.pose.translation;
  const CellSide cell = SideOfShape(index, s);
  if (cell == CellSide::kOpen) return false;
  const Aabb bounds = world.world_bounds();
  thread_local std::vector<RaycastHit> hits;  // queries must not allocate in steady state
  // The crossings along axis direction `axis` (+x, -x, +y, -y, +z, -z) up to `length`; false on a
  // load error (then *status is set).
  auto cast = [&](int axis, float length, Vec3* d) {
    *d = Vec3();
    (*d)[axis / 2] = axis % 2 == 0 ? 1.0f : -1.0f;
    const float room = axis % 2 == 0 ? bounds.max[axis / 2] - centre[axis / 2]
                                     : centre[axis / 2] - bounds.min[axis / 2];
    hits.clear();
    if (room <= 0) return true;
    RaycastSmoothAll(index, cache, RaycastInput{centre, *d, std::min(room, length)},
                     RaycastSettings{}, &hits, stats);
    if (!hits.empty() && !hits[0].load_status.ok()) {
      *status = hits[0].load_status;
      return false;
    }
    return true;
  };
  // Both cells crossed by the surface: short rays from the centre find its side, one whose first
  // crossing enters the solid proves the centre is in open space.
  const float h = world.voxel_size();
  bool inside = cell == CellSide::kSolid;
  Vec3 d;
  // The short ray that decided `inside` found the first crossing of its axis already: the long
  // pass below reuses it instead of casting that axis again.
  int decided_axis = -1;
  RaycastHit decided_hit;
  // Down first: shapes near the surface are mostly above ground, and there one short ray decides.
  constexpr int kOrder[6] = {3, 2, 0, 1, 4, 5};
  for (int k = 0; k < 6 && !inside; ++k) {
    const int axis = kOrder[k];
    if (!cast(axis, 2 * h, &d)) return false;
    if (hits.empty()) continue;
    if (hits[0].front_face) return false;
    inside = true;
    decided_axis = axis;
    decided_hit = hits[0];
  }
  // The way out: the nearest exit along the six axes (or, still undecided, the side).
  float best = std::numeric_limits<float>::infinity();
  Vec3 best_dir;
  for (int axis = 0; axis < 6; ++axis) {
    if (axis == decided_axis) {
      d = Vec3();
      d[axis / 2] = axis % 2 == 0 ? 1.0f : -1.0f;
      hits.assign(1, decided_hit);
    } else if (!cast(axis, 64.0f * h, &d)) {
      return false;
    }
    if (hits.empty()) continue;
    if (hits[0].front_face) {
      if (!inside) return false;  // still undecided: this ray decides
      continue;
    }
    inside = true;  // the first crossing leaves the solid
    const float reach = Dot(-d, s.Support(-d) - centre);
    if (hits[0].distance + reach < best) best = hits[0].distance + reach, best_dir = d;
  }
  // A cell the surface crosses, and no ray met the surface within reach: the voxel that holds
  // the centre decides.
  if (!inside && !IsSolid(world.GetVoxel(world.VoxelAt(centre)))) return false;
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
