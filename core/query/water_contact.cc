#include "core/query/water_contact.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/broadphase/probe.h"
#include "core/narrowphase/gjk_raycast.h"
#include "core/query/terrain_triangles.h"

namespace voxcol {

namespace {

using terrain::PosedBounds;

constexpr float kInf = std::numeric_limits<float>::infinity();
// Columns per axis of the water integration (12 x 12 vertical lines through the shape).
constexpr int kWaterColumns = 12;

// The part of the vertical line through (x, z) inside the shape: [*lo, *hi]. False when it misses.
bool VerticalSpan(const PosedShape& s, float x, float z, float* lo, float* hi) {
  const Vec3& c = s.pose.translation;
  const float r = s.Radius();
  switch (s.shape->type) {
    case ShapeType::kSphere: {
      const float d2 = (x - c.x) * (x - c.x) + (z - c.z) * (z - c.z);
      if (d2 > r * r) return false;
      const float h = std::sqrt(r * r - d2);
      *lo = c.y - h, *hi = c.y + h;
      return true;
    }
    case ShapeType::kCapsule: {
      // Union of the two end spheres and the cylinder between them; convex, so take the hull.
      Vec3 p0, p1;
      s.CapsuleSegment(&p0, &p1);
      float a = kInf, b = -kInf;
      for (const Vec3& p : {p0, p1}) {
        const float d2 = (x - p.x) * (x - p.x) + (z - p.z) * (z - p.z);
        if (d2 <= r * r) {
          const float h = std::sqrt(r * r - d2);
          a = std::min(a, p.y - h), b = std::max(b, p.y + h);
        }
      }
      const Vec3 u = p1 - p0;
      const float len2 = LengthSq(u);
      if (len2 > 0) {
        // Points L(y) = (x, y, z) with distance to the axis line <= r: |w - (w.u/|u|^2) u|^2 <= r^2
        // for w = L(y) - p0 = w0 + y e_y, a quadratic in y; then the axis parameter in [0, 1].
        const Vec3 w0{x - p0.x, -p0.y, z - p0.z};
        const Vec3 ey{0, 1, 0};
        const Vec3 q0 = w0 - u * (Dot(w0, u) / len2), q1 = ey - u * (u.y / len2);
        const float A = LengthSq(q1), B = 2 * Dot(q0, q1), C = LengthSq(q0) - r * r;
        if (A > 1e-12f) {
          const float disc = B * B - 4 * A * C;
          if (disc >= 0) {
            const float sq = std::sqrt(disc);
            float y0 = (-B - sq) / (2 * A), y1 = (-B + sq) / (2 * A);
            // Axis parameter s(y) = (w0.u + y u.y) / |u|^2 must lie in [0, 1].
            if (u.y != 0) {
              float s0 = -Dot(w0, u) / u.y, s1 = (len2 - Dot(w0, u)) / u.y;
              if (s0 > s1) std::swap(s0, s1);
              y0 = std::max(y0, s0), y1 = std::min(y1, s1);
            } else {
              const float sp = Dot(w0, u) / len2;
              if (sp < 0 || sp > 1) y1 = y0 - 1;
            }
            if (y0 <= y1) a = std::min(a, y0), b = std::max(b, y1);
          }
        }
      }
      if (a > b) return false;
      *lo = a, *hi = b;
      return true;
    }
    case ShapeType::kBox:
      if (r == 0) {
        // Slabs in the box frame.
        const Vec3 o = s.pose.ApplyInverse({x, 0, z});
        const Vec3 d = InverseRotate(s.pose.rotation, {0, 1, 0});
        float t0 = -kInf, t1 = kInf;
        for (int a = 0; a < 3; ++a) {
          const float h = s.shape->half_extents[a];
          if (std::fabs(d[a]) < 1e-12f) {
            if (std::fabs(o[a]) > h) return false;
            continue;
          }
          float ta = (-h - o[a]) / d[a], tb = (h - o[a]) / d[a];
          if (ta > tb) std::swap(ta, tb);
          t0 = std::max(t0, ta), t1 = std::min(t1, tb);
        }
        if (t0 > t1) return false;
        *lo = t0, *hi = t1;
        return true;
      }
      [[fallthrough]];
    default: {
      // Rounded boxes and hulls: cast a point down and up through the shape.
      const Aabb b = PosedBounds(s);
      const float span = b.max.y - b.min.y + 2.0f;
      const Vec3 origin{0, 0, 0};
      const ConvexShape point = MakeConvexHull(&origin, 1);
      const CastResult down = GjkRaycast({&point, {{}, {x, b.max.y + 1.0f, z}}}, {0, -span, 0}, s);
      if (!down.hit) return false;
      const CastResult up = GjkRaycast({&point, {{}, {x, b.min.y - 1.0f, z}}}, {0, span, 0}, s);
      if (!up.hit) return false;
      *hi = b.max.y + 1.0f - down.fraction * span;
      *lo = b.min.y - 1.0f + up.fraction * span;
      return *lo <= *hi;
    }
  }
}

bool MayTouchWater(const BroadphaseIndex& index, const Aabb& box) {
  const World& world = index.world();
  const IntBox voxels = ProbeVoxelRange(world, box);
  if (voxels.Empty()) return false;
  const ChunkKey lo = ChunkOf(voxels.min), hi = ChunkOf(voxels.max - Int3{1, 1, 1});
  BroadphaseIndex::ReadScope scope(index);
  for (int32_t y = lo.y; y <= hi.y; ++y)
    for (int32_t z = lo.z; z <= hi.z; ++z)
      for (int32_t x = lo.x; x <= hi.x; ++x) {
        if (index.Get({x, y, z}, scope).MayTouch(kClassWater)) return true;
      }
  return false;
}

}  // namespace

// Integrates the shape's volume under water over kWaterColumns^2 vertical lines: each line's span
// inside the shape is intersected with the water of its voxel column. `water_chunks`, if set,
// receives the chunks whose water the shape reaches.
absl::Status IntegrateWater(const BroadphaseIndex& index, const PosedShape& s, WaterContact* out,
                            std::vector<ChunkKey>* water_chunks) {
  *out = {};
  const World& world = index.world();
  const Aabb bounds = PosedBounds(s);
  if (!MayTouchWater(index, bounds)) return absl::OkStatus();
  // Load what the columns read first, so a corrupt record is an error rather than dry land, and
  // keep the chunks at hand: a voxel read is then an array lookup, not a world lookup under a lock.
  const IntBox voxels = ProbeVoxelRange(world, bounds);
  const ChunkKey lo_key = ChunkOf(voxels.min);
  const ChunkKey hi_key = ChunkOf(voxels.max - Int3{1, 1, 1}) + Int3{0, 1, 0};  // + the layer above
  const Int3 span = hi_key - lo_key + Int3{1, 1, 1};
  std::vector<ChunkPtr> window(size_t(span.x) * span.y * span.z);
  for (int32_t y = 0; y < span.y; ++y)
    for (int32_t z = 0; z < span.z; ++z)
      for (int32_t x = 0; x < span.x; ++x) {
        const ChunkKey key = lo_key + Int3{x, y, z};
        if (!world.chunk_bounds().Contains(key)) continue;
        absl::StatusOr<ChunkPtr> c = world.LoadChunk(key);
        if (!c.ok()) return c.status();
        window[(size_t(y) * span.z + z) * span.x + x] = *std::move(c);
      }
  const IntBox vb = world.voxel_bounds();
  auto voxel_at = [&](const Int3& v) -> Voxel {
    if (!vb.Contains(v)) return Voxel{};
    const Int3 c = ChunkOf(v) - lo_key;
    if (c.x < 0 || c.y < 0 || c.z < 0 || c.x >= span.x || c.y >= span.y || c.z >= span.z) {
      return world.GetVoxel(v);  // the walk up to a distant surface
    }
    return window[(size_t(c.y) * span.z + c.z) * span.x + c.x]->At(LocalOf(v));
  };
  const float h = world.voxel_size(), inv_h = 1.0f / h;
  const float dx = (bounds.max.x - bounds.min.x) / kWaterColumns;
  const float dz = (bounds.max.z - bounds.min.z) / kWaterColumns;
  double total = 0, wet = 0;
  double cx = 0, cy = 0, cz = 0;
  float surface = -kInf;
  auto water_top = [&](const Int3& v) -> float {  // top of the water in voxel v, or -inf
    const Voxel x = voxel_at(v);
    if (x.material != kMaterialWater || x.occupancy == 0) return -kInf;
    const Voxel above = voxel_at(v + Int3{0, 1, 0});
    const float fill = above.material == kMaterialWater ? 1.0f : x.occupancy / 255.0f;
    return (float(v.y) + fill) * h;
  };
  // Many sample lines share a voxel column (a character-sized shape spans a few): read each
  // column's water once, for the shape's height range, unless the shape is so large that the
  // cache would outgrow the reads it saves.
  const int32_t cx0 = int32_t(std::floor(bounds.min.x * inv_h)),
                cz0 = int32_t(std::floor(bounds.min.z * inv_h));
  const int32_t nx = int32_t(std::floor(bounds.max.x * inv_h)) - cx0 + 1;
  const int32_t nz = int32_t(std::floor(bounds.max.z * inv_h)) - cz0 + 1;
  const int32_t yb0 = std::max(vb.min.y, int32_t(std::floor(bounds.min.y * inv_h)));
  const int32_t yb1 = std::min(vb.max.y - 1, int32_t(std::floor(bounds.max.y * inv_h)));
  const int32_t ny = yb1 - yb0 + 1;
  const bool cached = ny > 0 && int64_t(nx) * nz * ny <= 4096;
  thread_local std::vector<float> tops;
  thread_local std::vector<uint8_t> ready;
  if (cached) {
    tops.resize(size_t(nx) * nz * ny);
    ready.assign(size_t(nx) * nz, 0);
  }
  auto top_at = [&](int32_t vx, int32_t vy, int32_t vz) -> float {
    const int32_t c = (vz - cz0) * nx + (vx - cx0);
    if (!cached || vy < yb0 || vy > yb1 || vx < cx0 || vx >= cx0 + nx || vz < cz0 ||
        vz >= cz0 + nz) {
      return water_top({vx, vy, vz});
    }
    if (!ready[c]) {
      for (int32_t y = yb0; y <= yb1; ++y)
        tops[size_t(c) * ny + (y - yb0)] = water_top({vx, y, vz});
      ready[c] = 1;
    }
    return tops[size_t(c) * ny + (vy - yb0)];
  };
  if (cached) {
    // Dry land (the common case next to lakes, where the masks said "maybe"): no water voxel in
    // the shape's box, no integration.
    bool any = false;
    for (int32_t vz = cz0; vz < cz0 + nz && !any; ++vz)
      for (int32_t vx = cx0; vx < cx0 + nx && !any; ++vx)
        for (int32_t vy = yb0; vy <= yb1 && !any; ++vy) any = top_at(vx, vy, vz) != -kInf;
    if (!any) return absl::OkStatus();
  }
  for (int i = 0; i < kWaterColumns; ++i)
    for (int k = 0; k < kWaterColumns; ++k) {
      const float x = bounds.min.x + (i + 0.5f) * dx, z = bounds.min.z + (k + 0.5f) * dz;
      float lo, hi;
      if (!VerticalSpan(s, x, z, &lo, &hi)) continue;
      total += hi - lo;
      const int32_t vx = int32_t(std::floor(x * inv_h)), vz = int32_t(std::floor(z * inv_h));
      if (vx < vb.min.x || vx >= vb.max.x || vz < vb.min.z || vz >= vb.max.z) continue;
      const int32_t y0 = std::max(vb.min.y, int32_t(std::floor(lo * inv_h)));
      const int32_t y1 = std::min(vb.max.y - 1, int32_t(std::floor(hi * inv_h)));
      for (int32_t vy = y0; vy <= y1; ++vy) {
        const Int3 v{vx, vy, vz};
        const float top = top_at(vx, vy, vz);
        if (top == -kInf) continue;
        const float a = std::max(lo, vy * h), b = std::min(hi, top);
        if (b <= a) continue;
        wet += b - a;
        cx += double(x) * (b - a), cy += double(a + b) * 0.5 * (b - a), cz += double(z) * (b - a);
        float column_top = top;
        if (vy == y1 && top >= (vy + 1) * h) {
          // Water goes on above the shape: follow it up to its surface (bounded walk).
          for (int32_t up = vy + 1; up < std::min(vb.max.y, vy + 257); ++up) {
            const float t = top_at(vx, up, vz);
            if (t == -kInf) break;
            column_top = t;
          }
        }
        surface = std::max(surface, column_top);
        if (water_chunks && (water_chunks->empty() || water_chunks->back() != ChunkOf(v))) {
          water_chunks->push_back(ChunkOf(v));
        }
      }
    }
  if (wet <= 0 || total <= 0) return absl::OkStatus();
  out->in_water = true;
  out->submerged_fraction = float(std::min(1.0, wet / total));
  out->submerged_volume = float(wet * dx * dz);
  out->surface_height = surface;
  out->center_of_buoyancy = Vec3(float(cx / wet), float(cy / wet), float(cz / wet));
  return absl::OkStatus();
}

}  // namespace voxcol
