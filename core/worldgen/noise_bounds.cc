// PerlinNoise::RangeOver: interval bounds of improved Perlin noise over a box.
//
// Derivation. Inside lattice cell (X, Y, Z), with fractions (x, y, z) in [0, 1]^3, At is
//   N = lerp(w, lerp(v, lerp(u, L000, L100), lerp(u, L010, L110)),
//               lerp(v, lerp(u, L001, L101), lerp(u, L011, L111)))
// where u = fade(x), v = fade(y), w = fade(z) and each corner term Lijk = g . (x - i, y - j, z - k)
// is linear in the point: the hash picks g among the 12 cube-edge directions, so Lijk is
// +-a +-b for two of the three offsets (Grad in perlin_noise.cc). Over a box of fractions
// [x0, x1] x [y0, y1] x [z0, z1] inside the cell:
//   - each Lijk lies in the interval of +-a +-b, computed exactly by interval arithmetic (a and b
//     range over [x0 - i, x1 - i] and so on);
//   - fade is increasing on [0, 1] (its derivative 30 t^2 (t - 1)^2 >= 0), so u in [fade(x0),
//     fade(x1)], and likewise v and w;
//   - lerp(t, a, b) = (1 - t) a + t b has non-negative weights for t in [0, 1], so for fixed t its
//     minimum over a in [a0, a1], b in [b0, b1] is (1 - t) a0 + t b0, which is linear in t: the
//     minimum over t in [t0, t1] is at t0 or t1 (the maximum likewise with a1, b1).
// Treating u, v, w and the corner terms as independent only widens the interval (it forgets that
// they share the point), so the result bounds N over the box. A box that crosses cells is the
// union of its pieces in each cell; the hashes are those At uses (CornerHashes of the cell index
// & 255).
//
// Float rounding. At rounds each of its ~40 operations on values below 4 in magnitude (the
// fraction x - floor(x) is exact, except that it may round up to 1 for tiny negative x, where N is
// continuous across the face). The difference from the exact N at the same float point is below
// 1e-5; kRoundingSlack widens every result by ten times that.
#include <algorithm>
#include <cmath>

#include "core/worldgen/perlin_noise.h"

namespace voxcol {
namespace {

using Range = PerlinNoise::Range;

constexpr double kRoundingSlack = 1e-4;
// Boxes spanning more cells than this get the global bound (never for the cave generator's chunks).
constexpr int64_t kMaxCells = 64;

double FadeD(double t) { return t * t * t * (t * (t * 6 - 15) + 10); }

Range Neg(Range r) { return {-r.hi, -r.lo}; }
Range Add(Range a, Range b) { return {a.lo + b.lo, a.hi + b.hi}; }

// Lerp over intervals (see the derivation above); t within [0, 1].
Range LerpR(Range t, Range a, Range b) {
  const double lo = std::min((1 - t.lo) * a.lo + t.lo * b.lo, (1 - t.hi) * a.lo + t.hi * b.lo);
  const double hi = std::max((1 - t.lo) * a.hi + t.lo * b.hi, (1 - t.hi) * a.hi + t.hi * b.hi);
  return {lo, hi};
}

// Grad over intervals of the three offsets: the same choice of operands and signs as Grad.
Range GradR(int hash, const Range op[3]) {
  const int h = hash & 15;
  Range u = h < 8 ? op[0] : op[1];
  Range v = h < 4 ? op[1] : (h == 12 || h == 14 ? op[0] : op[2]);
  if (h & 1) u = Neg(u);
  if (h & 2) v = Neg(v);
  return Add(u, v);
}

// Bounds of N over fractions f[a] (within [0, 1]) of one cell with corner hashes h.
Range CellRange(const uint8_t h[8], const Range f[3]) {
  Range corner[8];
  for (int k = 0; k < 8; ++k) {
    Range op[3];
    for (int a = 0; a < 3; ++a) {
      const double shift = (k >> a) & 1;  // corner offset along axis a (CornerHashes order)
      op[a] = {f[a].lo - shift, f[a].hi - shift};
    }
    corner[k] = GradR(h[k], op);
  }
  const Range u{FadeD(f[0].lo), FadeD(f[0].hi)}, v{FadeD(f[1].lo), FadeD(f[1].hi)},
      w{FadeD(f[2].lo), FadeD(f[2].hi)};
  const Range a = LerpR(v, LerpR(u, corner[0], corner[1]), LerpR(u, corner[2], corner[3]));
  const Range b = LerpR(v, LerpR(u, corner[4], corner[5]), LerpR(u, corner[6], corner[7]));
  return LerpR(w, a, b);
}

}  // namespace

PerlinNoise::Range PerlinNoise::RangeOver(const double lo[3], const double hi[3]) const {
  int64_t first[3], last[3], cells = 1;
  for (int a = 0; a < 3; ++a) {
    first[a] = int64_t(std::floor(lo[a]));
    last[a] = int64_t(std::floor(hi[a]));
    cells *= last[a] - first[a] + 1;
  }
  if (cells > kMaxCells) return {-kMaxAbs, kMaxAbs};
  Range out{HUGE_VAL, -HUGE_VAL};
  for (int64_t cz = first[2]; cz <= last[2]; ++cz)
    for (int64_t cy = first[1]; cy <= last[1]; ++cy)
      for (int64_t cx = first[0]; cx <= last[0]; ++cx) {
        const int64_t cell[3] = {cx, cy, cz};
        Range f[3];
        for (int a = 0; a < 3; ++a)
          f[a] = {std::max(lo[a] - double(cell[a]), 0.0), std::min(hi[a] - double(cell[a]), 1.0)};
        uint8_t h[8];
        CornerHashes(int(cx & 255), int(cy & 255), int(cz & 255), h);
        const Range r = CellRange(h, f);
        out = {std::min(out.lo, r.lo), std::max(out.hi, r.hi)};
      }
  return {std::max(out.lo - kRoundingSlack, -kMaxAbs), std::min(out.hi + kRoundingSlack, kMaxAbs)};
}

}  // namespace voxcol
