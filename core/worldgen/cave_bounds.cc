// CaveGenerator::ProvenUniform: which chunks are open air, open sea or deep rock, from interval
// bounds of the generator's fields over the chunk, without generating its voxels.
//
// The fields (cave_generator.h) are built from three Perlin noises; PerlinNoise::RangeOver bounds
// each over a box of noise coordinates (derivation in noise_bounds.cc). Over the voxel centres of
// a box of voxels:
//   - the noise coordinates: the generator computes them per axis with float operations that are
//     monotone in the voxel index (int to float, + 0.5, * positive constant, + constant), so the
//     coordinates of every voxel lie between those of the first and the last voxel, computed with
//     the same operations;
//   - fBm = sum of 2^-k N(2^k P / L): the sum of the scaled ranges;
//   - continent = y - H - A fBm: interval arithmetic;
//   - cave = (|N_A| + |N_B| - R) / (s g): interval arithmetic (|.| of an interval containing 0
//     starts at 0);
//   - density = SmoothMax(continent, -cave, k), which is non-decreasing in both arguments (its
//     partial derivatives are 1 - h and h, with h in [0, 1]), so its range is [SmoothMax(lows),
//     SmoothMax(highs)]; and SmoothMax(a, b) >= max(a, b) >= a, so a lower bound of the continent
//     alone bounds the density below.
// The generator evaluates these in float; each bound is widened by FieldSlack, well above the
// rounding of a few dozen float operations on values of that magnitude.
//
// A voxel of the generator (MakeVoxel) is
//   - air or water when occupancy rounds to 0, which holds for density >= 0.5 (fill is then
//     clamped to 0): water where continent > 0 and y < sea level, air otherwise;
//   - rock at occupancy 255 when density <= -0.5 (fill 1) and continent <= -5 (depth >= 5).
#include <algorithm>
#include <cmath>

#include "core/worldgen/cave_generator.h"

namespace voxcol {
namespace {

using Range = PerlinNoise::Range;

// As in cave_generator.cc.
constexpr float kNoiseGradient = 1.5f;

// SmoothMax of cave_generator.cc in double.
double SmoothMaxD(double a, double b, double k) {
  const double h = std::clamp(0.5 + 0.5 * (b - a) / k, 0.0, 1.0);
  return a + h * (b - a) + k * h * (1.0 - h);
}

Range Scale(Range r, double k) {
  return k >= 0 ? Range{r.lo * k, r.hi * k} : Range{r.hi * k, r.lo * k};
}

Range Abs(Range r) {
  if (r.lo >= 0) return r;
  if (r.hi <= 0) return {-r.hi, -r.lo};
  return {0, std::max(-r.lo, r.hi)};
}

// Slack for the float evaluation of a field whose terms are at most `magnitude` in size: float
// keeps 24 bits, so a few dozen roundings stay below 1e-5 of the magnitude; plus an absolute part
// for the noise (already widened by RangeOver) passed through divisions and sums.
double FieldSlack(double magnitude) { return 1e-3 + 1e-5 * magnitude; }

}  // namespace

CaveGenerator::FieldBounds CaveGenerator::BoundFields(const Int3& first, const Int3& last,
                                                      bool with_caves) const {
  // Voxel-centre coordinates of the first and last voxel per axis, as Fields computes them.
  float p0[3], p1[3];
  for (int a = 0; a < 3; ++a) {
    p0[a] = float(first[a]) + 0.5f;
    p1[a] = float(last[a]) + 0.5f;
  }
  const float inv = 1.0f / params_.continent_wavelength;
  Range fbm{0, 0};
  float amplitude = 0.5f, frequency = 2.0f;
  for (int k = 1; k <= 4; ++k) {
    double lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = (p0[a] * inv) * frequency;
      hi[a] = (p1[a] * inv) * frequency;
    }
    const Range n = Scale(continent_noise_.RangeOver(lo, hi), amplitude);
    fbm = {fbm.lo + n.lo, fbm.hi + n.hi};
    amplitude *= 0.5f;
    frequency *= 2.0f;
  }
  const Range lift = Scale(fbm, params_.continent_amplitude);
  const double h0 = double(p0[1] - params_.base_height), h1 = double(p1[1] - params_.base_height);
  const double slack = FieldSlack(std::max(std::fabs(h0), std::fabs(h1)) +
                                  std::max(std::fabs(lift.lo), std::fabs(lift.hi)));
  FieldBounds out;
  out.continent = {h0 - lift.hi - slack, h1 - lift.lo + slack};
  out.density = {out.continent.lo, HUGE_VAL};
  if (!with_caves) return out;
  const float s = params_.tunnel_scale;
  static constexpr float kOffset[3] = {31.7f, 11.3f, -23.9f};  // tunnel B, as in Cave
  double alo[3], ahi[3], blo[3], bhi[3];
  for (int a = 0; a < 3; ++a) {
    alo[a] = p0[a] * s;
    ahi[a] = p1[a] * s;
    blo[a] = p0[a] * s + kOffset[a];
    bhi[a] = p1[a] * s + kOffset[a];
  }
  const Range sum = [&] {
    const Range a = Abs(tunnel_a_.RangeOver(alo, ahi)), b = Abs(tunnel_b_.RangeOver(blo, bhi));
    return Range{a.lo + b.lo, a.hi + b.hi};
  }();
  const double scale = double(s * kNoiseGradient);
  const double radius = params_.tunnel_radius;
  const double cave_slack = FieldSlack((sum.hi + std::fabs(radius)) / scale);
  const Range cave{(sum.lo - radius) / scale - cave_slack, (sum.hi - radius) / scale + cave_slack};
  const double k = params_.blend;
  const double dslack =
      FieldSlack(std::max(std::fabs(out.continent.lo), std::fabs(out.continent.hi)) +
                 std::max(std::fabs(cave.lo), std::fabs(cave.hi)) + k);
  out.density = {SmoothMaxD(out.continent.lo, -cave.hi, k) - dslack,
                 SmoothMaxD(out.continent.hi, -cave.lo, k) + dslack};
  return out;
}

bool CaveGenerator::SkyUniform(const IntBox& box, Voxel* fill) const {
  // Generate's own shortcut, mirrored exactly: water below the sea level inside the world.
  if (box.min.y >= params_.sea_level) {
    *fill = Voxel{};
    return true;
  }
  *fill = Voxel{kMaterialWater, 255};
  return box.max.y <= params_.sea_level && bounds_.ContainsBox(box);
}

bool CaveGenerator::FieldUniform(const IntBox& box, Voxel* fill) const {
  const Int3 first = box.min, last = box.max - Int3{1, 1, 1};
  const bool inside = bounds_.ContainsBox(box);
  // The continent alone may prove open sky or sea (density >= continent); else add the caves.
  FieldBounds f = BoundFields(first, last, false);
  if (f.density.lo < 0.5) f = BoundFields(first, last, true);
  if (f.density.lo >= 0.5) {                                    // no voxel has occupancy
    if (first.y >= params_.sea_level || f.continent.hi <= 0) {  // dry: sky, or inside a tunnel
      *fill = Voxel{};
      return true;
    }
    if (last.y < params_.sea_level && f.continent.lo > 0 && inside) {  // all open sea
      *fill = Voxel{kMaterialWater, 255};
      return true;
    }
    return false;
  }
  if (f.density.hi <= -0.5 && f.continent.hi <= -5.0 && inside) {
    *fill = Voxel{kMaterialRock, 255};
    return true;
  }
  return false;
}

bool CaveGenerator::FieldSide(const IntBox& box, bool* solid) const {
  // MakeVoxel: occupancy = round(255 (0.5 - density)) clamped, and any occupancy above 0 gets a
  // solid material, so IsSolid is occupancy >= 128. Density >= kMargin gives at most 127.25
  // before rounding, <= -kMargin at least 127.75: the margin dwarfs the rounding of those two
  // float operations, and the bounds include the fields' own rounding.
  constexpr double kMargin = 1e-3;
  const Int3 first = box.min, last = box.max - Int3{1, 1, 1};
  FieldBounds f = BoundFields(first, last, false);
  if (f.density.lo < kMargin) f = BoundFields(first, last, true);
  if (f.density.lo >= kMargin) {
    *solid = false;
    return true;
  }
  // Outside the world box Generate writes open voxels only.
  if (f.density.hi <= -kMargin && bounds_.ContainsBox(box)) {
    *solid = true;
    return true;
  }
  return false;
}

bool CaveGenerator::BoundsHold() const {
  return params_.tunnel_scale > 0 && params_.blend > 0 && params_.continent_wavelength > 0;
}

int32_t CaveGenerator::SkySplit(const IntBox& box) const {
  // AboveHills holds from some chunk row up. Below it Generate evaluates the fields, above it
  // fills the sky.
  for (int32_t cy = ChunkOf(box.min).y; cy * kChunkSize < box.max.y; ++cy) {
    if (AboveHills(ChunkOrigin({0, cy, 0}))) return std::max(cy * kChunkSize, box.min.y);
  }
  return box.max.y;
}

bool CaveGenerator::ProvenSide(const IntBox& voxels, bool* solid) const {
  if (voxels.Empty() || !BoundsHold()) return false;
  IntBox low = voxels;
  low.max.y = SkySplit(voxels);
  if (low.Empty()) {  // sky: air and water
    *solid = false;
    return true;
  }
  return FieldSide(low, solid) && (low.max.y == voxels.max.y || !*solid);
}

bool CaveGenerator::ProvenUniform(const IntBox& voxels, Voxel* fill) const {
  if (voxels.Empty() || !BoundsHold()) return false;
  IntBox low = voxels, high = voxels;
  low.max.y = high.min.y = SkySplit(voxels);
  Voxel a, b;
  if (high.Empty()) return FieldUniform(low, fill);
  if (low.Empty()) return SkyUniform(high, fill);
  if (!FieldUniform(low, &a) || !SkyUniform(high, &b) || a != b) return false;
  *fill = a;
  return true;
}

}  // namespace voxcol
