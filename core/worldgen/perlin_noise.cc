#include "core/worldgen/perlin_noise.h"

#include <cmath>
#include <numeric>

namespace voxcol {

namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float Lerp(float t, float a, float b) { return a + t * (b - a); }

// Dot product with one of the 12 cube-edge gradient directions, picked by the hash.
float Grad(int hash, float x, float y, float z) {
  int h = hash & 15;
  float u = h < 8 ? x : y;
  float v = h < 4 ? y : (h == 12 || h == 14 ? x : z);
  return ((h & 1) ? -u : u) + ((h & 2) ? -v : v);
}

}  // namespace

PerlinNoise::PerlinNoise(uint64_t seed) {
  std::array<uint8_t, 256> p;
  std::iota(p.begin(), p.end(), 0);
  uint64_t state = seed;
  for (int i = 255; i > 0; --i) std::swap(p[i], p[SplitMix64(state) % uint64_t(i + 1)]);
  for (int i = 0; i < 512; ++i) perm_[i] = p[i & 255];
}

float PerlinNoise::At(float x, float y, float z) const {
  float fx = std::floor(x), fy = std::floor(y), fz = std::floor(z);
  int X = int(fx) & 255, Y = int(fy) & 255, Z = int(fz) & 255;
  x -= fx;
  y -= fy;
  z -= fz;
  float u = Fade(x), v = Fade(y), w = Fade(z);
  int A = perm_[X] + Y, AA = perm_[A] + Z, AB = perm_[A + 1] + Z;
  int B = perm_[X + 1] + Y, BA = perm_[B] + Z, BB = perm_[B + 1] + Z;
  return Lerp(
      w,
      Lerp(v, Lerp(u, Grad(perm_[AA], x, y, z), Grad(perm_[BA], x - 1, y, z)),
           Lerp(u, Grad(perm_[AB], x, y - 1, z), Grad(perm_[BB], x - 1, y - 1, z))),
      Lerp(
          v, Lerp(u, Grad(perm_[AA + 1], x, y, z - 1), Grad(perm_[BA + 1], x - 1, y, z - 1)),
          Lerp(u, Grad(perm_[AB + 1], x, y - 1, z - 1), Grad(perm_[BB + 1], x - 1, y - 1, z - 1))));
}

float PerlinNoise::Fbm(float x, float y, float z, int octaves) const {
  float sum = 0, amplitude = 0.5f, frequency = 2.0f;
  for (int k = 1; k <= octaves; ++k) {
    sum += amplitude * At(x * frequency, y * frequency, z * frequency);
    amplitude *= 0.5f;
    frequency *= 2.0f;
  }
  return sum;
}

}  // namespace voxcol
