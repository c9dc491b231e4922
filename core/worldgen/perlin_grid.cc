// PerlinNoise::AtGrid: the noise of an 8x8x8 grid of points, a row of eight X lanes at a time
// (AVX2 where the CPU has it, else two halves of four with SSE2); PerlinNoise::AtLine: one row of
// eight points along any axis (AVX2 only).
//
// Bit-identical to PerlinNoise::At at every point: each lane performs the same IEEE operations in
// the same order (the project builds with -ffp-contract=off, so neither side fuses a multiply and
// an add), and the per-axis work (floor, fraction, fade) is the scalar code itself, done once per
// coordinate instead of once per point. What is shared between points is only what does not
// depend on the point within its lattice cell: the permutation hashes of the cell's corners.
#include <immintrin.h>

#include <atomic>
#include <cmath>

#include "core/worldgen/perlin_noise.h"

namespace voxcol {

namespace {

constexpr int kN = PerlinNoise::kGrid;

// The per-axis part of At for one coordinate: lattice cell, fraction, fraction - 1 and fade.
struct AxisTerms {
  int cell[kN];
  float frac[kN], frac1[kN], fade[kN];
};

void PrepareAxis(const float* c, AxisTerms* a) {
  for (int i = 0; i < kN; ++i) {
    float f = std::floor(c[i]);
    a->cell[i] = int(f) & 255;
    a->frac[i] = c[i] - f;
    a->frac1[i] = a->frac[i] - 1;
    a->fade[i] = PerlinNoise::Fade(a->frac[i]);
  }
}

// Gradient selection of a hash, as in Grad (perlin_noise.cc): the dot product is
// (sign_u ^ operand[u]) + (sign_v ^ operand[v]) with operands 0 = x, 1 = y, 2 = z.
struct GradCode {
  uint8_t u, v;
  uint32_t sign_u, sign_v;
};
constexpr GradCode MakeGradCode(int h) {
  return {uint8_t(h < 8 ? 0 : 1), uint8_t(h < 4 ? 1 : (h == 12 || h == 14 ? 0 : 2)),
          (h & 1) ? 0x80000000u : 0u, (h & 2) ? 0x80000000u : 0u};
}
constexpr GradCode kGradCodes[16] = {
    MakeGradCode(0),  MakeGradCode(1),  MakeGradCode(2),  MakeGradCode(3),
    MakeGradCode(4),  MakeGradCode(5),  MakeGradCode(6),  MakeGradCode(7),
    MakeGradCode(8),  MakeGradCode(9),  MakeGradCode(10), MakeGradCode(11),
    MakeGradCode(12), MakeGradCode(13), MakeGradCode(14), MakeGradCode(15)};

inline __m128 Grad4(int hash, const __m128 operands[3]) {
  const GradCode& g = kGradCodes[hash & 15];
  __m128 u = _mm_xor_ps(operands[g.u], _mm_castsi128_ps(_mm_set1_epi32(int(g.sign_u))));
  __m128 v = _mm_xor_ps(operands[g.v], _mm_castsi128_ps(_mm_set1_epi32(int(g.sign_v))));
  return _mm_add_ps(u, v);
}

inline __m128 Lerp4(__m128 t, __m128 a, __m128 b) {
  return _mm_add_ps(a, _mm_mul_ps(t, _mm_sub_ps(b, a)));
}

// Corner hashes of one lattice cell, in At's order: (x, y, z) offsets 000, 100, 010, 110, 001,
// 101, 011, 111.
struct CellHashes {
  int x = -1, y = -1, z = -1;
  uint8_t h[8];
};

// Noise of four lanes that all lie in lattice cell `c`: x terms per lane, y and z broadcast.
__m128 Cell4(const CellHashes& c, __m128 x, __m128 x1, __m128 u, float y, float z, float v,
             float w) {
  const __m128 y0 = _mm_set1_ps(y), y1 = _mm_set1_ps(y - 1);
  const __m128 z0 = _mm_set1_ps(z), z1 = _mm_set1_ps(z - 1);
  const __m128 o000[3] = {x, y0, z0}, o100[3] = {x1, y0, z0}, o010[3] = {x, y1, z0},
               o110[3] = {x1, y1, z0}, o001[3] = {x, y0, z1}, o101[3] = {x1, y0, z1},
               o011[3] = {x, y1, z1}, o111[3] = {x1, y1, z1};
  const __m128 vv = _mm_set1_ps(v), ww = _mm_set1_ps(w);
  __m128 a = Lerp4(vv, Lerp4(u, Grad4(c.h[0], o000), Grad4(c.h[1], o100)),
                   Lerp4(u, Grad4(c.h[2], o010), Grad4(c.h[3], o110)));
  __m128 b = Lerp4(vv, Lerp4(u, Grad4(c.h[4], o001), Grad4(c.h[5], o101)),
                   Lerp4(u, Grad4(c.h[6], o011), Grad4(c.h[7], o111)));
  return Lerp4(ww, a, b);
}

// The same with eight lanes (AVX, selected at run time). Only plain adds, subtracts, multiplies
// and bit operations: no FMA is enabled, so the rounding is that of the SSE2 and scalar code.
__attribute__((target("avx2"))) inline __m256 Grad8(int hash, const __m256 operands[3]) {
  const GradCode& g = kGradCodes[hash & 15];
  __m256 u = _mm256_xor_ps(operands[g.u], _mm256_castsi256_ps(_mm256_set1_epi32(int(g.sign_u))));
  __m256 v = _mm256_xor_ps(operands[g.v], _mm256_castsi256_ps(_mm256_set1_epi32(int(g.sign_v))));
  return _mm256_add_ps(u, v);
}

__attribute__((target("avx2"))) inline __m256 Lerp8(__m256 t, __m256 a, __m256 b) {
  return _mm256_add_ps(a, _mm256_mul_ps(t, _mm256_sub_ps(b, a)));
}

__attribute__((target("avx2"))) __m256 Cell8(const CellHashes& c, __m256 x, __m256 x1, __m256 u,
                                             float y, float z, float v, float w) {
  const __m256 y0 = _mm256_set1_ps(y), y1 = _mm256_set1_ps(y - 1);
  const __m256 z0 = _mm256_set1_ps(z), z1 = _mm256_set1_ps(z - 1);
  const __m256 o000[3] = {x, y0, z0}, o100[3] = {x1, y0, z0}, o010[3] = {x, y1, z0},
               o110[3] = {x1, y1, z0}, o001[3] = {x, y0, z1}, o101[3] = {x1, y0, z1},
               o011[3] = {x, y1, z1}, o111[3] = {x1, y1, z1};
  const __m256 vv = _mm256_set1_ps(v), ww = _mm256_set1_ps(w);
  __m256 a = Lerp8(vv, Lerp8(u, Grad8(c.h[0], o000), Grad8(c.h[1], o100)),
                   Lerp8(u, Grad8(c.h[2], o010), Grad8(c.h[3], o110)));
  __m256 b = Lerp8(vv, Lerp8(u, Grad8(c.h[4], o001), Grad8(c.h[5], o101)),
                   Lerp8(u, Grad8(c.h[6], o011), Grad8(c.h[7], o111)));
  return Lerp8(ww, a, b);
}

std::atomic<bool> avx2_allowed{true};

bool UseAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has && avx2_allowed.load(std::memory_order_relaxed);
}

// Hashes of the cell of lane i in row (y, z), from the per-lane cache when its cell is unchanged.
inline const CellHashes& LaneCell(const PerlinNoise& noise, const AxisTerms& ax,
                                  const AxisTerms& ay, const AxisTerms& az, int i, int y, int z,
                                  CellHashes* cache) {
  CellHashes& c = cache[i];
  if (c.x != ax.cell[i] || c.y != ay.cell[y] || c.z != az.cell[z]) {
    c.x = ax.cell[i], c.y = ay.cell[y], c.z = az.cell[z];
    noise.CornerHashes(c.x, c.y, c.z, c.h);
  }
  return c;
}

// A whole row of eight lanes per cell.
__attribute__((target("avx2"))) void GridAvx2(const PerlinNoise& noise, const AxisTerms& ax,
                                              const AxisTerms& ay, const AxisTerms& az,
                                              float* out) {
  CellHashes cache[kN];
  const __m256 x = _mm256_loadu_ps(ax.frac), x1 = _mm256_loadu_ps(ax.frac1);
  const __m256 u = _mm256_loadu_ps(ax.fade);
  const __m256i lane_cell = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ax.cell));
  for (int y = 0; y < kN; ++y)
    for (int z = 0; z < kN; ++z) {
      __m256 result = _mm256_setzero_ps();
      for (int i = 0; i < kN; ++i) {
        if (i > 0 && ax.cell[i] == ax.cell[i - 1]) continue;  // lane done with its cell
        const CellHashes& c = LaneCell(noise, ax, ay, az, i, y, z, cache);
        __m256 n = Cell8(c, x, x1, u, ay.frac[y], az.frac[z], ay.fade[y], az.fade[z]);
        __m256 mask = _mm256_castsi256_ps(_mm256_cmpeq_epi32(lane_cell, _mm256_set1_epi32(c.x)));
        result = _mm256_blendv_ps(result, n, mask);
      }
      _mm256_storeu_ps(out + kN * (z + kN * y), result);
    }
}

// Two halves of four lanes per cell.
void GridSse2(const PerlinNoise& noise, const AxisTerms& ax, const AxisTerms& ay,
              const AxisTerms& az, float* out) {
  CellHashes cache[kN];
  for (int y = 0; y < kN; ++y)
    for (int z = 0; z < kN; ++z) {
      float* row = out + kN * (z + kN * y);
      for (int half = 0; half < kN; half += 4) {
        const __m128 x = _mm_loadu_ps(ax.frac + half), x1 = _mm_loadu_ps(ax.frac1 + half);
        const __m128 u = _mm_loadu_ps(ax.fade + half);
        const __m128i lane_cell = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ax.cell + half));
        __m128 result = _mm_setzero_ps();
        for (int i = half; i < half + 4; ++i) {
          if (i > half && ax.cell[i] == ax.cell[i - 1]) continue;  // lane done with its cell
          const CellHashes& c = LaneCell(noise, ax, ay, az, i, y, z, cache);
          __m128 n = Cell4(c, x, x1, u, ay.frac[y], az.frac[z], ay.fade[y], az.fade[z]);
          __m128 mask = _mm_castsi128_ps(_mm_cmpeq_epi32(lane_cell, _mm_set1_epi32(c.x)));
          result = _mm_or_ps(_mm_and_ps(mask, n), _mm_andnot_ps(mask, result));
        }
        _mm_storeu_ps(row + half, result);
      }
    }
}

// PrepareAxis with eight lanes: _mm256_floor_ps is std::floor for every float (no FP exception
// matters here), and Fade's operations run in Fade's order.
__attribute__((target("avx2"))) void PrepareAxisAvx2(const float* c, AxisTerms* a) {
  const __m256 x = _mm256_loadu_ps(c);
  const __m256 f = _mm256_floor_ps(x);
  const __m256 t = _mm256_sub_ps(x, f);
  const __m256i cell = _mm256_and_si256(_mm256_cvttps_epi32(f), _mm256_set1_epi32(255));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(a->cell), cell);
  _mm256_storeu_ps(a->frac, t);
  _mm256_storeu_ps(a->frac1, _mm256_sub_ps(t, _mm256_set1_ps(1)));
  const __m256 t3 = _mm256_mul_ps(_mm256_mul_ps(t, t), t);
  const __m256 inner = _mm256_add_ps(
      _mm256_mul_ps(t, _mm256_sub_ps(_mm256_mul_ps(t, _mm256_set1_ps(6)), _mm256_set1_ps(15))),
      _mm256_set1_ps(10));
  _mm256_storeu_ps(a->fade, _mm256_mul_ps(t3, inner));
}

// Eight points along `axis` (lane terms `lane`), the other two coordinates fixed: each corner's
// operands and each axis's fade are either the lanes' or one value broadcast, so every lane runs
// At's operations in At's order.
__attribute__((target("avx2"))) void LineAvx2(const PerlinNoise& noise, int axis,
                                              const AxisTerms& lane, const float fixed[3],
                                              float* out) {
  int cell[3];
  __m256 f0[3], f1[3], fade[3];
  for (int a = 0; a < 3; ++a) {
    if (a == axis) {
      cell[a] = 0;
      f0[a] = _mm256_loadu_ps(lane.frac);
      f1[a] = _mm256_loadu_ps(lane.frac1);
      fade[a] = _mm256_loadu_ps(lane.fade);
    } else {
      const float f = std::floor(fixed[a]);
      const float frac = fixed[a] - f;
      cell[a] = int(f) & 255;
      f0[a] = _mm256_set1_ps(frac);
      f1[a] = _mm256_set1_ps(frac - 1);
      fade[a] = _mm256_set1_ps(PerlinNoise::Fade(frac));
    }
  }
  const __m256i lane_cell = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lane.cell));
  __m256 result = _mm256_setzero_ps();
  for (int i = 0; i < kN; ++i) {
    if (i > 0 && lane.cell[i] == lane.cell[i - 1]) continue;  // lanes done with their cell
    cell[axis] = lane.cell[i];
    uint8_t h[8];
    noise.CornerHashes(cell[0], cell[1], cell[2], h);
    const __m256 o[8][3] = {{f0[0], f0[1], f0[2]}, {f1[0], f0[1], f0[2]}, {f0[0], f1[1], f0[2]},
                            {f1[0], f1[1], f0[2]}, {f0[0], f0[1], f1[2]}, {f1[0], f0[1], f1[2]},
                            {f0[0], f1[1], f1[2]}, {f1[0], f1[1], f1[2]}};
    const __m256 a = Lerp8(fade[1], Lerp8(fade[0], Grad8(h[0], o[0]), Grad8(h[1], o[1])),
                           Lerp8(fade[0], Grad8(h[2], o[2]), Grad8(h[3], o[3])));
    const __m256 b = Lerp8(fade[1], Lerp8(fade[0], Grad8(h[4], o[4]), Grad8(h[5], o[5])),
                           Lerp8(fade[0], Grad8(h[6], o[6]), Grad8(h[7], o[7])));
    const __m256 n = Lerp8(fade[2], a, b);
    const __m256 mask =
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(lane_cell, _mm256_set1_epi32(lane.cell[i])));
    result = _mm256_blendv_ps(result, n, mask);
  }
  _mm256_storeu_ps(out, result);
}

}  // namespace

bool PerlinNoise::AtLine(int axis, const float* coords, const float fixed[3], float* out) const {
  if (!UseAvx2()) return false;
  AxisTerms lane;
  PrepareAxisAvx2(coords, &lane);
  LineAvx2(*this, axis, lane, fixed, out);
  return true;
}

void PerlinNoise::CornerHashes(int X, int Y, int Z, uint8_t h[8]) const {
  int A = perm_[X] + Y, AA = perm_[A] + Z, AB = perm_[A + 1] + Z;
  int B = perm_[X + 1] + Y, BA = perm_[B] + Z, BB = perm_[B + 1] + Z;
  h[0] = perm_[AA], h[1] = perm_[BA], h[2] = perm_[AB], h[3] = perm_[BB];
  h[4] = perm_[AA + 1], h[5] = perm_[BA + 1], h[6] = perm_[AB + 1], h[7] = perm_[BB + 1];
}

void PerlinNoise::AllowAvx2ForTesting(bool allowed) { avx2_allowed.store(allowed); }

void PerlinNoise::AtGrid(const float* xs, const float* ys, const float* zs, float* out) const {
  AxisTerms ax, ay, az;
  PrepareAxis(xs, &ax);
  PrepareAxis(ys, &ay);
  PrepareAxis(zs, &az);
  // Cells along X do not depend on the row: the hashes of a row's (at most a few) X cells are
  // recomputed only when the row's Y or Z cell changes.
  if (UseAvx2()) {
    GridAvx2(*this, ax, ay, az, out);
  } else {
    GridSse2(*this, ax, ay, az, out);
  }
}

}  // namespace voxcol
