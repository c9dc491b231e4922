// Small value types for 3D math: float vectors, integer voxel coordinates, boxes, rotations.
#pragma once

#include <cmath>
#include <cstdint>

namespace voxcol {

struct Vec3 {
  float x = 0, y = 0, z = 0;

  constexpr Vec3() = default;
  constexpr Vec3(float x_, float y_, float z_) : x(x_), y(y_), z(z_) {}

  constexpr float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr Vec3 operator+(const Vec3& o) const { return {x + o.x, y + o.y, z + o.z}; }
  constexpr Vec3 operator-(const Vec3& o) const { return {x - o.x, y - o.y, z - o.z}; }
  constexpr Vec3 operator-() const { return {-x, -y, -z}; }
  constexpr Vec3 operator*(float s) const { return {x * s, y * s, z * s}; }
  constexpr Vec3 operator/(float s) const { return {x / s, y / s, z / s}; }
  Vec3& operator+=(const Vec3& o) {
    x += o.x;
    y += o.y;
    z += o.z;
    return *this;
  }
  Vec3& operator-=(const Vec3& o) {
    x -= o.x;
    y -= o.y;
    z -= o.z;
    return *this;
  }
  Vec3& operator*=(float s) {
    x *= s;
    y *= s;
    z *= s;
    return *this;
  }
  constexpr bool operator==(const Vec3& o) const { return x == o.x && y == o.y && z == o.z; }
  constexpr bool operator!=(const Vec3& o) const { return !(*this == o); }
};

constexpr Vec3 operator*(float s, const Vec3& v) { return v * s; }
constexpr float Dot(const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 Cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
constexpr Vec3 Mul(const Vec3& a, const Vec3& b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
constexpr Vec3 Min(const Vec3& a, const Vec3& b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z};
}
constexpr Vec3 Max(const Vec3& a, const Vec3& b) {
  return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
inline float LengthSq(const Vec3& v) { return Dot(v, v); }
inline float Length(const Vec3& v) { return std::sqrt(Dot(v, v)); }
// Returns v / |v|. Precondition: |v| > 0.
inline Vec3 Normalize(const Vec3& v) { return v * (1.0f / Length(v)); }
inline bool IsFinite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Integer coordinates: voxel indices or chunk keys.
struct Int3 {
  int32_t x = 0, y = 0, z = 0;

  constexpr Int3() = default;
  constexpr Int3(int32_t x_, int32_t y_, int32_t z_) : x(x_), y(y_), z(z_) {}
  constexpr int32_t operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  int32_t& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr Int3 operator+(const Int3& o) const { return {x + o.x, y + o.y, z + o.z}; }
  constexpr Int3 operator-(const Int3& o) const { return {x - o.x, y - o.y, z - o.z}; }
  constexpr bool operator==(const Int3& o) const { return x == o.x && y == o.y && z == o.z; }
  constexpr bool operator!=(const Int3& o) const { return !(*this == o); }
  constexpr bool operator<(const Int3& o) const {
    return x != o.x ? x < o.x : (y != o.y ? y < o.y : z < o.z);
  }
  template <typename H>
  friend H AbslHashValue(H h, const Int3& v) {
    return H::combine(std::move(h), v.x, v.y, v.z);
  }
};

// Component i of v without a branch (Vec3 and Int3 are three packed values); operator[] is
// constexpr and branches, which mispredicts when i varies per ray.
inline float Component(const Vec3& v, int i) { return (&v.x)[i]; }
inline int32_t Component(const Int3& v, int i) { return (&v.x)[i]; }

// int32_t(std::floor(x)) for -2^31 <= x < 2^31 in four instructions (x86-64 before SSE4.1 has no
// rounding instruction, so std::floor inlines to a dozen): truncate, then step down when that
// rounded up. Exact: float(i) is exact whenever i can differ from x (|x| < 2^24); a larger float
// is an integer. (The step down is unsigned, so that out-of-range input, whose conversion x86
// answers with INT32_MIN, wraps rather than overflows.)
inline int32_t FloorToInt(float x) {
  const int32_t i = int32_t(x);
  return int32_t(uint32_t(i) - uint32_t(float(i) > x));
}

// Floor division and modulo that stay correct for negative numerators (d > 0).
constexpr int32_t FloorDiv(int32_t n, int32_t d) { return n >= 0 ? n / d : -((-n + d - 1) / d); }
constexpr int32_t FloorMod(int32_t n, int32_t d) { return n - FloorDiv(n, d) * d; }

// Axis-aligned box with inclusive min and max corners.
struct Aabb {
  Vec3 min, max;

  constexpr Vec3 Center() const { return (min + max) * 0.5f; }
  constexpr Vec3 Extent() const { return max - min; }
  constexpr bool Contains(const Vec3& p) const {
    return p.x >= min.x && p.y >= min.y && p.z >= min.z && p.x <= max.x && p.y <= max.y &&
           p.z <= max.z;
  }
  constexpr bool Overlaps(const Aabb& o) const {
    return min.x <= o.max.x && max.x >= o.min.x && min.y <= o.max.y && max.y >= o.min.y &&
           min.z <= o.max.z && max.z >= o.min.z;
  }
  constexpr bool ContainsBox(const Aabb& o) const { return Contains(o.min) && Contains(o.max); }
};

// Box of integer cells [min, max) (max exclusive), e.g. a voxel or chunk range.
struct IntBox {
  Int3 min, max;

  constexpr bool Empty() const { return max.x <= min.x || max.y <= min.y || max.z <= min.z; }
  constexpr int64_t Volume() const {
    return Empty() ? 0 : int64_t(max.x - min.x) * (max.y - min.y) * (max.z - min.z);
  }
  constexpr bool Contains(const Int3& p) const {
    return p.x >= min.x && p.y >= min.y && p.z >= min.z && p.x < max.x && p.y < max.y &&
           p.z < max.z;
  }
  constexpr bool ContainsBox(const IntBox& b) const {
    return b.min.x >= min.x && b.min.y >= min.y && b.min.z >= min.z && b.max.x <= max.x &&
           b.max.y <= max.y && b.max.z <= max.z;
  }
  constexpr IntBox Intersect(const IntBox& o) const {
    return {{min.x > o.min.x ? min.x : o.min.x, min.y > o.min.y ? min.y : o.min.y,
             min.z > o.min.z ? min.z : o.min.z},
            {max.x < o.max.x ? max.x : o.max.x, max.y < o.max.y ? max.y : o.max.y,
             max.z < o.max.z ? max.z : o.max.z}};
  }
};

// Unit quaternion (w + xi + yj + zk) for orientations.
struct Quat {
  float w = 1, x = 0, y = 0, z = 0;

  static Quat FromAxisAngle(const Vec3& axis, float radians) {
    Vec3 a = Normalize(axis);
    float s = std::sin(radians * 0.5f);
    return {std::cos(radians * 0.5f), a.x * s, a.y * s, a.z * s};
  }
  Quat Conjugate() const { return {w, -x, -y, -z}; }
  // Rotates v by this quaternion (assumed unit length).
  Vec3 Rotate(const Vec3& v) const {
    Vec3 q{x, y, z};
    Vec3 t = 2.0f * Cross(q, v);
    return v + w * t + Cross(q, t);
  }
};

}  // namespace voxcol
