// Seeded 3D gradient noise after Perlin, "Improving Noise" (SIGGRAPH 2002).
#pragma once

#include <array>
#include <cstdint>

namespace voxcol {

class PerlinNoise {
 public:
  // The permutation is a Fisher-Yates shuffle driven by `seed`, so equal seeds give equal noise.
  explicit PerlinNoise(uint64_t seed);
  // Noise at (x, y, z); roughly in [-1, 1], zero at integer lattice points, C2-continuous.
  float At(float x, float y, float z) const;
  // Sum of `octaves` layers, octave k at frequency 2^k and amplitude 2^-k (k = 1..octaves).
  float Fbm(float x, float y, float z, int octaves) const;

  // Points per axis of AtGrid, and points of AtLine.
  static constexpr int kGrid = 8;
  // out[x + 8 z + 64 y] = At(xs[x], ys[y], zs[z]) for x, y, z in [0, 8), bit-identical to At
  // (perlin_grid.cc; the layout of a chunk's voxels, see LocalIndex).
  void AtGrid(const float* xs, const float* ys, const float* zs, float* out) const;
  // out[i] = At at the point whose coordinate `axis` is coords[i] and whose other two are those
  // of `fixed`, for i in [0, 8), bit-identical to At: a row of points along one axis, eight lanes
  // at once. Needs AVX2: false (and out untouched) where the CPU lacks it or tests turned it off.
  bool AtLine(int axis, const float* coords, const float fixed[3], float* out) const;
  // AtGrid takes eight lanes at a time with AVX2 where the CPU has it; tests turn that off to
  // check the SSE2 path too (and AtLine then declines). Not for concurrent use with AtGrid or
  // AtLine.
  static void AllowAvx2ForTesting(bool allowed);

  // Permutation hashes of the eight corners of lattice cell (X, Y, Z) (each in [0, 256)), in the
  // order At interpolates them: offsets 000, 100, 010, 110, 001, 101, 011, 111.
  void CornerHashes(int X, int Y, int Z, uint8_t h[8]) const;

  // A closed interval.
  struct Range {
    double lo, hi;
  };
  // Bounds of At(x, y, z) over the box lo[a] <= coordinate a <= hi[a] (noise_bounds.cc): every
  // value At returns for a float point of the box lies in the range, float rounding of At
  // included. Conservative (wider than the true range), tight when the box is small next to a
  // lattice cell. Precondition: lo[a] <= hi[a].
  Range RangeOver(const double lo[3], const double hi[3]) const;
  // |At| never exceeds this (each corner term is +-u +-v with |u|, |v| <= 1, and At is a convex
  // combination of them), float rounding included.
  static constexpr double kMaxAbs = 2.0 + 1e-4;

  // Quintic fade 6t^5 - 15t^4 + 10t^3, evaluated exactly as At does.
  static float Fade(float t) { return t * t * t * (t * (t * 6 - 15) + 10); }

 private:
  std::array<uint8_t, 512> perm_;
};

}  // namespace voxcol
