// Seeded random poses and scales shared by the narrowphase tests, plus double-precision helpers
// for the independent oracles.
#pragma once

#include <cmath>
#include <random>

#include "core/geometry/transform.h"

namespace voxcol::testing {

inline constexpr int kCases = 10000;

struct D3 {
  double x = 0, y = 0, z = 0;
};
inline D3 ToD(const Vec3& v) { return {v.x, v.y, v.z}; }
inline D3 operator-(const D3& a, const D3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline D3 operator+(const D3& a, const D3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline D3 operator*(const D3& a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline double DotD(const D3& a, const D3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double LenD(const D3& a) { return std::sqrt(DotD(a, a)); }
inline D3 CrossD(const D3& a, const D3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

class CaseRng {
 public:
  explicit CaseRng(uint32_t seed) : rng_(seed) {}
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  // Scale factor 10^u with u uniform in [-2, 3]: shapes from centimetres to kilometres.
  float Scale() { return std::pow(10.0f, Uniform(-2, 3)); }
  Vec3 InBox(float half) {
    return {Uniform(-half, half), Uniform(-half, half), Uniform(-half, half)};
  }
  Vec3 UnitVector() {
    std::normal_distribution<float> n;
    Vec3 v;
    do v = {n(rng_), n(rng_), n(rng_)};
    while (LengthSq(v) < 1e-6f);
    return Normalize(v);
  }
  // Uniform random rotation: a normalised 4D Gaussian.
  Quat Rotation() {
    std::normal_distribution<float> n;
    Quat q{n(rng_), n(rng_), n(rng_), n(rng_)};
    float len = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    return {q.w / len, q.x / len, q.y / len, q.z / len};
  }
  bool Chance(float p) { return Uniform(0, 1) < p; }

 private:
  std::mt19937 rng_;
};

}  // namespace voxcol::testing
