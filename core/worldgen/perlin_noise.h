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

 private:
  std::array<uint8_t, 512> perm_;
};

}  // namespace voxcol
