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

// Sphere: the chord through (x, z).
bool SphereSpan(const PosedShape& s, float x, float z, float* lo, float* hi) {
  const Vec3& c = s.pose.translation;
  const float r = s.Radius();
  const float d2 = (x - c.x) * (x - c.x) + (z - c.z) * (z - c.z);
  if (d2 > r * r) return false;
  const float h = std::sqrt(r * r - d2);
  *lo = c.y - h, *hi = c.y + h;
  return true;
}

// Capsule: the union of the two end spheres and the cylinder between them; convex, so take the
// hull of the three spans.
bool CapsuleSpan(const PosedShape& s, const Vec3 segment[2], float x, float z, float* lo,
                 float* hi) {
  const float r = s.Radius();
  const Vec3 &p0 = segment[0], &p1 = segment[1];
  if (p0.x == p1.x && p0.z == p1.z) {
    // Upright (a character): one chord through both end spheres, nothing from the cylinder.
    const float d2 = (x - p0.x) * (x - p0.x) + (z - p0.z) * (z - p0.z);
    if (d2 > r * r) return false;
    const float h = std::sqrt(r * r - d2);
    *lo = std::min(p0.y, p1.y) - h, *hi = std::max(p0.y, p1.y) + h;
    return true;
  }
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

// The part of the vertical line through (x, z) inside the shape: [*lo, *hi]. False when it misses.
// `segment`: a capsule's core segment (PosedShape::CapsuleSegment), computed once per integration.
bool VerticalSpan(const PosedShape& s, const Vec3 segment[2], float x, float z, float* lo,
                  float* hi) {
  const float r = s.Radius();
  switch (s.shape->type) {
    case ShapeType::kSphere:
      return SphereSpan(s, x, z, lo, hi);
    case ShapeType::kCapsule:
      return CapsuleSpan(s, segment, x, z, lo, hi);
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

// Whether the broadphase's water masks (per voxel, dilated by one) have a bit in the box grown by
// a voxel: without one, no voxel the integration reads holds water. Characters walk beside lakes
// in chunks that hold water somewhere; the voxel masks say "dry" without loading a chunk.
bool MayTouchWater(const BroadphaseIndex& index, const Aabb& box) {
  ProbeResult probe;  // collects no chunks or voxels: allocates nothing
  ProbeVoxels(index, ProbeVoxelRange(index.world(), box), ProbeSettings{}, &probe);
  return probe.may_touch_water;
}

// The voxels a water integration reads: the chunks under the shape's bounds (and the layer
// above) loaded up front, so a corrupt record is an error rather than dry land and a voxel read is
// an array lookup, not a world lookup under a lock; and each voxel column's water tops, read once
// for the shape's height range, since many sample lines share a column.
class WaterColumns {
 public:
  WaterColumns(const World& world, const Aabb& bounds)
      : world_(world), vb_(world.voxel_bounds()), h_(world.voxel_size()), inv_h_(1.0f / h_) {
    const IntBox voxels = ProbeVoxelRange(world, bounds);
    lo_key_ = ChunkOf(voxels.min);
    const ChunkKey hi_key = ChunkOf(voxels.max - Int3{1, 1, 1}) + Int3{0, 1, 0};  // + layer above
    span_ = hi_key - lo_key_ + Int3{1, 1, 1};
    cx0_ = int32_t(std::floor(bounds.min.x * inv_h_));
    cz0_ = int32_t(std::floor(bounds.min.z * inv_h_));
    nx_ = int32_t(std::floor(bounds.max.x * inv_h_)) - cx0_ + 1;
    nz_ = int32_t(std::floor(bounds.max.z * inv_h_)) - cz0_ + 1;
    yb0_ = std::max(vb_.min.y, int32_t(std::floor(bounds.min.y * inv_h_)));
    yb1_ = std::min(vb_.max.y - 1, int32_t(std::floor(bounds.max.y * inv_h_)));
    ny_ = yb1_ - yb0_ + 1;
    // Unless the shape is so large that the cache would outgrow the reads it saves.
    cached_ = ny_ > 0 && int64_t(nx_) * nz_ * ny_ <= 4096;
    if (cached_) {
      tops_.resize(size_t(nx_) * nz_ * ny_);
      ready_.assign(size_t(nx_) * nz_, 0);
      walks_.assign(size_t(nx_) * nz_, Walk{});
      tops_data_ = tops_.data();
      ready_data_ = ready_.data();
      walks_data_ = walks_.data();
    }
  }

  // The window's chunks are released when the integration ends (the vector keeps its capacity),
  // so a thread's last query does not keep chunks alive that the world has since replaced.
  ~WaterColumns() { window_.clear(); }
  WaterColumns(const WaterColumns&) = delete;
  WaterColumns& operator=(const WaterColumns&) = delete;

  absl::Status Load() {
    window_.assign(size_t(span_.x) * span_.y * span_.z, nullptr);
    for (int32_t y = 0; y < span_.y; ++y)
      for (int32_t z = 0; z < span_.z; ++z)
        for (int32_t x = 0; x < span_.x; ++x) {
          const ChunkKey key = lo_key_ + Int3{x, y, z};
          if (!world_.chunk_bounds().Contains(key)) continue;
          absl::StatusOr<ChunkPtr> c = world_.LoadChunk(key);
          if (!c.ok()) return c.status();
          window_[(size_t(y) * span_.z + z) * span_.x + x] = *std::move(c);
        }
    window_data_ = window_.data();
    return absl::OkStatus();
  }

  // Dry land (the common case next to lakes, where the masks said "maybe"): no water voxel in
  // the shape's box. Only known with the column cache; otherwise assumes water may be there.
  bool SurelyDry() {
    if (!cached_) return false;
    for (int32_t vz = cz0_; vz < cz0_ + nz_; ++vz)
      for (int32_t vx = cx0_; vx < cx0_ + nx_; ++vx)
        for (int32_t vy = yb0_; vy <= yb1_; ++vy) {
          if (TopAt(vx, vy, vz) != -kInf) return false;
        }
    return true;
  }

  // World Y of the top of the water in voxel (vx, vy, vz), or -inf when it holds no water.
  float TopAt(int32_t vx, int32_t vy, int32_t vz) {
    const float* tops = ColumnTops(vx, vz);
    if (tops == nullptr || vy < yb0_ || vy > yb1_) return WaterTop({vx, vy, vz});
    return tops[vy - yb0_];
  }

  // The water tops of column (vx, vz) over the shape's rows: entry vy - first_row() is
  // TopAt(vx, vy, vz) for vy in [first_row(), last_row()]. Null when the column is not cached.
  const float* ColumnTops(int32_t vx, int32_t vz) {
    const int32_t c = CachedColumn(vx, vz);
    if (c < 0) return nullptr;
    float* tops = tops_data_ + size_t(c) * ny_;
    if (!ready_data_[c]) {
      for (int32_t y = yb0_; y <= yb1_; ++y) tops[y - yb0_] = WaterTop({vx, y, vz});
      ready_data_[c] = 1;
    }
    return tops;
  }
  int32_t first_row() const { return yb0_; }
  int32_t last_row() const { return yb1_; }

  // The top of the water above voxel (vx, vy, vz), which is water to its top (`top`): the walk up
  // the column to the surface, at most 256 voxels. Lines through one column share it: a cached
  // column walks once per start row.
  float SurfaceAbove(int32_t vx, int32_t vy, int32_t vz, float top) {
    const int32_t c = CachedColumn(vx, vz);
    Walk* memo = c < 0 ? nullptr : &walks_data_[c];
    if (memo != nullptr && memo->from == vy) return memo->surface;
    float surface = top;
    for (int32_t up = vy + 1; up < std::min(vb_.max.y, vy + 257); ++up) {
      const float t = TopAt(vx, up, vz);
      if (t == -kInf) break;
      surface = t;
    }
    if (memo != nullptr) *memo = {vy, surface};
    return surface;
  }

  const IntBox& voxel_bounds() const { return vb_; }
  float voxel_size() const { return h_; }
  float inv_voxel_size() const { return inv_h_; }

 private:
  // Index of column (vx, vz) in the column cache, or -1 when it is not cached.
  int32_t CachedColumn(int32_t vx, int32_t vz) const {
    if (!cached_ || vx < cx0_ || vx >= cx0_ + nx_ || vz < cz0_ || vz >= cz0_ + nz_) return -1;
    return (vz - cz0_) * nx_ + (vx - cx0_);
  }

  Voxel VoxelAt(const Int3& v) const {
    if (!vb_.Contains(v)) return Voxel{};
    const Int3 c = ChunkOf(v) - lo_key_;
    if (c.x < 0 || c.y < 0 || c.z < 0 || c.x >= span_.x || c.y >= span_.y || c.z >= span_.z) {
      return world_.GetVoxel(v);  // the walk up to a distant surface
    }
    return window_data_[(size_t(c.y) * span_.z + c.z) * span_.x + c.x]->At(LocalOf(v));
  }

  // A water voxel is filled from its bottom to occupancy / 255 of its height, or to its top when
  // water lies above it.
  float WaterTop(const Int3& v) const {
    const Voxel x = VoxelAt(v);
    if (x.material != kMaterialWater || x.occupancy == 0) return -kInf;
    const Voxel above = VoxelAt(v + Int3{0, 1, 0});
    const float fill = above.material == kMaterialWater ? 1.0f : x.occupancy / 255.0f;
    return (float(v.y) + fill) * h_;
  }

  const World& world_;
  const IntBox vb_;
  const float h_, inv_h_;
  ChunkKey lo_key_;
  Int3 span_;
  int32_t cx0_, cz0_, nx_, nz_, yb0_, yb1_, ny_;
  bool cached_;
  // Thread-local buffers: queries run on worker threads and must not allocate in steady state.
  // Their data, held here: each access to a thread_local goes through its wrapper function.
  struct Walk {
    int32_t from = std::numeric_limits<int32_t>::min();  // start row of the memoized walk
    float surface = 0;
  };
  float* tops_data_ = nullptr;
  Walk* walks_data_ = nullptr;
  uint8_t* ready_data_ = nullptr;
  const ChunkPtr* window_data_ = nullptr;
  static thread_local std::vector<ChunkPtr> window_;
  static thread_local std::vector<float> tops_;
  static thread_local std::vector<uint8_t> ready_;
  static thread_local std::vector<Walk> walks_;
};

thread_local std::vector<ChunkPtr> WaterColumns::window_;
thread_local std::vector<float> WaterColumns::tops_;
thread_local std::vector<uint8_t> WaterColumns::ready_;
thread_local std::vector<WaterColumns::Walk> WaterColumns::walks_;

// Running sums of one integration.
struct WaterSums {
  double total = 0, wet = 0;  // line lengths inside the shape, and under water
  double cx = 0, cy = 0, cz = 0;
  float surface = -kInf;
};

// Adds the vertical line through (x, z): its span inside the shape, intersected with the water of
// its voxel column.
void IntegrateLine(const PosedShape& s, const Vec3 segment[2], float x, float z,
                   WaterColumns& columns, WaterSums* sums, std::vector<ChunkKey>* water_chunks) {
  float lo, hi;
  if (!VerticalSpan(s, segment, x, z, &lo, &hi)) return;
  sums->total += hi - lo;
  const IntBox& vb = columns.voxel_bounds();
  const float h = columns.voxel_size(), inv_h = columns.inv_voxel_size();
  const int32_t vx = int32_t(std::floor(x * inv_h)), vz = int32_t(std::floor(z * inv_h));
  if (vx < vb.min.x || vx >= vb.max.x || vz < vb.min.z || vz >= vb.max.z) return;
  const int32_t y0 = std::max(vb.min.y, int32_t(std::floor(lo * inv_h)));
  const int32_t y1 = std::min(vb.max.y - 1, int32_t(std::floor(hi * inv_h)));
  // The shape's rows lie in the cached rows, but for rounding at their ends.
  const float* tops =
      y0 >= columns.first_row() && y1 <= columns.last_row() ? columns.ColumnTops(vx, vz) : nullptr;
  // The line's wet length and its first moment in y, summed here and added to the whole once.
  double wet = 0, moment_y = 0;
  float surface = sums->surface;
  for (int32_t vy = y0; vy <= y1; ++vy) {
    const Int3 v{vx, vy, vz};
    const float top = tops != nullptr ? tops[vy - columns.first_row()] : columns.TopAt(vx, vy, vz);
    if (top == -kInf) continue;
    const float a = std::max(lo, vy * h), b = std::min(hi, top);
    if (b <= a) continue;
    wet += b - a;
    moment_y += double(a + b) * 0.5 * (b - a);
    float column_top = top;
    // Water goes on above the shape: follow it up to its surface.
    if (vy == y1 && top >= (vy + 1) * h) column_top = columns.SurfaceAbove(vx, vy, vz, top);
    surface = std::max(surface, column_top);
    if (water_chunks && (water_chunks->empty() || water_chunks->back() != ChunkOf(v))) {
      water_chunks->push_back(ChunkOf(v));
    }
  }
  sums->wet += wet;
  sums->cx += double(x) * wet;
  sums->cy += moment_y;
  sums->cz += double(z) * wet;
  sums->surface = surface;
}

}  // namespace

absl::Status IntegrateWater(const BroadphaseIndex& index, const PosedShape& s, WaterContact* out,
                            std::vector<ChunkKey>* water_chunks) {
  *out = {};
  const Aabb bounds = PosedBounds(s);
  if (!MayTouchWater(index, bounds)) return absl::OkStatus();
  WaterColumns columns(index.world(), bounds);
  if (absl::Status st = columns.Load(); !st.ok()) return st;
  if (columns.SurelyDry()) return absl::OkStatus();
  const float dx = (bounds.max.x - bounds.min.x) / kWaterColumns;
  const float dz = (bounds.max.z - bounds.min.z) / kWaterColumns;
  Vec3 segment[2];
  if (s.shape->type == ShapeType::kCapsule) s.CapsuleSegment(&segment[0], &segment[1]);
  WaterSums sums;
  for (int i = 0; i < kWaterColumns; ++i)
    for (int k = 0; k < kWaterColumns; ++k) {
      const float x = bounds.min.x + (i + 0.5f) * dx, z = bounds.min.z + (k + 0.5f) * dz;
      IntegrateLine(s, segment, x, z, columns, &sums, water_chunks);
    }
  if (sums.wet <= 0 || sums.total <= 0) return absl::OkStatus();
  out->in_water = true;
  out->submerged_fraction = float(std::min(1.0, sums.wet / sums.total));
  out->submerged_volume = float(sums.wet * dx * dz);
  out->surface_height = sums.surface;
  const double wet = sums.wet;
  out->center_of_buoyancy = Vec3(float(sums.cx / wet), float(sums.cy / wet), float(sums.cz / wet));
  return absl::OkStatus();
}

}  // namespace voxcol
